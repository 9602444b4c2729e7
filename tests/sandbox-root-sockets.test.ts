/**
 * Issue 26 round 12, F12-6: a plugin sandbox's root was the host's `/` read-only with only `/tmp`, `/run` and the homes
 * emptied, and a unix socket on a file system is reachable from any network namespace: with no bind at all, a
 * sandboxed plugin — and the review sandbox, meant to give an agent-written plugin no host socket — connected to
 * LXD's socket under `/var/snap`, MySQL's under `/var/lib` and a service's under `/srv`. The kind closed: the root
 * shows the system folders only (src/tools/sandbox-root.ts), and a socket in what it shows (`/etc`, an install on PATH
 * outside the homes) is covered. Real unix socket listeners in the host's places, real bubblewrap, real plugins.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { accessSync, constants, existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { homedir } from "node:os";
import { hostFixture, nodePlugin, probeBwrap, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { tempDir } from "./helpers.js";
import { pathInstalls, rootArgs, sandboxRootFolders, shownByRoot, socketsShown } from "../src/tools/sandbox-root.js";

const bwrapOk = (await probeBwrap("bwrap")).ok;

/** Whether this process may make a folder in `dir` (root may in /var/lib, /srv, /opt, /etc; anyone in /var/tmp). */
function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A listener on a unix socket at `path` (its folders made), counting the connections it took. */
async function listener(path: string): Promise<{ server: Server; taken: () => number }> {
  mkdirSync(join(path, ".."), { recursive: true });
  let n = 0;
  const server = createServer((s) => {
    n++;
    s.end();
  });
  await new Promise<void>((done, fail) => server.once("error", fail).listen(path, done));
  return { server, taken: () => n };
}

/**
 * A node plugin that reads each of `files` (text or the error's code), connects to each of `paths` and answers what
 * happened to each (`connected` or the error's code):
 * a call's result, or — asked for its tools — the description of its one tool (what the review sandbox runs).
 */
function prober(paths: string[], files: string[]): string {
  return nodePlugin(`
    const out = {};
    for (const p of ${JSON.stringify(files)}) { try { out[p] = require("node:fs").readFileSync(p, "utf8"); } catch (e) { out[p] = e.code; } }
    let left = ${paths.length};
    const done = () => {
      if (--left > 0) return;
      const text = JSON.stringify(out);
      const result = req.method === "tools/list" ? { tools: [{ name: "probe", description: text, inputSchema: { type: "object" } }] } : { content: text };
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result }) + "\\n");
    };
    for (const p of ${JSON.stringify(paths)}) {
      const s = require("node:net").connect(p);
      s.on("connect", () => { out[p] = "connected"; s.destroy(); done(); });
      s.on("error", (e) => { out[p] = e.code; done(); });
    }
    return undefined;`);
}

/**
 * Runs `main` as the sandboxed plugin "boxed" (a call) and as the untrusted "untrusted" (its tool list, in the review
 * sandbox), each with the manifest lines `extra`, and checks that both saw `want`.
 */
async function probedBoth(f: ReturnType<typeof hostFixture>, main: string, want: Record<string, string>, extra = ""): Promise<void> {
  writePlugin(f.root, "boxed", syncManifest("boxed", "node", ["main.js"], `${extra}\n[sandbox]\n\n${toolToml("probe")}`), { "main.js": main });
  writePlugin(f.root, "untrusted", syncManifest("untrusted", "node", ["main.js"], extra), { "main.js": main });
  f.registry.rescan();
  const r = await f.host.call("boxed.probe", {}, { sessionKey: "s" });
  assert.equal(r.status, "ok", JSON.stringify(r));
  assert.deepEqual(JSON.parse((r as { result: { content: string } }).result.content), want, "the sandboxed plugin");
  const listed = await f.host.tools("untrusted");
  assert.ok(listed.ok, JSON.stringify(listed));
  assert.deepEqual(JSON.parse(listed.tools[0]!.tool.description ?? ""), want, "the review sandbox");
}

