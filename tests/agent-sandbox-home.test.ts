/**
 * What a sandboxed agent sees of the hub user's home and runtime folder (issue 26 round 11).
 * F8/F10 (reported case): the agent read `~/.ssh/id_ed25519`, `~/.config/gh/hosts.yml` and the browser's cookie store
 * (`~/.config/chromium/Default/Cookies`) from the read-only home, decrypted the owner's console cookie and answered
 * its own tool card. The home is hidden now, and shown again only what the agent needs: its cwd and writable
 * folders, its CLI's state, `~/.gitconfig`, the folders on its PATH and the package its program lies in, and the
 * agent's rules.json `readable`.
 * F6 (reported case): `/run/user/<uid>` (the `systemd --user` private socket, the user bus) was reachable and
 * `XDG_RUNTIME_DIR` passed, so the agent could drive the hub user's own systemd (`systemd-run --user …`) outside
 * every sandbox. The runtime folders are an empty private one in the sandbox.
 * Real hub, worker, bubblewrap and agent processes; a real listening socket stands in for systemd's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync, realpathSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { tempDir, until, type Fixture } from "./helpers.js";
import { sandboxKit } from "./sandbox-kit.js";

const kit = sandboxKit();
const { removed, setEnv, setup } = kit;

/** Waits for the one run to finish; fails with its error (a refused launch) or the state it was last seen in. */
async function finished(fx: Fixture): Promise<string | null | undefined> {
  let last = "";
  try {
    const st = await until(async () => {
      const s = await fx.state();
      last = JSON.stringify(s.runs[0]);
      return (s.runs[0]?.state === "done" || s.runs[0]?.error) && s;
    }, 30_000, "the run to finish");
    assert.equal(st.runs[0]!.error ?? null, null);
    return st.runs[0]!.summary;
  } catch (e) {
    throw new Error(`${(e as Error).message}; last seen ${last}`);
  }
}

/**
 * The probing agent (a Node script): for each path of `paths.json` in its cwd, its first 16 characters (`READ …`),
 * `LIST <entries>` for a folder, or the error's code; each `connect` path connected to (`CONNECTED` or the code);
 * `run` programs run (their stdout, or the code); the environment's XDG_RUNTIME_DIR and its mode. Writes
 * `seen.json` in its cwd and prints "Done: probed".
 */
const prober = String.raw`
const fs = require("fs"), net = require("net"), cp = require("child_process");
const want = JSON.parse(fs.readFileSync("paths.json", "utf8"));
const out = { read: {}, connect: {}, run: {} };
for (const p of want.read) {
  try { out.read[p] = fs.statSync(p).isDirectory() ? "LIST " + fs.readdirSync(p).sort().join(",") : "READ " + fs.readFileSync(p, "utf8").slice(0, 16); }
  catch (e) { out.read[p] = e.code; }
}
for (const p of want.run) {
  try { out.run[p] = cp.execFileSync(p, [], { encoding: "utf8" }).trim(); } catch (e) { out.run[p] = e.code || String(e.status); }
}
const rt = process.env.XDG_RUNTIME_DIR;
out.runtime = rt === undefined ? null : { dir: rt, entries: (() => { try { return fs.readdirSync(rt); } catch (e) { return e.code; } })(), mode: (() => { try { return (fs.statSync(rt).mode & 0o777).toString(8); } catch (e) { return e.code; } })() };
let left = want.connect.length;
const done = () => { fs.writeFileSync("seen.json", JSON.stringify(out)); console.log("Done: probed"); };
if (left === 0) done();
for (const p of want.connect) {
  const s = net.connect(p);
  s.on("connect", () => { out.connect[p] = "CONNECTED"; s.destroy(); if (--left === 0) done(); });
  s.on("error", (e) => { out.connect[p] = e.code; if (--left === 0) done(); });
}
`;

