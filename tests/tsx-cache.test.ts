/**
 * Issue 26 round 11, F3: the hub made tsx's compile cache `<tmpdir>/tsx-<uid>` with mkdirSync(recursive), which takes a
 * folder another local user made first (0777) as is — every TypeScript plugin the hub compiled was then written where
 * that user reads and changes it. A TypeScript plugin now loads only when that folder is the hub's own: a folder (no
 * link), of this uid, writable by no one else (then made 0700); otherwise it is refused, saying what is wrong and how
 * to fix it. A real loader and
 * the real example plugin, with a private temp folder as TMPDIR.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, chownSync, lstatSync, mkdirSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { PluginLoader } from "../src/plugins/code.js";
import { engineDir } from "../src/common/paths.js";

const uid = process.geteuid!();
const entry = join(engineDir, "examples", "plugins", "hello-channel", "channel.ts");

/** Loads the example channel with `<tmp>/tsx-<uid>` as `prepare` left it; the refusal's message, or null when it loaded. */
async function loadWith(tmp: string, prepare: (cache: string) => void): Promise<string | null> {
  const cache = join(tmp, `tsx-${uid}`);
  rmSync(cache, { recursive: true, force: true });
  prepare(cache);
  const before = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  try {
    await new PluginLoader([{ dir: join(engineDir, "examples", "plugins"), origin: "serve" }], "en").loadModule("channel", "hello-channel");
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  }
}

test("issue 26 r11 F3 (reported case): tsx's cache folder made by someone else first — 0777, or a link to another folder — refuses a TypeScript plugin, saying why and the fix; the hub's own 0700 one loads it", async () => {
  const tmp = realpathSync(tempDir("aa-tsx-tmp-"));
  try {
    const cache = join(tmp, `tsx-${uid}`);
    const fix = `Remove it (rm -rf ${cache}) as its owner or as root; the hub makes it again, its own, mode 0700`;
    const lead = `${entry} was not loaded: tsx's compile cache ${cache}, where the hub writes its compiled TypeScript plugins,`;
    assert.equal(await loadWith(tmp, (c) => {
      mkdirSync(c);
      chmodSync(c, 0o777);
    }), `${lead} has mode 0777: others can write it — anyone who can write it reads and changes what the hub compiles. ${fix}`);
    assert.equal(await loadWith(tmp, (c) => {
      mkdirSync(c);
      chmodSync(c, 0o1770);
    }), `${lead} has mode 01770: others can write it — anyone who can write it reads and changes what the hub compiles. ${fix}`);
    if (uid === 0) {
      // Another user's (chown needs root; no useradd: uid 65534 is nobody's).
      assert.equal(await loadWith(tmp, (c) => {
        mkdirSync(c, { mode: 0o700 });
        chownSync(c, 65534, 65534);
      }), `${lead} belongs to another user (uid 65534) — anyone who can write it reads and changes what the hub compiles. ${fix}`);
    }
    const elsewhere = join(tmp, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o700 });
    assert.equal(await loadWith(tmp, (c) => symlinkSync(elsewhere, c)), `${lead} is not a folder of its own (a link or a file) — anyone who can write it reads and changes what the hub compiles. ${fix}`);
    // Missing: made, the hub's own, 0700, and the plugin loads; the hub's own that others may read (tsx's own 0755
    // under umask 022): made 0700, and the plugin loads.
    for (const prepare of [() => {}, (c: string) => {
      mkdirSync(c);
      chmodSync(c, 0o755);
    }]) {
      assert.equal(await loadWith(tmp, prepare), null);
      const st = lstatSync(cache);
      assert.deepEqual([st.isDirectory(), st.uid, st.mode & 0o7777], [true, uid, 0o700]);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("issue 26 round 41, F41b-1 (reported case: an agent's tsconfig.json in the folder serve or doctor was started in): a TypeScript plugin's imports are never steered by a tsconfig of the working folder", { skip: process.platform === "win32" && "POSIX paths" }, async () => {
  const { execFileSync } = await import("node:child_process");
  const { existsSync, writeFileSync } = await import("node:fs");
  const planted = realpathSync(tempDir("aa-tsconfig-cwd-"));
  try {
    const marker = join(planted, "PWNED");
    mkdirSync(join(planted, "lib"));
    writeFileSync(join(planted, "tsconfig.json"), JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { "agent-autoloop/sdk": ["./lib/sdk-shim.ts"] } } }));
    writeFileSync(join(planted, "lib", "sdk-shim.ts"), `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "loaded " + process.pid);\nexport * from ${JSON.stringify(join(engineDir, "dist", "src", "sdk", "index.js"))};\n`);
    // The engine as installed (dist), started in the planted folder, as `serve` or `doctor` there would be.
    const script = `import { PluginLoader } from ${JSON.stringify(join(engineDir, "dist", "src", "plugins", "code.js"))};
const mod = await new PluginLoader([{ dir: ${JSON.stringify(join(engineDir, "examples", "plugins"))}, origin: "serve" }], "en").loadModule("channel", "hello-channel");
console.log(typeof mod.default);`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: planted, encoding: "utf8", env: { ...process.env, TMPDIR: planted } });
    assert.equal(out.trim(), "function", "the real plugin loaded");
    assert.equal(existsSync(marker), false, "the planted module was not loaded");
  } finally {
    rmSync(planted, { recursive: true, force: true });
  }
});