test("F12-6: with no bind, neither a sandboxed plugin nor the review sandbox reaches a host unix socket outside the system folders (/var/lib, /srv, /opt, /var/tmp); one in /etc or in an install on PATH is covered", { skip: !bwrapOk && "bubblewrap cannot make a sandbox here" }, async () => {
  const tag = `aa-f126-${randomBytes(4).toString("hex")}`;
  // Places the old root showed; those this user can make a folder in (all of them as root, /var/tmp otherwise).
  const outside = ["/var/lib", "/srv", "/opt", "/var/tmp"].filter(writable).map((d) => join(d, tag));
  const covered = ["/etc"].filter(writable).map((d) => join(d, tag));
  // An install on the plugin's PATH outside the system folders and the homes: shown, its socket covered.
  const install = ["/opt", "/srv"].find(writable);
  const made = [...outside, ...covered, ...(install ? [join(install, `${tag}-tool`)] : [])];
  const socketsOutside = outside.map((d, i) => join(d, ...(i === 1 ? ["a", "b", "c"] : []), "ctl.sock"));
  const socketsCovered = [...covered.map((d) => join(d, "ctl.sock")), ...(install ? [join(install, `${tag}-tool`, "run", "ctl.sock")] : [])];
  const listeners = await Promise.all([...socketsOutside, ...socketsCovered].map(listener));
  const env = { ...process.env };
  const notes: string[] = [];
  if (install) {
    const bin = join(install, `${tag}-tool`, "bin");
    mkdirSync(bin, { recursive: true });
    notes.push(join(bin, "..", "share", "note"));
    mkdirSync(join(bin, "..", "share"));
    writeFileSync(notes[0]!, "the install is shown\n");
    env.PATH = `${bin}:${process.env.PATH}`;
  }
  const f = hostFixture({ env });
  try {
    const paths = [...socketsOutside, ...socketsCovered];
    const want = Object.fromEntries([...notes.map((p) => [p, "the install is shown\n"]), ...socketsOutside.map((p) => [p, "ENOENT"]), ...socketsCovered.map((p) => [p, "ECONNREFUSED"])]);
    await probedBoth(f, prober(paths, notes), want);
    assert.deepEqual(listeners.map((l) => l.taken()), listeners.map(() => 0), "no listener took a connection");
  } finally {
    await f.close();
    for (const l of listeners) l.server.close();
    for (const d of made) rmSync(d, { recursive: true, force: true });
  }
});