test("issue 26 r11 F8/F10 (reported case): a sandboxed agent reads none of the hub user's home but what it needs — no ssh key, gh token or browser cookies; its cwd, ~/.gitconfig, its PATH's tools, its program's package and the agent's readable are there", async () => {
  const home = realpathSync(tempDir("aa-home-view-"));
  removed.push(home);
  const put = (rel: string, text: string, mode = 0o644) => {
    mkdirSync(join(home, rel, ".."), { recursive: true });
    writeFileSync(join(home, rel), text, { mode });
  };
  put(".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----", 0o600);
  put(".config/gh/hosts.yml", "github.com:\n  oauth_token: gho_SECRET");
  put(".config/chromium/Default/Cookies", "SQLite format 3 cookies");
  put(".mozilla/firefox/x.default/cookies.sqlite", "SQLite format 3 cookies");
  put(".aws/credentials", "[default]\naws_secret_access_key=x");
  put(".gitconfig", "[user]\n\tname = Owner\n");
  put(".config/git/ignore", "*.log\n");
  put("data/notes.txt", "owner's notes, shared");
  // A tool on PATH in the home, and the agent's program: a link on PATH into a package of its own in the home.
  put(".local/bin/hello", "#!/bin/sh\necho hello from the PATH\n", 0o755);
  put("apps/probe/package.json", '{"name":"probe"}');
  put("apps/probe/lib/prober.cjs", prober);
  put("apps/probe/bin/probe.cjs", `#!${process.execPath}\nrequire("../lib/prober.cjs");\n`, 0o755);
  symlinkSync(join(home, "apps/probe/bin/probe.cjs"), join(home, ".local/bin/probe"));
  const cwd = join(home, "project");
  mkdirSync(cwd);
  setEnv({ HOME: home, PATH: `${join(home, ".local", "bin")}:${process.env.PATH}` });
  const secrets = [".ssh/id_ed25519", ".config/gh/hosts.yml", ".config/chromium/Default/Cookies", ".mozilla/firefox/x.default/cookies.sqlite", ".aws/credentials"].map((p) => join(home, p));
  writeFileSync(join(cwd, "paths.json"), JSON.stringify({ read: [...secrets, join(home, ".gitconfig"), join(home, "data", "notes.txt"), join(home, ".ssh"), join(home, ".config")], run: ["hello", "python3"], connect: [] }));
  const fx = await setup({ use: "command", command: ["probe"], readable: ["~/data"] }, cwd);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  assert.equal(await finished(fx), "Done: probed");
  const seen = JSON.parse(readFileSync(join(cwd, "seen.json"), "utf8")) as { read: Record<string, string>; run: Record<string, string> };
  assert.deepEqual(seen.read, {
    ...Object.fromEntries(secrets.map((p) => [p, "ENOENT"])),
    [join(home, ".gitconfig")]: "READ [user]\n\tname = O",
    [join(home, "data", "notes.txt")]: "READ owner's notes, s",
    [join(home, ".ssh")]: "ENOENT",
    [join(home, ".config")]: "LIST git",
  });
  // python3 as this computer has it (pyenv's shims in the hub user's home, here): it runs, reading no input.
  assert.deepEqual(seen.run, { hello: "hello from the PATH", python3: "" });
});

