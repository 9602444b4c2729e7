/**
 * Issue 26 round 3, F1: a folder the hub loads plugins from with `serve --plugins` stays read-only in an agent's
 * sandbox, also inside the agent's cwd (an agent wrote `<cwd>/plugins/evil/agent.ts` and the hub ran it as itself);
 * a cwd inside such a folder is refused. A real `serve` with its local worker and a sandboxed `command` agent.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { engine, tempDir, until } from "./helpers.js";
import type { State } from "../src/protocol/responses.js";

const bin = join(engine, "bin", "agent-autoloop.js");
const root = tempDir("aa-plugin-roots-");
after(() => rmSync(root, { recursive: true, force: true }));

test("a serve --plugins folder inside the agent's cwd is read-only to the agent; a cwd inside it is refused", { skip: existsSync("/usr/bin/bwrap") ? false : "no bubblewrap" }, async () => {
  const home = join(root, "aa");
  const proj = join(root, "proj");
  mkdirSync(join(proj, "plugins"), { recursive: true });
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
    ],
  }));
  const hub = spawn(process.execPath, [bin, "serve", "--listen", "127.0.0.1:0", "--plugins", join(proj, "plugins")], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  hub.stdout!.on("data", (d) => (output += d));
  hub.stderr!.on("data", (d) => (output += d));
  try {
    const url = (await until(() => /listening on (http:\/\/\S+)/.exec(output)?.[1], 60_000, () => output))!;
    const key = (await promisify(execFile)(process.execPath, [bin, "key", "new", "source", "lab"], { env: { ...env, AGENT_AUTOLOOP_URL: url }, encoding: "utf8" })).stdout.trim();
    const owner = (JSON.parse(readFileSync(join(home, "config.json"), "utf8")) as { owner: string }).owner;
    const post = (id: string, type: string) => fetch(`${url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ id, type }) });
    const ended = (rule: string) => until(async () => {
      const s = (await (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as State;
      return s.runs.find((r) => r.rule === rule && ["done", "failed", "nothing", "cancelled"].includes(r.state));
    }, 60_000, () => `a run of ${rule}: ${output.slice(-1500)}`);
    await post("p1", "plant.x");
    const run = await ended("plant");
    // Node's recursive mkdir on the read-only folder ends in EROFS or, for the file after it, ENOENT: never written.
    assert.match(run.summary ?? "", /^Done: plugin (EROFS|ENOENT), own written$/);
    assert.equal(existsSync(join(proj, "plugins", "evil")), false, "nothing planted on the host");
    assert.equal(readFileSync(join(proj, "notes.txt"), "utf8"), "mine");
    // A cwd inside it: the launch is refused, saying why (the run waits for the hub's retry).
    await post("i1", "inside.x");
    const inside = await until(async () => {
      const s = (await (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as State;
      return s.runs.find((r) => r.rule === "inside" && r.error);
    }, 60_000, () => `the refusal: ${output.slice(-1500)}`);
    assert.match(inside.error!, new RegExp(`${join(proj, "plugins").replace(/[/.]/g, "\\$&")}`));
  } finally {
    const gone = new Promise((r) => hub.once("exit", r));
    hub.kill("SIGTERM");
    await gone;
  }
});
