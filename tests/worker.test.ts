/**
 * The worker with real child processes: the command agent, its environment, failures, stops of whole process
 * groups, bad receipts, and a worker restart in the middle of a run.
 */
import { test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hubFixture, baseRules, until, tempDir, type Fixture, untilLatestRun } from "./helpers.js";
import { Worker } from "../src/worker/worker.js";
import { startSupervised, stopGroup, readPids, groupAlive, readExit } from "../src/worker/supervise.js";
import type { RunView } from "../src/protocol/responses.js";

let f: Fixture | null = null;
const workers: Worker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) w.stop();
  await f?.close();
  f = null;
});

/** A hub whose rule "alerts" runs `node -e <script>` as a command agent in `cwd`, and a worker for it. */
async function setup(script: string, extraArgs: string[] = [], cwd = "/tmp") {
  const rules = {
    ...baseRules,
    agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command: ["node", "-e", script, ...extraArgs] } },
    rules: [{ ...baseRules.rules[0], cwd }, ...baseRules.rules.slice(1)],
  };
  f = await hubFixture(rules);
  return f;
}

function startWorker(fx: Fixture): Worker {
  const w = new Worker({ url: fx.url, key: fx.keys.worker, name: "w1", capacity: 2, home: fx.home, lang: "en" });
  workers.push(w);
  void w.run();
  return w;
}

const state = (fx: Fixture) => fx.state();