test("issue 26 r11 F6 (reported case): a sandboxed agent cannot reach the hub user's runtime folder (the systemd --user private socket, the user bus); its XDG_RUNTIME_DIR is an empty folder of its own", async (t) => {
  const uid = process.getuid!();
  const runtime = `/run/user/${uid}`;
  if (!existsSync(runtime)) {
    try {
      mkdirSync(runtime, { recursive: true, mode: 0o700 });
    } catch {
      return t.skip(`cannot make ${runtime} here`);
    }
    removed.push(runtime);
  }
  const made = join(runtime, "systemd");
  const existed = existsSync(made);
  mkdirSync(made, { recursive: true });
  if (!existed) removed.push(made);
  const socket = join(made, `private-aa-${process.pid}`);
  const bus = join(runtime, `bus-aa-${process.pid}`);
  removed.push(socket, bus);
  for (const path of [socket, bus]) {
    const server = createServer((c) => c.destroy());
    await new Promise<void>((r) => server.listen(path, r));
    kit.cleanups.push(() => new Promise((r) => server.close(r)));
  }
  chmodSync(runtime, 0o700);
  const cwd = realpathSync(tempDir("aa-runtime-cwd-"));
  removed.push(cwd);
  setEnv({ XDG_RUNTIME_DIR: runtime });
  writeFileSync(join(cwd, "prober.cjs"), prober);
  writeFileSync(join(cwd, "paths.json"), JSON.stringify({ read: [runtime, "/run/user"], run: [], connect: [socket, bus] }));
  const fx = await setup({ use: "command", command: [process.execPath, join(cwd, "prober.cjs")] }, cwd);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  assert.equal(await finished(fx), "Done: probed");
  const seen = JSON.parse(readFileSync(join(cwd, "seen.json"), "utf8")) as { read: Record<string, string>; connect: Record<string, string>; runtime: unknown };
  assert.deepEqual(seen.connect, { [socket]: "ENOENT", [bus]: "ENOENT" });
  assert.deepEqual(seen.read, { [runtime]: "LIST ", "/run/user": `LIST ${uid}` });
  assert.deepEqual(seen.runtime, { dir: runtime, entries: [], mode: "700" });
});

test("issue 26 r12 F12-4 (reported case): a sandboxed agent cannot read git's credential store at its XDG place (~/.config/git/credentials) nor have git fill from it; git's config, ignore and attributes there still apply", async () => {
  const home = realpathSync(tempDir("aa-home-git-"));
  removed.push(home);
  const put = (rel: string, text: string, mode = 0o644) => {
    mkdirSync(join(home, rel, ".."), { recursive: true });
    writeFileSync(join(home, rel), text, { mode });
  };
  put(".config/git/credentials", "https://cc:ghp_GITCREDSTORE@github.com\n", 0o600);
  put(".config/git/config", "[credential]\n\thelper = store\n[aa]\n\tprobe = from-xdg-config\n");
  put(".config/git/ignore", "*.log\n");
  put(".config/git/attributes", "*.bin binary\n");
  put(".config/git/notes.txt", "not git's\n");
  put(".git-credentials", "https://cc:ghp_HOMECREDS@github.com\n", 0o600);
  put(".local/bin/probe", `#!${process.execPath}\n${prober}`, 0o755);
  // What git makes of it in the sandbox: the setting from ~/.config/git/config, and what `credential fill` answers.
  put(".local/bin/gitprobe", "#!/bin/sh\ngit config --global aa.probe\nprintf 'protocol=https\\nhost=github.com\\n\\n' | GIT_TERMINAL_PROMPT=0 git credential fill 2>/dev/null | grep password || echo no-password\n", 0o755);
  const cwd = join(home, "project");
  mkdirSync(cwd);
  setEnv({ HOME: home, PATH: `${join(home, ".local", "bin")}:${process.env.PATH}` });
  const git = (name: string) => join(home, ".config", "git", name);
  writeFileSync(join(cwd, "paths.json"), JSON.stringify({ read: [git("credentials"), git("config"), git("ignore"), git("attributes"), join(home, ".config", "git"), join(home, ".git-credentials")], run: ["gitprobe"], connect: [] }));
  const fx = await setup({ use: "command", command: ["probe"] }, cwd);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  assert.equal(await finished(fx), "Done: probed");
  const seen = JSON.parse(readFileSync(join(cwd, "seen.json"), "utf8")) as { read: Record<string, string>; run: Record<string, string> };
  assert.deepEqual(seen.read, {
    [git("credentials")]: "ENOENT",
    [git("config")]: "READ [credential]\n\the",
    [git("ignore")]: "READ *.log\n",
    [git("attributes")]: "READ *.bin binary\n",
    [join(home, ".config", "git")]: "LIST attributes,config,ignore",
    [join(home, ".git-credentials")]: "ENOENT",
  });
  assert.deepEqual(seen.run, { gitprobe: "from-xdg-config\nno-password" });
});
