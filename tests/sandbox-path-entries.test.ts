/**
 * Issue 26 round 53, F53a-1..4: the hub's PATH had a relative entry (`./bin`, `node_modules/.bin`), an empty one, a
 * folder inside an agent's repository that did not exist yet (`<repo>/tools/bin`) or one reached through a link the
 * agent could replace. The worker runs `git` with the agent's repository as its folder after each run, and looked it
 * up there: the agent's `git` ran as the hub's user. Now a command line's PATH is fixed at its start (common/paths.ts
 * `fixedPath`): absolute folders that exist, by where they lead. A real `serve` with its local worker, a sandboxed
 * `command` agent in a git repository.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { engine, serveProcess, tempDir, until } from "./helpers.js";
import { fixedPath } from "../src/common/paths.js";
import type { State } from "../src/protocol/responses.js";

const bin = join(engine, "bin", "agent-autoloop.js");
const root = realpathSync(tempDir("aa-path-entries-"));
after(() => rmSync(root, { recursive: true, force: true }));

test("fixedPath: relative entries taken from the start folder, empty and missing ones dropped, links followed, duplicates dropped; Windows untouched", () => {
  const start = join(root, "unit");
  for (const d of ["bin", "real/bin", "other"]) mkdirSync(join(start, d), { recursive: true });
  symlinkSync(join(start, "real"), join(start, "current"));
  const path = ["./bin", "", join(start, "current", "bin"), join(start, "missing"), "other", join(start, "bin"), ""].join(":");
  assert.equal(fixedPath(path, start, "linux"), [join(start, "bin"), join(start, "real", "bin"), join(start, "other")].join(":"));
  assert.equal(fixedPath(path, start, "win32"), path);
});

test("issue 26 round 53, F53a-1/3/4 (reported cases: PATH ./bin, node_modules/.bin, a leading empty entry, a missing <repo>/tools/bin, a linked <repo>/current/bin): the git the agent planted in its repository never runs as the hub", { skip: existsSync("/usr/bin/bwrap") ? false : "no bubblewrap" }, async () => {
  const home = join(root, "aa");
  const repo = join(root, "repo");
  const ran = join(root, "ran");
  mkdirSync(join(repo, "releases", "v1", "bin"), { recursive: true });
  mkdirSync(ran);
  symlinkSync(join(repo, "releases", "v1"), join(repo, "current"));
  const git = (args: string[]) => execFileSync("git", args, { cwd: repo, env: { ...process.env, GIT_AUTHOR_NAME: "a", GIT_AUTHOR_EMAIL: "a@b", GIT_COMMITTER_NAME: "a", GIT_COMMITTER_EMAIL: "a@b" } });
  git(["init", "-q"]);
  writeFileSync(join(repo, "README"), "x\n");
  git(["add", "README"]);
  git(["commit", "-qm", "one"]);
  // The agent plants a `git` in every place the hub's PATH could lead into its repository.
  const planted = `#!/bin/sh\necho "$0" >> ${join(ran, "ran.txt")}\nexec /usr/bin/git "$@"\n`;
  const script = `const { chmodSync, mkdirSync, renameSync, symlinkSync, writeFileSync } = require("node:fs");
const git = ${JSON.stringify(planted)};
const tried = (f) => { try { f(); return "ok"; } catch (e) { return e.code; } };
const out = {};
for (const d of ["bin", "node_modules/.bin", "tools/bin", "releases/v2/bin", "."]) out[d] = tried(() => { mkdirSync(d, { recursive: true }); writeFileSync(d + "/git", git); chmodSync(d + "/git", 0o755); });
out.current = tried(() => { symlinkSync("releases/v2", "current.new"); renameSync("current.new", "current"); });
writeFileSync("planted.json", JSON.stringify(out));
console.log("Done: planted");`;
  const env = {
    ...process.env, HOME: root, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "",
    PATH: ["", "./bin", "node_modules/.bin", join(repo, "tools", "bin"), join(repo, "current", "bin"), process.env.PATH ?? ""].join(":"),
  };
  await promisify(execFile)(process.execPath, [bin, "init"], { env });
  writeFileSync(join(home, "rules.json"), JSON.stringify({
    sources: { lab: {} }, channels: { file: {} },
    agents: { planter: { worker: "local", use: "command", command: [process.execPath, "-e", script] } },
    rules: [{ name: "plant", when: { source: "lab", types: ["plant.*"] }, to: "planter", cwd: repo }],
  }));
  // serve starts elsewhere (this test's folder): `./bin` is the repository's only where a child runs in it.
  const hub = await serveProcess(home, undefined, env);
  try {
    const key = (await promisify(execFile)(process.execPath, [bin, "key", "new", "source", "lab"], { env: { ...env, AGENT_AUTOLOOP_URL: hub.url }, encoding: "utf8" })).stdout.trim();
    const owner = (JSON.parse(readFileSync(join(home, "config.json"), "utf8")) as { owner: string }).owner;
    await fetch(`${hub.url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ id: "p1", type: "plant.x" }) });
    let last = "";
    const run = await until(async () => {
      const s = (await (await fetch(`${hub.url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as State;
      last = JSON.stringify(s.runs.map((r) => [r.state, r.error]));
      return s.runs.find((r) => ["done", "failed", "nothing", "cancelled"].includes(r.state));
    }, 60_000, () => `the run (${last}): ${hub.output().slice(-1500)}`);
    assert.equal(run.state, "done", run.error ?? "");
    // The worker's look at the repository after the run (git ls-files, ls-tree) has run by now; another run's look too.
    await fetch(`${hub.url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ id: "p2", type: "plant.y" }) });
    await until(async () => {
      const s = (await (await fetch(`${hub.url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as State;
      return s.runs.filter((r) => ["done", "failed", "nothing", "cancelled"].includes(r.state)).length === 2;
    }, 60_000, () => `the second run: ${hub.output().slice(-1500)}`);
    // Every one was written in the repository (the agent's to write)...
    assert.deepEqual(JSON.parse(readFileSync(join(repo, "planted.json"), "utf8")), { bin: "ok", "node_modules/.bin": "ok", "tools/bin": "ok", "releases/v2/bin": "ok", ".": "ok", current: "ok" });
    // ... and none ran.
    assert.deepEqual(readdirSync(ran), [], existsSync(join(ran, "ran.txt")) ? readFileSync(join(ran, "ran.txt"), "utf8") : "");
  } finally {
    await hub.stop();
  }
});