function processes(pattern: string): string[] {
  try {
    return execFileSync("pgrep", ["-f", pattern], { encoding: "utf8" }).trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

test("the command agent gets {prompt} and {context}, an allowlisted environment, and no event text in the prompt", async () => {
  const cwd = tempDir("aa-worker-cwd-");
  const fx = await setup(
    `const fs=require("fs");const ctx=JSON.parse(fs.readFileSync(process.env.AGENT_AUTOLOOP_CONTEXT,"utf8"));` +
      `fs.writeFileSync(process.argv[3]+"/seen.json",JSON.stringify({prompt:process.argv[1],ctxArg:process.argv[2],env:process.env,ctx}));console.log("Done: looked")`,
    ["{prompt}", "{context}", "{cwd}"],
    cwd,
  );
  process.env.AGENT_AUTOLOOP_TEST_SECRET = "must-not-leak";
  process.env.SOME_PASSWORD = "nope";
  try {
    await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x", summary: "SECRET SUMMARY TEXT", detail: "SECRET DETAIL" });
    startWorker(fx);
    const st = await until(async () => {
      const s = await state(fx);
      return s.runs[0]?.state === "done" && s;
    }, 15_000, "the run to finish");
    assert.equal(st.runs[0].summary, "Done: looked");
    const seen = JSON.parse(readFileSync(join(cwd, "seen.json"), "utf8"));
    assert.match(seen.prompt, /^handle it\n/);
    assert.doesNotMatch(seen.prompt, /SECRET/);
    assert.equal(seen.ctxArg, seen.env.AGENT_AUTOLOOP_CONTEXT);
    assert.equal(seen.env.AGENT_AUTOLOOP_RUN, "1");
    assert.equal(seen.env.AGENT_AUTOLOOP_TEST_SECRET, undefined);
    assert.equal(seen.env.SOME_PASSWORD, undefined);
    assert.equal(seen.ctx.events[0].summary, "SECRET SUMMARY TEXT");
    const text = JSON.stringify(seen);
    assert.doesNotMatch(text, new RegExp(fx.keys.worker.replace(/[-]/g, "\\-")), "the worker key is nowhere the agent can see");
  } finally {
    delete process.env.AGENT_AUTOLOOP_TEST_SECRET;
    delete process.env.SOME_PASSWORD;
  }
});

test("an exit code other than 0 is 'not run': the run waits for a retry with the error", async () => {
  const fx = await setup(`console.error("boom: token expired"); process.exit(3)`);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  startWorker(fx);
  const st = await untilLatestRun(fx, "waiting");
  assert.equal(st.runs[0].error, "exit code 3: boom: token expired");
  assert.equal(st.runs[0].failures, 1);
});

test("'Not run:' on the first line is a failure even with exit code 0", async () => {
  const fx = await setup(`console.log("Not run: upstream is down")`);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  startWorker(fx);
  const st = await untilLatestRun(fx, "waiting");
  assert.equal(st.runs[0].error, "upstream is down");
});

test("a command agent's unreadable receipt is voided: the outcome stands and a card points at the output", async () => {
  const fx = await setup('console.log("Did the work.\\n```agent-autoloop\\n{\\"ask\\": [{\\"title\\": 1}]}\\n```")');
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  startWorker(fx);
  const st = await untilLatestRun(fx, "done");
  assert.equal(st.runs[0].summary, "Did the work.");
  assert.equal(st.cards.length, 1);
  assert.equal(st.cards[0].title, "The receipt of run 1 could not be read and was voided");
  assert.match(st.cards[0].text, /^receipt: ask\[0\]\.options: required\n.*\/worker\/runs\/1-1\/1\/stdout$/);
});

test("a command agent's 'Needs you' without an ask ends done; a notice card carries its first line and where its output is; the rest of its receipt applies", async () => {
  const message = "Needs you: the npm token expired; log in again\nI stopped before publishing.\n```agent-autoloop\n{\"notice\": [{\"title\": \"Built 1.4.2\"}]}\n```";
  const fx = await setup(`console.log(${JSON.stringify(message)})`);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  startWorker(fx);
  const st = await untilLatestRun(fx, "done");
  assert.equal(st.runs[0].summary, "Needs you: the npm token expired; log in again");
  // The worker's own notice first (a card of the hub's, made before the receipt's), then the agent's.
  assert.deepEqual(st.cards.map((c) => [c.kind, c.rule, c.title]), [
    ["notice", "alerts", "Run 1 says it needs you but asked no question"],
    ["notice", "alerts", "Built 1.4.2"],
  ]);
  assert.match(st.cards[0].text, /^Needs you: the npm token expired; log in again\n\/.*\/worker\/runs\/1-1\/1\/stdout$/);
});

test("a command agent whose last message ends with a question gets a card; one with a question mark mid-text does not", async () => {
  const fx = await setup(`console.log(process.env.AGENT_AUTOLOOP_RUN === "1" ? "Looked at the failing build.\\nShould I pin Node 20 or move to 22?" : "Why did CI fail? A stale cache; cleared it.")`);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  startWorker(fx);
  const st = await untilLatestRun(fx, "done");
  assert.equal(st.runs[0].summary, "Looked at the failing build.");
  assert.deepEqual(st.cards.map((c) => [c.kind, c.title]), [["notice", "Run 1 ended with a question but asked you nothing"]]);
  assert.match(st.cards[0].text, /^Looked at the failing build\.\nShould I pin Node 20 or move to 22\?\n\/.*\/worker\/runs\/1-1\/1\/stdout$/);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e2", type: "alert.x" });
  const st2 = await until(async () => {
    const s = await state(fx);
    return s.runs[0]?.id === 2 && s.runs[0].state === "done" && s;
  }, 15_000, "run 2 to finish");
  assert.equal(st2.runs[0].summary, "Why did CI fail? A stale cache; cleared it.");
  assert.equal(st2.cards.length, 1, "no card for an ordinary summary");
});

test("stopping a run stops its whole process group before it is reported cancelled", async () => {
  const marker = `sleep ${300 + Math.floor(Math.random() * 600)}`;
  const fx = await setup(`require("child_process").spawn("sh",["-c","${marker}"],{stdio:"ignore"}); setTimeout(()=>{}, 600000)`);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  startWorker(fx);
  await until(async () => (await state(fx)).runs[0]?.state === "running" && processes(marker).length > 0, 15_000, "the agent and its child");
  const r = await fx.call("POST", "/v1/runs/1/cancel", fx.keys.owner, {});
  assert.equal(r.body.state, "stopping");
  await until(async () => (await state(fx)).runs[0]?.state === "cancelled", 20_000, "the run to be cancelled");
  assert.deepEqual(processes(marker), [], "no process of the group is left");
});

test("stopping a run also stops a descendant that left the process group (setsid), as agents' tool shells do", async () => {
  // Claude Code (inside an ACP adapter) runs its Bash tool in a session of its own when SHELL is set: a group
  // signal does not reach it. Descendants are found by parent id before the stop and signalled too.
  const marker = `sleep ${1300 + Math.floor(Math.random() * 600)}`;
  const fx = await setup(`require("child_process").spawn("setsid",["sh","-c","${marker}"],{stdio:"ignore"}); setTimeout(()=>{}, 600000)`);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  startWorker(fx);
  await until(async () => (await state(fx)).runs[0]?.state === "running" && processes(marker).length > 1, 15_000, "the agent and its child");
  await fx.call("POST", "/v1/runs/1/cancel", fx.keys.owner, {});
  await until(async () => (await state(fx)).runs[0]?.state === "cancelled", 20_000, "the run to be cancelled");
  const left = processes(marker);
  for (const pid of left) process.kill(Number(pid), "SIGKILL");
  assert.deepEqual(left, [], "the descendant in its own session is gone too");
});

test("a process group that ignores SIGTERM is killed after the grace period", async () => {
  const dir = tempDir("aa-sup-");
  mkdirSync(join(dir, "l"));
  // The shell says when its trap is set: a SIGTERM that came before would end it at once (a race seen in CI).
  await startSupervised(join(dir, "l"), ["sh", "-c", "trap '' TERM; touch trapped; sleep 333 & wait; sleep 334"], dir, { PATH: process.env.PATH! });
  const pids = readPids(join(dir, "l"))!;
  assert.equal(groupAlive(pids.pgid), true);
  await until(() => existsSync(join(dir, "trapped")), 5000, "the trap to be set");
  const t0 = Date.now();
  await stopGroup(join(dir, "l"), 700);
  assert.ok(Date.now() - t0 >= 650, "waited for the grace period");
  assert.equal(groupAlive(pids.pgid, pids.start), false);
  await until(() => readExit(join(dir, "l")), 5000, "the exit record");
  assert.equal(readExit(join(dir, "l"))!.signal, "SIGKILL");
});

test("a worker restarted in the middle of a run picks it up and reports the result", async () => {
  const fx = await setup(`setTimeout(() => console.log("Done: slow work"), 1500)`);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const first = startWorker(fx);
  await until(async () => (await state(fx)).runs[0]?.state === "running", 15_000, "the run to start");
  first.stop(); // the agent keeps running under its supervisor
  await new Promise((r) => setTimeout(r, 2500)); // it finishes while no worker watches
  assert.equal((await state(fx)).runs[0].state, "running");
  startWorker(fx);
  const st = await untilLatestRun(fx, "done");
  assert.equal(st.runs[0].summary, "Done: slow work");
  assert.ok(existsSync(join(fx.home.worker, "runs", "1-1", "submitted")));
});

/** Installs an agent plugin into the hub home's plugins folder and points rule "alerts" at it. */
async function setupPlugin(name: string, source: string) {
  const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", use: name } } };
  const fx = await hubFixture(rules);
  f = fx;
  mkdirSync(join(fx.home.plugins, name), { recursive: true });
  writeFileSync(join(fx.home.plugins, name, "agent.mjs"), source);
  return fx;
}

/** Posts an event for rule "alerts", starts a worker, and waits for the run's first failure; returns the run. */
async function firstFailure(fx: Fixture): Promise<RunView> {
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  startWorker(fx);
  return until(async () => {
    const r = (await state(fx)).runs[0];
    return r?.failures === 1 && r;
  }, 15_000, "the run to fail once");
}

test("a plugin whose read() throws: the agent keeps running to its end, then the run is 'not run' (retried later)", async () => {
  const marker = join(tempDir(), "ran-to-the-end");
  const fx = await setupPlugin("throwing", `export default {
    command: () => ["node", "-e", ${JSON.stringify(`setTimeout(() => require("fs").writeFileSync(${JSON.stringify(marker)}, "yes"), 800)`)}],
    read() { throw new Error("cannot read this output"); },
  };`);
  const run = await firstFailure(fx);
  // Seen in three full runs: the agent ended by a SIGTERM 0.6–0.9 s after its claim. It was workflows.test.ts's
  // clean-up, `pkill -f <its home>`, which matched this agent's bubblewrap (whose arguments hide every known home);
  // the clean-ups now end only their own agents (helpers.ts endAgentsIn). The launch's exit record and stderr say how
  // the process ended, should it happen again.
  const launch = join(fx.home.worker, "runs", "1-1", "1");
  const stderr = existsSync(join(launch, "stderr")) ? readFileSync(join(launch, "stderr"), "utf8").slice(0, 2000) : null;
  assert.equal(existsSync(marker) && readFileSync(marker, "utf8"), "yes", `the process ran to its end (run: ${JSON.stringify(run)}, exit: ${JSON.stringify(readExit(launch))}, stderr: ${stderr})`);
  assert.equal(run.state, "waiting");
  assert.equal(run.error, "plugin throwing: invalid");
});

test("a plugin that says finished while the process stays: the group is stopped after the grace period", async () => {
  const fx = await setupPlugin("lingering", `export default {
    command: () => ["node", "-e", "console.log('FINAL'); setInterval(() => {}, 1000)"],
    read: (stdout, code) => stdout.includes("FINAL") ? { started: true, finished: true, text: "Done: said it and lingered" } : { started: true },
  };`);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const w = new Worker({ url: fx.url, key: fx.keys.worker, name: "w1", capacity: 2, home: fx.home, lang: "en", finishedGraceMs: 300 });
  workers.push(w);
  void w.run();
  const st = await untilLatestRun(fx, "done");
  assert.equal(st.runs[0].summary, "Done: said it and lingered");
  const pids = readPids(join(fx.home.worker, "runs", "1-1", "1"))!;
  // Gone within moments of the run's end (a full run at load saw the group still there when the state said done: the
  // last process of the group not yet reaped); a group that was never stopped stays and fails this.
  await until(() => !groupAlive(pids.pgid), 5_000, "the lingering process group to be gone");
  assert.equal(readExit(join(fx.home.worker, "runs", "1-1", "1"))!.signal, "SIGTERM");
});

test("a result the hub refuses (1.6 MB of receipt, over its 1 MiB body limit) ends the run with its outcome and summary, the receipt voided on a card — the run never hangs (issue 26 round 12, F12-9)", async () => {
  // 50 notices and 50 events of 4,000 four-byte characters each: every item within its own limit, the whole too big.
  const fx = await setup(`const wide = "\\u{1F642}".repeat(4000);
const receipt = { notice: Array.from({ length: 50 }, (_, i) => ({ title: "n" + i, text: wide })), events: Array.from({ length: 50 }, (_, i) => ({ id: "big-" + i, type: "alert.y", detail: wide })) };
console.log("Did the work.\\n\`\`\`agent-autoloop\\n" + JSON.stringify(receipt) + "\\n\`\`\`");`);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  startWorker(fx);
  const st = await untilLatestRun(fx, "done");
  assert.equal(st.runs[0].summary, "Did the work.");
  assert.deepEqual(st.cards.map((c) => [c.kind, c.title]), [["notice", "The hub refused the result of run 1; its receipt was voided"]]);
  assert.match(st.cards[0].text, /^the request body is larger than 1048576 bytes\n\/.*\/worker\/runs\/1-1$/);
  assert.equal((await fx.call("GET", "/v1/events", fx.keys.owner)).body.events.length, 1, "none of the receipt's events was posted");
});

test("a voided result keeps the outcome, summary, error, session, usage and the worker's own notices, and drops the receipt", async () => {
  const { voidedResult } = await import("../src/worker/receipt.js");
  const own = { title: "The agent wrote files your git would run", text: "/p/.git/commondir → moved" };
  const body = { outcome: "done" as const, summary: "s", error: "e", session: "sess", usage: { inputTokens: 3 }, ask: [{ title: "Go?", options: ["yes"] }], notice: [own, { title: "agent's" }], events: [{ id: "x", type: "a.b" }], later: [{ key: "k", in: "1h" }], resolve: [{ card: 1 }] };
  assert.deepEqual(voidedResult(body as never, [own], "notice[1].text: wrong \u0007", 7, "/w/runs/7-1", "en"), {
    outcome: "done", summary: "s", error: "e", session: "sess", usage: { inputTokens: 3 },
    workerNotice: [own, { title: "The hub refused the result of run 7; its receipt was voided", text: "notice[1].text: wrong \n/w/runs/7-1" }],
  });
});

test("usage sums stay finite: two launches' figures near the protocol's maximum add up to Number.MAX_VALUE, not Infinity (JSON null, which the hub refused with the whole result — issue 26 round 13, F13-4)", async () => {
  const { addUsage } = await import("../src/worker/receipt.js");
  const sum = {};
  addUsage(sum, { input: 1.7e308, output: 5, cost: Number.POSITIVE_INFINITY });
  addUsage(sum, { input: 1.7e308, output: 2, cached: -1 });
  assert.deepEqual(sum, { input: Number.MAX_VALUE, output: 7 });
  assert.equal(JSON.stringify(sum), `{"input":${Number.MAX_VALUE},"output":7}`);
});

test("the worker neutralises an agent's summary and error instead of having its result refused", async () => {
  const say = (text: string, code = 0) => ["node", "-e", `console.log(${JSON.stringify(text)}); process.exitCode = ${code}`];
  const rules = { ...baseRules, agents: { bot: { worker: "local", use: "command", command: say("Done \u202eevil\u0085 ok") } }, rules: [baseRules.rules[0]] };
  const f: Fixture = await hubFixture(rules, { worker: { name: "local", key: "w".repeat(43), capacity: 1 } });
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "n1", type: "alert.x" });
    const s = await untilLatestRun(f, "done");
    assert.equal(s.runs[0].summary, "Done evil ok");
  } finally {
    await f.close();
  }
});

test("the worker neutralises and cuts what a plugin relays: a session with control characters, an error over the protocol's 4,000 characters", async () => {
  const fx = await setupPlugin("noisy", `export default {
    command: () => ["node", "-e", "0"],
    read: (stdout, code) => code === null ? { started: true, session: "s\\u001b[2J1\\u202e" } : { started: true, finished: true, session: "s\\u001b[2J1\\u202e", error: "\\u009b" + "e".repeat(5000) },
  };`);
  const run = await firstFailure(fx);
  assert.equal(run.session, "s[2J1");
  assert.equal(run.error, "e".repeat(3999) + "…");
});
