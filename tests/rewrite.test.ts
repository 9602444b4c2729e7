/**
 * Sessions through the worker with a plugin that has them: a bad receipt is rewritten on the same session (only the
 * last message, at most twice); a refused session opens a new one and runs the prompt again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { hubFixture, baseRules, until, untilLatestRun, tempDir } from "./helpers.js";
import { Worker } from "../src/worker/worker.js";

/**
 * A test agent plugin around a node script: it keeps a session in a file per session id, prints `session <id>`
 * when it takes the prompt, then a last message chosen by the test through files.
 */
const plugin = `
export default {
  command(turn) {
    return [process.execPath, ${JSON.stringify("SCRIPT")}, turn.resume ?? "", turn.prompt];
  },
  read(stdout, code) {
    const lines = stdout.split("\\n");
    const m = /^session (\\S+)$/.exec(lines[0] ?? "");
    if (code === null) return { started: !!m, session: m?.[1] };
    if (code !== 0) return { started: !!m, session: m?.[1], error: "exit " + code };
    return { started: true, finished: true, session: m?.[1], text: lines.slice(1).join("\\n").trim(), usage: { input: 10, output: 1 } };
  },
};
`;
const script = (dir: string) => `
const fs = require("fs");
const [resume, prompt] = process.argv.slice(2);
const dir = ${JSON.stringify(dir)};
if (resume && fs.existsSync(dir + "/refuse-" + resume)) { console.error("no such session"); process.exit(1); }
const session = resume || "s" + fs.readdirSync(dir).filter((f) => f.startsWith("launch")).length;
fs.writeFileSync(dir + "/launch-" + Date.now() + Math.random(), JSON.stringify({ resume, prompt }));
console.log("session " + session);
const replies = JSON.parse(fs.readFileSync(dir + "/replies.json", "utf8"));
const n = fs.readdirSync(dir).filter((f) => f.startsWith("launch")).length;
console.log(replies[Math.min(n, replies.length) - 1]);
`;

async function setup(replies: string[], refuse: string[] = []) {
  const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", use: "sessiony" } }, rules: [{ ...baseRules.rules[0], resume: true }] };
  const f = await hubFixture(rules);
  const dir = tempDir("aa-agent-state-"); // the agent's own files: outside the hub's home, which agents cannot see
  mkdirSync(dir, { recursive: true });
  mkdirSync(join(f.home.plugins, "sessiony"), { recursive: true });
  writeFileSync(join(dir, "agent.cjs"), script(dir));
  writeFileSync(join(f.home.plugins, "sessiony", "agent.mjs"), plugin.replace("SCRIPT", join(dir, "agent.cjs")));
  writeFileSync(join(dir, "replies.json"), JSON.stringify(replies));
  for (const r of refuse) writeFileSync(join(dir, `refuse-${r}`), "");
  const worker = new Worker({ url: f.url, key: f.keys.worker, name: "w1", capacity: 1, home: f.home, lang: "en" });
  void worker.run();
  const launches = () => readdirSync(dir).filter((x) => x.startsWith("launch")).sort().map((x) => JSON.parse(readFileSync(join(dir, x), "utf8")) as { resume: string; prompt: string });
  return { f, worker, launches };
}

const block = (body: string) => "```agent-autoloop\n" + body + "\n```";

test("a bad receipt is rewritten on the same session, asking only for the last message", async () => {
  const { f, worker, launches } = await setup([
    "Did the work.\n" + block('{"ask": [{"title": "Q"}]}'),
    "Did the work.\n" + block('{"ask": [{"title": "Q", "options": ["a", "b"]}]}'),
  ]);
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x" });
    const st = await untilLatestRun(f, "done");
    assert.equal(st.runs[0].summary, "Did the work.");
    assert.deepEqual(st.cards.map((c) => [c.title, c.options]), [["Q", ["a", "b"]]]);
    assert.deepEqual(st.runs[0].usage, { input: 20, output: 2 }, "the rewrite's usage counts too");
    const l = launches();
    assert.equal(l.length, 2);
    assert.equal(l[1]!.resume, "s0", "the rewrite continues the same session");
    assert.match(l[1]!.prompt, /^The receipt in your last message could not be read: receipt: ask\[0\]\.options: required\. Do not redo any work/);
  } finally {
    worker.stop();
    await f.close();
  }
});

