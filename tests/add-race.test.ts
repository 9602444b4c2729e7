/**
 * `add <folder>` copies exactly what it listed (issue 26, round 10, High 1): a folder someone else can write — an
 * agent's project — may change between add's listing and its copy. The round's agent swapped `data/` (a parent folder)
 * for a link to the hub's home, or `prompts/guide.md` for a link to `master.key`, when add opened its first file, and
 * the installed plugin held the real keys. Here the change is made deterministic: `addPlugin`'s `listed` seam runs
 * right after the listing, before the first file is copied. Every variant must refuse the whole add, naming what
 * changed, and leave nothing in the plugins folder.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import {
  appendFileSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { addPlugin } from "../src/cli/add.js";
import { homePaths } from "../src/common/paths.js";

const secret = "SECRET-master-key-0123456789abcdef\n";

/** A hub home, a stand-in for its secrets outside the plugin, and an agent-written plugin folder `fixtures`. */
function setup() {
  const h = homePaths(tempDir("aa-addrace-home-"));
  const base = tempDir("aa-addrace-");
  const keys = join(base, "home");
  mkdirSync(keys);
  writeFileSync(join(keys, "master.key"), secret);
  writeFileSync(join(keys, "config.json"), '{"owner": "SECRET-owner"}\n');
  const src = join(base, "fixtures");
  mkdirSync(join(src, "data"), { recursive: true });
  mkdirSync(join(src, "prompts"));
  writeFileSync(join(src, "agent.ts"), "export default {};\n");
  writeFileSync(join(src, "data", "master.key"), "not-a-real-key\n");
  writeFileSync(join(src, "data", "config.json"), '{"fixture": true}\n');
  writeFileSync(join(src, "prompts", "guide.md"), "Follow the house style.\n");
  return { h, base, keys, src };
}

const changed = (file: string, what: string) =>
  `${file} changed between add's listing and its copy (${what}); nothing was installed — let nothing write to the folder while you add it`;

/** Runs add with `swap` between listing and copying; it must refuse with `message` and leave no plugin and no copy. */
function refused(s: ReturnType<typeof setup>, swap: () => void, message: string, label: string) {
  assert.throws(() => addPlugin(s.h, s.src, false, "en", swap), { message }, label);
  assert.deepEqual(existsSync(s.h.plugins) ? readdirSync(s.h.plugins) : [], [], `${label}: nothing installed, no temporary copy left`);
}

test("add refuses a parent folder swapped for a link between listing and copy (the round's tool-plugin case)", () => {
  const s = setup();
  refused(s, () => {
    renameSync(join(s.src, "data"), join(s.src, ".data-real"));
    symlinkSync(s.keys, join(s.src, "data"));
  }, changed(join(s.src, "data"), "it is a link now"), "data/ -> the home");
});

test("add refuses a file swapped for a link to a secret between listing and copy (the round's declarative case)", () => {
  const s = setup();
  refused(s, () => {
    symlinkSync(join(s.keys, "master.key"), join(s.src, "prompts", ".g"));
    renameSync(join(s.src, "prompts", ".g"), join(s.src, "prompts", "guide.md"));
  }, changed(join(s.src, "prompts", "guide.md"), "it is a link now"), "guide.md -> master.key");
});

test("add refuses a hard link put in a listed file's place between listing and copy", () => {
  const s = setup();
  refused(s, () => {
    linkSync(join(s.keys, "master.key"), join(s.src, "prompts", ".g"));
    renameSync(join(s.src, "prompts", ".g"), join(s.src, "prompts", "guide.md"));
  }, changed(join(s.src, "prompts", "guide.md"), "something else is there now"), "guide.md = a hard link of master.key");
});

test("add refuses the other forms of the change: the folder itself or a folder replaced, a FIFO, a file gone or grown", () => {
  // The named folder swapped for a link to a look-alike folder (same names, the home's bytes).
  let s = setup();
  const lookalike = join(s.base, "lookalike");
  execFileSync("cp", ["-a", s.src, lookalike]);
  writeFileSync(join(lookalike, "data", "master.key"), secret);
  refused(s, () => {
    renameSync(s.src, join(s.base, "fixtures-real"));
    symlinkSync(lookalike, s.src);
  }, changed(s.src, "something else is there now"), "the folder named -> a look-alike");

  // A folder replaced by another real folder holding the same names (no link anywhere).
  s = setup();
  refused(s, () => {
    renameSync(join(s.src, "data"), join(s.src, ".data-real"));
    mkdirSync(join(s.src, "data"));
    writeFileSync(join(s.src, "data", "master.key"), secret);
    writeFileSync(join(s.src, "data", "config.json"), "{}\n");
  }, changed(join(s.src, "data"), "something else is there now"), "data/ replaced by another folder");

  // A FIFO in a file's place (copyFileSync would wait on it for ever).
  s = setup();
  refused(s, () => {
    rmSync(join(s.src, "prompts", "guide.md"));
    execFileSync("mkfifo", [join(s.src, "prompts", "guide.md")]);
  }, changed(join(s.src, "prompts", "guide.md"), "something else is there now"), "guide.md -> a FIFO");

  s = setup();
  refused(s, () => rmSync(join(s.src, "data", "config.json")), changed(join(s.src, "data", "config.json"), "it is gone"), "config.json removed");

  // Grown after the listing: the size limits were checked on the listing, so the copy holds to it.
  s = setup();
  refused(s, () => appendFileSync(join(s.src, "prompts", "guide.md"), "more\n"), changed(join(s.src, "prompts", "guide.md"), "its size changed"), "guide.md grown");

  // Nothing changed: the seam itself changes nothing, and the copy is the folder's.
  s = setup();
  assert.match(addPlugin(s.h, s.src, false, "en", () => {}), /^installed plugin fixtures in /);
  const installed = join(s.h.plugins, "fixtures");
  assert.deepEqual([readFileSync(join(installed, "data", "master.key"), "utf8"), readFileSync(join(installed, "prompts", "guide.md"), "utf8")],
    ["not-a-real-key\n", "Follow the house style.\n"]);
});