test("F12-6: what the root shows — the system folders (links kept), /var with its links only; PATH installs outside them with their parent, never a whole home or top-level folder, none in /tmp, /run or a socket folder", () => {
  const args = rootArgs(true);
  const pairs = (flag: string) => args.flatMap((a, i) => (a === flag ? [[args[i + 1], args[i + 2]].join(" ")] : []));
  const expectBound = sandboxRootFolders.filter((f) => existsSync(f) && !lstatSync(f).isSymbolicLink()).map((f) => `${f} ${f}`);
  assert.deepEqual(pairs("--ro-bind"), expectBound);
  assert.deepEqual(pairs("--symlink"), [
    ...sandboxRootFolders.filter((f) => existsSync(f) && lstatSync(f).isSymbolicLink()).map((f) => `${readlinkSync(f)} ${f}`),
    ...readdirSync("/var").filter((n) => n !== "tmp" && lstatSync(`/var/${n}`).isSymbolicLink()).map((n) => `${readlinkSync(`/var/${n}`)} /var/${n}`),
  ]);
  assert.deepEqual(args.slice(-2), ["--dir", "/var/tmp"], "a read-only root: an empty /var/tmp");
  assert.deepEqual(rootArgs(false).slice(-2), ["--tmpfs", "/var/tmp"]);
  assert.equal(args.includes("/srv") || args.includes("/var/lib") || args.includes("/opt") || args.includes("/home"), false);

  // A home may lie in /tmp (its installs are shown); an install outside the homes is looked for in /var/tmp, which
  // anyone may write and the root does not show.
  const top = realpathSync(tempDir("aa-f126-installs-"));
  const home = join(top, "home");
  const elsewhere = join("/var/tmp", `aa-f126-${randomBytes(4).toString("hex")}`);
  const made = ["home/.pyenv/shims", "home/bin", "opt/node/bin", "hub/bin"].map((p) => join(top, p));
  for (const d of [...made, join(elsewhere, "node", "bin")]) mkdirSync(d, { recursive: true });
  try {
    const path = ["/usr/bin", "/bin", join(home, ".pyenv", "shims"), join(home, "bin"), join(elsewhere, "node", "bin"), join(top, "hub", "bin"), home, "/srv", "/opt", "relative/bin", join(top, "missing")].join(":");
    assert.deepEqual(pathInstalls(path, [home], [join(top, "hub")]), [join(elsewhere, "node"), join(home, "bin"), join(home, ".pyenv")].sort((a, b) => a.length - b.length));
    // Outside the homes, nothing in the sandbox's own /tmp, nor where services make sockets.
    assert.deepEqual(pathInstalls([join(top, "opt", "node", "bin"), "/run", "/var/run"].join(":"), [], []), []);
    assert.equal(shownByRoot("/usr/lib"), true);
    assert.equal(shownByRoot("/usr/local/var/run"), false);
    assert.equal(shownByRoot("/var/lib/mysql"), false);
  } finally {
    rmSync(top, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  }
});

test("F12-6: the look for sockets in what the root shows finds them at any depth, skips the homes' installs, stops at its bound", async () => {
  const top = realpathSync(tempDir("aa-f126-look-"));
  const deep = join(top, "opt", "tool", "a", "b", "c", "d", "x.sock");
  const inHome = join(top, "home", ".nvm", "y.sock");
  const servers: Server[] = [];
  try {
    for (const p of [deep, inHome]) servers.push((await listener(p)).server);
    const found = socketsShown([join(top, "opt", "tool"), join(top, "home", ".nvm")], [join(top, "home")]);
    assert.deepEqual(found.sockets.filter((p) => p.startsWith(top)), [deep]);
    assert.deepEqual(found.unlooked, []);
    assert.deepEqual(socketsShown([join(top, "opt", "tool")], [], 0).unlooked, [join(top, "opt", "tool")], "an install past the bound is named, not shown");
    // Each install is looked through on its own, /etc first: a large one (npm's node_modules/.bin on the hub's PATH)
    // cannot use up the look of another (two full runs found a socket uncovered that way), and is not shown itself.
    const big = join(top, "big");
    mkdirSync(big);
    const etcEntriesNow = (await import("node:child_process")).execFileSync("find", ["/etc", "-mindepth", "1"], { encoding: "utf8" }).split("\n").filter(Boolean).length;
    for (let i = 0; i < etcEntriesNow + 500; i += 1) writeFileSync(join(big, `f${i}`), "");
    const small = socketsShown([big, join(top, "opt", "tool")], [], etcEntriesNow + 100);
    assert.deepEqual(small.sockets.filter((p) => p.startsWith(top)), [deep], "each install has its own look: a large one before does not use it up");
    assert.deepEqual(small.unlooked, [big], "the large one is named (the sandbox does not show it)");
  } finally {
    for (const s of servers) s.close();
    rmSync(top, { recursive: true, force: true });
  }
});

test("F13-3 (round 13, reported case): a plugin's own PATH in its manifest ([entry_point.env]) does not decide what its sandbox shows — a folder of the home it names stays hidden, in the sandbox and in the review sandbox", { skip: !bwrapOk && "bubblewrap cannot make a sandbox here" }, async () => {
  const secretDir = join(homedir(), `aa-f133-${randomBytes(4).toString("hex")}`);
  mkdirSync(secretDir);
  const secret = join(secretDir, "id_ed25519");
  writeFileSync(secret, "PRIVATE KEY\n");
  const f = hostFixture({ env: { ...process.env } });
  try {
    const env = `[entry_point.env]\nPATH = ${JSON.stringify(`${secret}:${secretDir}:/usr/bin:/bin`)}\n`;
    const want = { [secret]: "ENOENT", "/nonexistent-aa-f133.sock": "ENOENT" };
    await probedBoth(f, prober(["/nonexistent-aa-f133.sock"], [secret]), want, env);
  } finally {
    await f.close();
    rmSync(secretDir, { recursive: true, force: true });
  }
});

test("F27b-1 (round 27, reported case): PATH folders in the home (~/.local/bin, ~/.cargo/bin) show the parts their layout names, not their parent: ~/.cargo/credentials.toml, ~/.local/share/keyrings and a socket in ~/.local/state stay hidden, in the sandbox and in the review sandbox", { skip: !bwrapOk && "bubblewrap cannot make a sandbox here" }, async () => {
  const home = realpathSync(tempDir("aa-f27b1-home-"));
  const files: Record<string, string> = {
    ".cargo/credentials.toml": "[registry]\ntoken = \"cio_FAKE\"\n", ".cargo/bin/cargo-x": "#!/bin/sh\n", ".local/share/keyrings/login.keyring": "FAKE-KEYRING\n",
    ".local/bin/tool": "#!/bin/sh\n", ".local/lib/python3/site.txt": "site-packages\n", ".nvm/versions/node/v20/lib/note": "node's lib\n", ".nvm/versions/node/v20/bin/n": "#!/bin/sh\n", ".nvm/alias/default": "v20\n",
  };
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(home, p, ".."), { recursive: true });
    writeFileSync(join(home, p), text);
  }
  const hiddenSock = join(home, ".local", "state", "svc", "api.sock");
  const listeners = await Promise.all([hiddenSock].map(listener));
  const bins = [".local/bin", ".cargo/bin", ".nvm/versions/node/v20/bin"].map((b) => join(home, b));
  try {
    assert.deepEqual(pathInstalls(bins.join(":"), [home], []).sort(), [join(home, ".local", "bin"), join(home, ".local", "lib"), join(home, ".cargo", "bin"), join(home, ".nvm/versions/node/v20/bin"), join(home, ".nvm/versions/node/v20/lib")].sort());
    const f = hostFixture({ env: { ...process.env, HOME: home, PATH: `${bins.join(":")}:${process.env.PATH}` } });
    try {
      const read = [".cargo/credentials.toml", ".local/share/keyrings/login.keyring", ".nvm/alias/default", ".local/bin/tool", ".local/lib/python3/site.txt", ".nvm/versions/node/v20/lib/note"].map((p) => join(home, p));
      const want = Object.fromEntries([
        ...read.slice(0, 3).map((p) => [p, "ENOENT"]), ...read.slice(3).map((p) => [p, files[p.slice(home.length + 1)]!]),
        [hiddenSock, "ENOENT"],
      ]);
      await probedBoth(f, prober([hiddenSock], read), want);
      assert.deepEqual(listeners.map((l) => l.taken()), [0], "no listener took a connection");
    } finally {
      await f.close();
    }
  } finally {
    for (const l of listeners) l.server.close();
    rmSync(home, { recursive: true, force: true });
  }
});