test("a receipt still unreadable after two rewrites is voided: the outcome stands and a card points at the output", async () => {
  const { f, worker } = await setup(["Fixed it.\n" + block("{bad")]);
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x" });
    const st = await untilLatestRun(f, "done");
    assert.equal(st.runs[0].summary, "Fixed it.");
    assert.deepEqual(st.runs[0].usage, { input: 30, output: 3 }, "one launch and two rewrites");
    assert.equal(st.cards[0].title, "The receipt of run 1 could not be read and was voided");
    assert.match(st.cards[0].text, /\/worker\/runs\/1-1\/3\/stdout$/);
  } finally {
    worker.stop();
    await f.close();
  }
});

test("'Needs you' without an ask is rewritten on the same session; the ask it then gives becomes the card", async () => {
  const { f, worker, launches } = await setup([
    "Needs you: the deploy key was revoked",
    "Needs you: the deploy key was revoked\n" + block('{"ask": [{"title": "Deploy key revoked", "options": ["I renewed it", "Skip deploys"]}]}'),
  ]);
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x" });
    const st = await untilLatestRun(f, "done");
    assert.equal(st.runs[0].summary, "Needs you: the deploy key was revoked");
    assert.deepEqual(st.cards.map((c) => [c.kind, c.title, c.options]), [["ask", "Deploy key revoked", ["I renewed it", "Skip deploys"]]]);
    const l = launches();
    assert.equal(l.length, 2);
    assert.equal(l[1]!.resume, "s0", "the rewrite continues the same session");
    assert.match(l[1]!.prompt, /^The receipt in your last message could not be read: the first line says the owner must act, but the receipt has no ask \(a question for the owner must be an ask in the receipt, or nobody sees it\)\. Do not redo any work/);
  } finally {
    worker.stop();
    await f.close();
  }
});

test("a last message that is a plain question, still without an ask after two rewrites: one notice with the first line and where the output is", async () => {
  const { f, worker, launches } = await setup(["Which region should the new bucket go to?"]);
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x" });
    const st = await untilLatestRun(f, "done");
    assert.equal(st.runs[0].summary, "Which region should the new bucket go to?");
    assert.equal(launches().length, 3, "one launch and two rewrites");
    assert.match(launches()[1]!.prompt, /could not be read: the message ends with a question, but the receipt has no ask/);
    assert.deepEqual(st.cards.map((c) => [c.kind, c.title]), [["notice", "Run 1 ended with a question but asked you nothing"]]);
    assert.match(st.cards[0].text, /^Which region should the new bucket go to\?\n\/.*\/worker\/runs\/1-1\/3\/stdout$/);
  } finally {
    worker.stop();
    await f.close();
  }
});

test("a question the rewrite turns into a plain conclusion makes no card", async () => {
  const { f, worker, launches } = await setup(["Fixed it. Want me to also bump the version?", "Fixed it; the version stays."]);
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x" });
    const st = await untilLatestRun(f, "done");
    assert.equal(launches().length, 2);
    assert.deepEqual(st.cards, []);
    assert.equal(st.runs[0].summary, "Fixed it. Want me to also bump the version?", "the first message's outcome and summary stand");
  } finally {
    worker.stop();
    await f.close();
  }
});

test("a refused session opens a new one and runs the prompt again; resume goes on with the lane's session", async () => {
  const { f, worker } = await setup(["Done: first.", "Done: second."], ["s0"]);
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x" });
    await until(async () => (await f.call("GET", "/v1/state", f.keys.owner)).body.runs[0]?.state === "done", 20_000, "run 1");
    const s1 = (await f.call("GET", "/v1/state", f.keys.owner)).body.runs[0];
    assert.equal(s1.session, "s0", "a new session");
    // rule resume: the next run is offered s1, which the agent refuses; it starts again in a new session
    await f.call("POST", "/v1/events", f.keys.source, { id: "e2", type: "alert.x" });
    const s2 = await until(async () => {
      const s = (await f.call("GET", "/v1/state", f.keys.owner)).body;
      return s.runs[0]?.id === 2 && s.runs[0].state === "done" && s.runs[0];
    }, 20_000, "run 2");
    assert.equal(s2.session, "s1");
    assert.equal(s2.summary, "Done: second.");
  } finally {
    worker.stop();
    await f.close();
  }
});