test("add <local git repository> shares no file with it: the objects come through git's transport, not as hard links", () => {
  // git clones a local path by hard-linking (or copying) the files of its objects folder: the installed plugin's
  // history would then be the same files the repository's writer keeps writing (an agent changing what `git log`,
  // `git diff` or a later checkout there shows after the owner looked), and a file-level copy of a folder someone else
  // writes is the race above. `--no-local` makes git read the objects and send them as a pack, written anew.
  const s = setup();
  for (const args of [["init", "-q"], ["add", "."], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "plugin"]]) execFileSync("git", args, { cwd: s.src });
  const inodes = (dir: string): Set<bigint> => {
    const out = new Set<bigint>();
    for (const f of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (f.isFile()) out.add(lstatSync(join(f.parentPath, f.name), { bigint: true }).ino);
    }
    return out;
  };
  const before = inodes(join(s.src, ".git", "objects"));
  assert.match(addPlugin(s.h, s.src, false, "en"), /^installed plugin fixtures in /);
  const installed = join(s.h.plugins, "fixtures");
  assert.deepEqual([...inodes(join(installed, ".git", "objects"))].filter((i) => before.has(i)), [], "no object file shared with the source");
  assert.equal(readFileSync(join(installed, "data", "master.key"), "utf8"), "not-a-real-key\n");
});

test("add under a real writer flipping a folder and a link as fast as it can: every install holds the folder's own bytes, or add refuses", async () => {
  // Not a test of timing: whichever moment the flip lands on, the outcome must be one of the two. A process of its own
  // exchanges data/ (the folder) and a link to the keys atomically (renameat2 RENAME_EXCHANGE) in a loop, so the
  // listing too may meet the link at any step — what the walk through folder descriptors is for.
  const s = setup();
  const fixture = ["not-a-real-key\n", '{"fixture": true}\n', "Follow the house style.\n"];
  for (let i = 0; i < 20; i++) writeFileSync(join(s.src, `pad${String(i).padStart(2, "0")}.txt`), "x".repeat(4096));
  symlinkSync(s.keys, join(s.src, ".alt"));
  const flipper = spawn("python3", ["-c", [
    "import ctypes, os, sys",
    "libc = ctypes.CDLL(None, use_errno=True)",
    "a, b = (os.path.join(sys.argv[1], n).encode() for n in ('data', '.alt'))",
    "print('ready', flush=True)",
    "while True:",
    "    if libc.renameat2(-100, a, -100, b, 2) != 0: sys.exit('renameat2: errno %d' % ctypes.get_errno())",
  ].join("\n"), s.src], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    await new Promise((ok) => flipper.stdout.once("data", ok));
    const outcomes = { installed: 0, refused: 0 };
    for (let i = 0; i < 40; i++) {
      try {
        addPlugin(s.h, s.src, false, "en");
      } catch (e) {
        assert.match((e as Error).message, / changed between add's listing and its copy | is not a file, folder or link|^copying /, `round ${i}`);
        assert.deepEqual(readdirSync(s.h.plugins), [], `round ${i}: nothing left after the refusal`);
        outcomes.refused++;
        continue;
      }
      // The copy's own files (a link is copied as a link, not followed: the loaders refuse one leading out).
      const installed = join(s.h.plugins, "fixtures");
      const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
        const full = join(dir, d.name);
        return d.isDirectory() ? files(full) : d.isFile() ? [full] : [];
      });
      for (const f of files(installed)) {
        if (!f.includes("pad")) assert.ok([...fixture, "export default {};\n"].includes(readFileSync(f, "utf8")), `round ${i}: ${f} holds something the folder did not`);
      }
      outcomes.installed++;
      rmSync(installed, { recursive: true });
    }
    assert.equal(outcomes.installed + outcomes.refused, 40);
  } finally {
    flipper.kill("SIGKILL");
  }
});
