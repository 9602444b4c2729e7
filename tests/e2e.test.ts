/**
 * The whole loop on real input, as the README walks it (issue 2): a real GitHub issues.opened payload becomes an
 * event; the hub (a real child process with a real SQLite file) routes it to a `command` agent that asks a
 * question; the card reaches the file channel; the answer goes in through the CLI; the next run gets it and
 * finishes. The hub is killed with SIGKILL in the middle and restarted: nothing acknowledged is lost.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, execFileSync, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync, existsSync, rmSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { endAgentsIn, engine, tempDir, until } from "./helpers.js";
import type { State } from "../src/protocol/responses.js";

const bin = join(engine, "bin", "agent-autoloop.js");
const dir = tempDir("aa-e2e-");
const env = { ...process.env, AGENT_AUTOLOOP_HOME: dir, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "" };
const children: ChildProcess[] = [];

after(async () => {
  for (const c of children) c.kill("SIGKILL");
  // agents started by the killed hub's worker run under their own supervisors: end them too
  await endAgentsIn(dir);
  rmSync(dir, { recursive: true, force: true });
});

function cli(...args: string[]): string {
  return execFileSync(process.execPath, [bin, ...args], { env: { ...env, AGENT_AUTOLOOP_URL: url }, encoding: "utf8" }).trim();
}

let url = "";
async function startHub(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bin, "serve", "--listen", "127.0.0.1:0"], { env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  url = (await until(() => /listening on (http:\/\/\S+)/.exec(out)?.[1], 15_000, `the hub to listen (output: ${out})`))!;
  return child;
}

async function state(): Promise<State> {
  const owner = (JSON.parse(readFileSync(join(dir, "config.json"), "utf8")) as { owner: string }).owner;
  const res = await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } });
  return (await res.json()) as State;
}

test("GitHub issue → rule → command agent asks → file channel → CLI answer → next run finishes, across a SIGKILL", async () => {
  assert.match(execFileSync(process.execPath, [bin, "init"], { env, encoding: "utf8" }), /^created /);
  assert.match(execFileSync(process.execPath, [bin, "init"], { env, encoding: "utf8" }), /already set up; nothing changed/);
  const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
  assert.deepEqual(Object.keys(config.channels), ["desktop", "file"]);
  writeFileSync(join(dir, "rules.json"), `// rules for the end-to-end test
{
  "timezone": "UTC",
  "sources": { "github": { "name": "GitHub" } },
  "agents": { "asker": { "worker": "local", "use": "command", "command": ["node", ${JSON.stringify(join(engine, "examples", "agents", "ask-once.mjs"))}] } },
  "channels": { "desktop": {}, "file": {} },
  "rules": [{ "name": "triage", "when": { "source": "github", "types": ["issues.*"] }, "to": "asker", "cwd": "~", "prompt": "Triage the issue.", }],
}
`);
  url = "http://127.0.0.1:1"; // no hub yet: key new writes the key locally
  const sourceKey = cli("key", "new", "source", "github");
  assert.match(sourceKey, /^[A-Za-z0-9_-]{43}$/);

  let hub = await startHub();
  const event = JSON.parse(execFileSync(process.execPath, [join(engine, "examples", "github-issue-event.mjs"), "--example", "opened"], { encoding: "utf8" }));
  assert.deepEqual(event, {
    id: "444500041:opened", type: "issues.opened", subject: "#1", summary: "Spelling error in the README file",
    link: "https://github.com/Codertocat/Hello-World/issues/1",
  });
  const posted = await (await fetch(`${url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${sourceKey}`, "content-type": "application/json" }, body: JSON.stringify(event) })).json();
  assert.deepEqual(posted, { event: 1, duplicate: false, routed: ["triage"], paused: [] });

  // SIGKILL right after the acknowledgement: the event must survive and the loop go on after a restart.
  hub.kill("SIGKILL");
  await new Promise((r) => hub.once("exit", r));
  hub = await startHub();

  const cardsFile = join(dir, "cards.txt");
  const text = (await until(() => (existsSync(cardsFile) && readFileSync(cardsFile, "utf8").includes("How should I handle github #1?") ? readFileSync(cardsFile, "utf8") : ""), 60_000, "the card in cards.txt"));
  assert.match(text, /── card 1 · v1 · ask · open · triage/);
  assert.match(text, /Spelling error in the README file/);
  assert.match(text, /0\) Fix it now {2}← recommended/);
  // the file channel writes the card, then reports the delivery: wait for both reports
  let s = await until(async () => {
    const st = await state();
    return st.cards[0]?.deliveries?.desktop && st.cards[0]?.deliveries?.file && st;
  }, 20_000, "both channels to report the delivery");
  assert.equal(s.cards.length, 1);
  assert.equal(s.cards[0].deliveries.desktop.ref, "skipped-1", "no graphical session: the desktop channel skips the card once");
  assert.equal(s.cards[0].deliveries.file.ref, "file-1");
  assert.equal(s.runs[0].state, "done");

  // kill again before answering: the open card survives
  hub.kill("SIGKILL");
  await new Promise((r) => hub.once("exit", r));
  hub = await startHub();
  assert.match(cli("answer", "1", "0"), /^card 1: answered/);
  s = await until(async () => {
    const x = await state();
    return x.runs.length === 2 && x.runs[0].state === "done" && x;
  }, 20_000, "the second run to finish");
  assert.equal(s.runs[0].summary, 'Done: the owner chose "Fix it now" for card 1.');
  assert.deepEqual(s.runs[0].answers, [1]);
  assert.equal(s.cards.length, 0);
  assert.equal(s.recentCards[0].result, "Done");
  const status = cli("status");
  assert.match(status, /#2 triage · done/);
  assert.match(status, /Done: the owner chose "Fix it now" for card 1\./);
  assert.match(status, /triage ← github:issues\.\* → asker/);
  assert.match(status, /local · online/);
  // every run the worker started was reported exactly once
  const runs = readdirSync(join(dir, "worker", "runs")).sort();
  assert.deepEqual(runs, ["1-1", "2-1"]);
  for (const r of runs) assert.ok(existsSync(join(dir, "worker", "runs", r, "submitted")));

  // one hub per home: a second serve refuses to start
  const second = spawnSync(process.execPath, [bin, "serve", "--listen", "127.0.0.1:0"], { env, encoding: "utf8" });
  assert.equal(second.status, 1);
  assert.match(second.stderr, new RegExp(`^agent-autoloop: another hub already runs on this home \\(pid ${hub.pid}\\)`));

  // SIGTERM shuts down cleanly
  hub.kill("SIGTERM");
  const code = await new Promise((r) => hub.once("exit", r));
  assert.equal(code, 0);
});
