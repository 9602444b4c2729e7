/**
 * Issue 26 rounds 3 and 4, F1: an agent wrote `<cwd>/plugins/evil/agent.ts` into a `serve --plugins` folder and the
 * hub ran it as itself; read-only binds were not enough (a parent renamed, a link replaced, a missing folder made, a
 * node_modules above it). A cwd that holds such a folder, or lies inside one, is refused. A real `serve` with its local worker and a sandboxed `command` agent.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { engine, serveProcess, tempDir, until } from "./helpers.js";
import type { State } from "../src/protocol/responses.js";

const bin = join(engine, "bin", "agent-autoloop.js");
const root = tempDir("aa-plugin-roots-");
after(() => rmSync(root, { recursive: true, force: true }));

test("an agent's cwd may neither hold nor lie inside a serve --plugins folder (existing or not): refused, saying why", { skip: existsSync("/usr/bin/bwrap") ? false : "no bubblewrap" }, async () => {
  const home = join(root, "aa");
  const proj = join(root, "proj");
  mkdirSync(join(proj, "plugins"), { recursive: true });
  mkdirSync(join(root, "proj2"));
  const env = { ...process.env, HOME: root, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "" };
  await promisify(execFile)(process.execPath, [bin, "init"], { env });
  const script = join(root, "plant.mjs");
  writeFileSync(script, `import { mkdirSync, writeFileSync } from "node:fs";
const tried = (f) => { try { f(); return "written"; } catch (e) { return e.code; } };
const plugin = tried(() => { mkdirSync("plugins/evil", { recursive: true }); writeFileSync("plugins/evil/agent.ts", "export default {}"); });
const own = tried(() => writeFileSync("notes.txt", "mine"));
console.log("Done: plugin " + plugin + ", own " + own);`);
  writeFileSync(join(home, "rules.json"), JSON.stringify({
    sources: { lab: {} }, channels: { file: {} },
    agents: { planter: { worker: "local", use: "command", command: ["node", script] } },
    rules: [
      { name: "plant", when: { source: "lab", types: ["plant.*"] }, to: "planter", cwd: proj },
      { name: "inside", when: { source: "lab", types: ["inside.*"] }, to: "planter", cwd: join(proj, "plugins") },
      { name: "missing", when: { source: "lab", types: ["missing.*"] }, to: "planter", cwd: join(root, "proj2") },
    ],
  }));
  const hub = await serveProcess(home, undefined, env, "127.0.0.1:0", ["--plugins", join(proj, "plugins"), "--plugins", join(root, "proj2", "later", "plugins")]);
  const url = hub.url;
  const output = () => hub.output();
  try {
    const key = (await promisify(execFile)(process.execPath, [bin, "key", "new", "source", "lab"], { env: { ...env, AGENT_AUTOLOOP_URL: url }, encoding: "utf8" })).stdout.trim();
    const owner = (JSON.parse(readFileSync(join(home, "config.json"), "utf8")) as { owner: string }).owner;
    const post = (id: string, type: string) => fetch(`${url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ id, type }) });
    const ended = (rule: string) => until(async () => {
      const s = (await (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as State;
      return s.runs.find((r) => r.rule === rule && ["done", "failed", "nothing", "cancelled"].includes(r.state));
    }, 60_000, () => `a run of ${rule}: ${output().slice(-1500)}`);
    // A cwd that holds it (the third round: the agent wrote a plugin there): refused, saying why; nothing planted.
    await post("p1", "plant.x");
    const held = await until(async () => {
      const s = (await (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as State;
      return s.runs.find((r) => r.rule === "plant" && r.error);
    }, 60_000, () => `the refusal: ${output().slice(-1500)}`);
    assert.match(held.error!, /holds .*plugins, a folder serve --plugins loads plugins from/);
    assert.equal(existsSync(join(proj, "plugins", "evil")), false, "nothing planted on the host");
    // One that does not exist yet, below the cwd: the agent could make it. Refused the same way.
    await post("m1", "missing.x");
    const missing = await until(async () => {
      const s = (await (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as State;
      return s.runs.find((r) => r.rule === "missing" && r.error);
    }, 60_000, () => `the refusal: ${output().slice(-1500)}`);
    assert.match(missing.error!, /holds .*proj2\/later\/plugins, a folder serve --plugins loads plugins from/);
    assert.equal(existsSync(join(root, "proj2", "later")), false);
    // A cwd inside it: the launch is refused, saying why (the run waits for the hub's retry).
    await post("i1", "inside.x");
    const inside = await until(async () => {
      const s = (await (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as State;
      return s.runs.find((r) => r.rule === "inside" && r.error);
    }, 60_000, () => `the refusal: ${output().slice(-1500)}`);
    assert.match(inside.error!, new RegExp(`${join(proj, "plugins").replace(/[/.]/g, "\\$&")}`));
  } finally {
    await hub.stop();
  }
});
