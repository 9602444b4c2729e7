/**
 * Declarative workflows that run (issue 18 "Workflows run", "Intents", "Prompts"): a real `serve` process (hub and its
 * worker) with a declarative plugin in the home, a real tool plugin (node, sync) for the `tool` step, and a `command`
 * agent (node) for the `prompt` step.
 *
 * - all four step types end to end: the tool call goes through the hub's approvals (first use asks the owner) and is
 *   audited; the prompt step's agent gets the filled template; the hitl step is the run's ask and the run ends; the
 *   answer's run goes on at the next step and writes the artifact, listed in `why` through the run's notice;
 * - the hub killed with SIGKILL between the hitl step and its answer: after a restart the answer resumes the workflow
 *   at the artifact step (no tool call, no agent launch again);
 * - an intent as a rule's `when`, matched without case in the Unicode sense (Chinese, `ß`/`SS`, `Σ`/`ς`), its slots
 *   asked as one form before the workflow starts, the answers reaching the prompt step;
 * - a prompt by reference as a rule's prompt; a workflow that is not loaded fails its run naming it.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { endAgentsIn, engine, makeHome, serveProcess, streamFacts, until, type Keys, type ServeProcess, freePort } from "./helpers.js";
import { factRows } from "./tool-calls-helpers.js";
import { newKey, type Home } from "../src/host/home.js";
import { timeline } from "../src/cli/why.js";
import type { OwnerCard, RunView, State, Why } from "../src/protocol/responses.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { readForm, visible } from "../src/worker/workflow.js";

const homes: string[] = [];
const serves: ServeProcess[] = [];
after(async () => {
  for (const s of serves) s.child.kill("SIGKILL");
  for (const dir of homes) {
    await endAgentsIn(dir); // agents left under their own supervisors by a killed hub
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The prompt step's agent: its last message is "Done: drafted", then the first paragraph of its prompt. */
const agentScript = `const p = process.argv[1]; console.log("Done: drafted\\n\\n" + p.split("\\n\\n")[0]);`;

/** A sync tool plugin `echo` (node): `say` answers `echo: <text>` and appends each call to calls.log in its folder. */
const echoMain = String.raw`
const fs = require("fs");
const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", (l) => {
  const r = JSON.parse(l);
  try { fs.appendFileSync(require("path").join(__dirname, "calls.log"), JSON.stringify(r.params.arguments) + "\n"); } catch {}
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: r.id, result: { content: "echo: " + r.params.arguments.text } }) + "\n");
});
`;

/** Writes the tool plugin `echo` and the declarative plugin `flow` (workflow `review`, prompt `writer`, intent `ask`). */
function writePlugins(home: Home): void {
  const echo = join(home.plugins, "echo");
  mkdirSync(echo, { recursive: true });
  writeFileSync(join(echo, "main.js"), echoMain);
  writeFileSync(join(echo, "manifest.toml"), [
    `name = "echo"`, `version = "0.1.0"`, `plugin_type = "sync"`, `[entry_point]`, `command = "node"`, `args = ["main.js"]`,
    `[[capabilities.tools]]`, `name = "say"`, `description = "say it back"`,
  ].join("\n") + "\n");
  const flow = join(home.plugins, "flow");
  for (const d of ["workflows", "prompts", "intents", "cards"]) mkdirSync(join(flow, d), { recursive: true });
  writeFileSync(join(flow, "plugin.json"), JSON.stringify({
    id: "flow", name: "Flow", version: "0.1.0", apiVersion: "1.0",
    provides: { workflows: ["review", "brief", "carded"], prompts: ["writer", "brief"], intents: ["ask"], cards: ["confirm"] },
  }));
  writeFileSync(join(flow, "cards", "confirm.json"), JSON.stringify({ kind: "confirm", title: "Confirm", data: [{ type: "markdown", markdown: "Look before you go on." }] }));
  writeFileSync(join(flow, "workflows", "carded.json"), JSON.stringify({
    id: "carded",
    steps: [
      { id: "look", type: "hitl", title: "Look at this", text: "About {{event.summary}}", card: "confirm" },
      { id: "keep", type: "artifact", from: "look", file: "look.txt" },
    ],
  }));
  writeFileSync(join(flow, "workflows", "review.json"), JSON.stringify({
    id: "review", title: "Review an alert",
    steps: [
      { id: "look", type: "tool", tool: "echo.say", args: { text: "{{event.summary}}" } },
      { id: "draft", type: "prompt", promptRef: "writer" },
      { id: "confirm", type: "hitl", title: "Keep the draft?", text: "{{steps.draft}}", options: ["Keep", "Drop"], continueOn: ["Keep"] },
      { id: "save", type: "artifact", from: "draft", file: "draft.md" },
    ],
  }));
  writeFileSync(join(flow, "workflows", "brief.json"), JSON.stringify({
    id: "brief", intentId: "ask",
    steps: [{ id: "write", type: "prompt", prompt: "Brief on {{slots.topic}} ({{slots.depth}}), asked: {{event.summary}}" }],
  }));
  writeFileSync(join(flow, "prompts", "writer.md"), "Write a note about: {{steps.look}}\n\nKeep it short.\n");
  writeFileSync(join(flow, "prompts", "brief.md"), "You write briefs for the owner.");
  writeFileSync(join(flow, "intents", "ask.json"), JSON.stringify([{
    id: "ask", includes_any: ["示例报告", "STRASSE", "ΟΔΟΣ"],
    slots: [
      { name: "topic", label: "Topic", required: true },
      { name: "depth", label: "Depth", type: "select", options: ["short", "detailed"], default: "short" },
    ],
  }]));
}

/** A home whose `serve` runs worker "local", with rules `rules` (agent `writer`, sources shop and crm). */
function workflowHome(rules: unknown[]): { dir: string; home: Home; keys: Keys } {
  const made = makeHome({
    timezone: "UTC",
    sources: { shop: { name: "Shop" }, crm: { name: "CRM" } },
    agents: { writer: { worker: "local", use: "command", command: ["node", "-e", agentScript, "{prompt}"] } },
    channels: {},
    rules,
  }, { worker: { name: "local", key: newKey(), capacity: 2 } });
  homes.push(made.dir);
  writePlugins(made.home);
  return made;
}

async function serve(dir: string): Promise<ServeProcess> {
  const s = await serveProcess(dir);
  serves.push(s);
  return s;
}

async function call(s: ServeProcess, method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(s.url + path, {
    method, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function state(s: ServeProcess, keys: Keys): Promise<State> {
  const r = await call(s, "GET", "/v1/state", keys.owner);
  assert.equal(r.status, 200);
  return r.body as State;
}

async function openCard(s: ServeProcess, keys: Keys, title: string): Promise<OwnerCard> {
  return until(async () => (await state(s, keys)).cards.find((c) => c.title === title && c.state === "open"), 30_000, () => `card "${title}" (${s.output()})`);
}

async function runEnded(s: ServeProcess, keys: Keys, id: number): Promise<RunView> {
  return until(async () => {
    const r = (await state(s, keys)).runs.find((x) => x.id === id);
    return r && ["done", "failed", "nothing", "cancelled"].includes(r.state) && r;
  }, 60_000, () => `run ${id} to end (${s.output()})`);
}

async function answer(s: ServeProcess, keys: Keys, card: number, body: { choice?: number; text?: string }): Promise<void> {
  const r = await call(s, "POST", `/v1/cards/${card}/answer`, keys.owner, body);
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

const reviewRule = { name: "review", when: { source: "shop", types: ["alert.*"] }, to: "writer", cwd: "/tmp", use: "workflow", workflow: "flow/review", tools: ["echo.*"] };

/** Runs the review workflow up to its hitl card: the tool call approved on its card, the draft made. */
async function upToHitl(s: ServeProcess, keys: Keys): Promise<{ card: OwnerCard; run: RunView }> {
  const posted = await call(s, "POST", "/v1/events", keys.source, { id: "e1", type: "alert.disk", summary: "Disk Full on db1" });
  assert.deepEqual(posted.body.routed, ["review"]);
  // The tool step is an agent's call like any other: the first use of a plugin that is not built in asks the owner.
  const approval = await openCard(s, keys, "Allow echo.say?");
  await answer(s, keys, approval.id, { choice: 1 });
  const card = await openCard(s, keys, "Keep the draft?");
  const run = await runEnded(s, keys, 1);
  return { card, run };
}

const draft = "Done: drafted\n\nWrite a note about: echo: Disk Full on db1";

test("a workflow with all four step types runs end to end: tool (approved, audited), prompt, hitl (no process waits), artifact in why", async () => {
  const { dir, home, keys } = workflowHome([reviewRule]);
  const s = await serve(dir);
  const { card, run } = await upToHitl(s, keys);
  assert.deepEqual([run.state, run.summary], ["done", "Workflow flow/review waits for your answer: Keep the draft?"]);
  assert.match(run.session ?? "", /^wf-[0-9a-f-]{36}-\d+$/);
  assert.deepEqual([card.text, card.options, card.run], [draft, ["Keep", "Drop"], 1]);
  assert.equal(card.about, `workflow flow/review · confirm · ${run.session!.slice(3, 39)}`);
  assert.deepEqual(readFileSync(join(home.plugins, "echo", "calls.log"), "utf8"), `{"text":"Disk Full on db1"}\n`);

  await answer(s, keys, card.id, { choice: 0 });
  const second = await runEnded(s, keys, 2);
  assert.deepEqual([second.state, second.summary], ["done", "Workflow flow/review done: 4 steps; files: draft.md"]);
  const file = join(home.worker, "runs", "2-1", "agent", "artifacts", "draft.md");
  assert.equal(readFileSync(file, "utf8"), draft);
  // The second run ran only what was left: no agent launch, no tool call.
  assert.deepEqual(readdirSync(join(home.worker, "runs", "2-1")).filter((n) => /^\d+$/.test(n)), []);
  assert.equal(readFileSync(join(home.plugins, "echo", "calls.log"), "utf8").split("\n").length, 2);

  const why1 = (await call(s, "GET", "/v1/runs/1/why", keys.owner)).body as Why;
  const told1 = timeline(1, why1.facts).join("\n");
  assert.match(told1, /called tool echo\.say: allowed by the answer on card #1/);
  assert.match(told1, /tool echo\.say finished \(\d+ ms\)/);
  const why2 = (await call(s, "GET", "/v1/runs/2/why", keys.owner)).body as Why;
  // The artifact is listed in why: the run's notice (fyi) names its file, size, path and doc-ref id.
  const cards = why2.facts.flatMap((f) => f.changes).filter((c) => c[0] === "cards").map((c) => c[2] as { kind: string; run: number; title: string; text: string });
  const notice = cards.find((c) => c.kind === "notice" && c.run === 2);
  assert.equal(notice?.title, "Workflow flow/review wrote 1 file(s)");
  assert.equal(notice?.text, `draft.md (${Buffer.byteLength(draft)} bytes): ${file} · doc-ref run:2/draft.md · /v1/runs/2/artifacts/draft.md`);
  // The hub got the file from the worker: the owner opens it by that route (tests/artifacts.test.ts: its refusals).
  assert.deepEqual(why2.artifacts, [{ file: "draft.md", bytes: Buffer.byteLength(draft), path: "/v1/runs/2/artifacts/draft.md" }]);
  const served = await fetch(`${s.url}/v1/runs/2/artifacts/draft.md`, { headers: { authorization: `Bearer ${keys.owner}` } });
  assert.equal(await served.text(), draft);
  assert.ok(why2.facts.some((f) => JSON.stringify(f.changes).includes("doc-ref run:2/draft.md")), "the artifact is in why");
  await s.stop();
});

test("issue 26 round 53, F53b-1/2 (reported cases: Cancel on a workflow's hitl card went on to the step that sent the draft; the drafting agent was offered the rule's tools and called them itself): an answer outside continueOn ends the workflow there; a prompt step's agent is offered no tools", async () => {
  // The spy says what its launch was offered: the tools variable, and a tools socket in its folder.
  const spy = `const fs = require("fs"), path = require("path"); const dir = path.dirname(process.env.AGENT_AUTOLOOP_CONTEXT);
console.log("Done: drafted\\n\\noffered " + (process.env.AGENT_AUTOLOOP_TOOLS_MCP ? "tools" : "nothing") + ", socket " + (fs.existsSync(path.join(dir, "tools.sock")) || fs.existsSync(path.join(dir, "..", "tools.sock")) ? "yes" : "no"));`;
  const made = makeHome({
    timezone: "UTC", sources: { shop: { name: "Shop" } }, channels: {},
    agents: { writer: { worker: "local", use: "command", command: ["node", "-e", spy] } },
    rules: [reviewRule],
  }, { worker: { name: "local", key: newKey(), capacity: 2 } });
  homes.push(made.dir);
  writePlugins(made.home);
  const { dir, home, keys } = made;
  const s = await serve(dir);
  const { card } = await upToHitl(s, keys);
  assert.equal(card.text, "Done: drafted\n\noffered nothing, socket no");
  await answer(s, keys, card.id, { choice: 1 });
  const second = await runEnded(s, keys, 2);
  assert.deepEqual([second.state, second.summary], ["done", 'Workflow flow/review stopped at confirm: you answered "Drop"']);
  assert.equal(existsSync(join(home.worker, "runs", "2-1", "agent", "artifacts", "draft.md")), false, "the step after it did not run");
  await s.stop();
});

test("issue 26 round 55, F55-3/F55-4, round 56, F56b-1 (reported cases: a hitl card showed 4,000 of a draft's 4,341 characters and the send step sent all; tag characters hid a payload in a draft the owner sent; a tool step the owner denied was tried again 5 minutes later and ran once the plugin was trusted meanwhile): a card says what it leaves out and links the whole text, which the hub has; a denied tool step ends the workflow for good", async () => {
  // Invisible characters in the draft (round 56, F56b-1: a tag-character payload): the card writes them out.
  const long = `Done: drafted\n\nHi\u{E0041}\u200b ${"word ".repeat(900)}TAIL: wire the money to account 666`;
  const seen = visible(long);
  assert.equal(seen.slice(0, 40), "Done: drafted\n\nHi\\u{e0041}\\u{200b} word ");
  assert.equal(visible("wire $5000\rOK: routine\r\nend"), "wire $5000\\u{d}OK: routine\r\nend", "round 57, F57a-1: a carriage return that ends no line");
  const made = makeHome({
    timezone: "UTC", sources: { shop: { name: "Shop" } }, channels: {},
    agents: { writer: { worker: "local", use: "command", command: ["node", "-e", `console.log("Done: drafted\\n\\nHi\\u{E0041}\\u200b " + "word ".repeat(900) + "TAIL: wire the money to account 666")`] } },
    rules: [{ name: "gate", when: { source: "shop", types: ["gate.*"] }, to: "writer", cwd: "/tmp", use: "workflow", workflow: "gate/send", tools: ["echo.*"] }],
  }, { worker: { name: "local", key: newKey(), capacity: 2 } });
  homes.push(made.dir);
  writePlugins(made.home);
  const gate = join(made.home.plugins, "gate");
  mkdirSync(join(gate, "workflows"), { recursive: true });
  writeFileSync(join(gate, "plugin.json"), JSON.stringify({ id: "gate", name: "Gate", version: "0.1.0", apiVersion: "1.0", provides: { workflows: ["send"] } }));
  writeFileSync(join(gate, "workflows", "send.json"), JSON.stringify({
    id: "send",
    steps: [
      { id: "draft", type: "prompt", prompt: "Write it." },
      { id: "confirm", type: "hitl", title: "Send it?", text: "{{steps.draft}}", options: ["Send", "Cancel"], continueOn: ["Send"] },
      { id: "send", type: "tool", tool: "echo.say", args: { text: "{{steps.draft}}" } },
    ],
  }));
  const { keys } = made;
  const s = await serve(made.dir);
  const posted = await call(s, "POST", "/v1/events", keys.source, { id: "g1", type: "gate.go" });
  assert.deepEqual(posted.body.routed, ["gate"]);
  const card = await openCard(s, keys, "Send it?");
  const text = [...card.text!];
  assert.ok(text.length <= 4000, `${text.length} codepoints`);
  const [head, note] = card.text!.split("…\n\n");
  assert.ok(seen.startsWith(head!), "the card shows the text's head, every character of it visible");
  assert.equal(note, `${[...seen].length - [...head!].length} more characters not shown: the whole text is doc-ref run:1/confirm.card.txt · /v1/runs/1/artifacts/confirm.card.txt (the console opens it). Do not agree before reading it whole.`);
  const whole = await fetch(`${s.url}/v1/runs/1/artifacts/confirm.card.txt`, { headers: { authorization: `Bearer ${keys.owner}` } });
  assert.equal(await whole.text(), seen, "the hub has the whole text the step after it sends, as the card writes it");

  await answer(s, keys, card.id, { choice: 0 });
  const approval = await openCard(s, keys, "Allow echo.say?");
  await answer(s, keys, approval.id, { choice: approval.options.indexOf("deny") });
  const second = await runEnded(s, keys, 2);
  assert.equal(second.state, "done");
  assert.match(second.summary ?? "", /^Workflow gate\/send stopped at send for good: /);
  assert.equal(existsSync(join(made.home.plugins, "echo", "calls.log")), false, "the tool did not run");
  const after = await state(s, keys);
  assert.deepEqual(after.runs.map((r) => [r.id, r.state]).sort(), [[1, "done"], [2, "done"]], "no retry waits");
  await s.stop();
});

test("a workflow survives a hub SIGKILL between its hitl and the answer: the answer resumes it at the next step", async () => {
  const { dir, home, keys } = workflowHome([reviewRule]);
  const first = await serve(dir);
  const { card } = await upToHitl(first, keys);
  first.child.kill("SIGKILL");
  await new Promise((r) => first.child.once("exit", r));

  const again = await serve(dir);
  await answer(again, keys, card.id, { choice: 0 });
  const second = await runEnded(again, keys, 2);
  assert.deepEqual([second.state, second.summary], ["done", "Workflow flow/review done: 4 steps; files: draft.md"]);
  assert.equal(readFileSync(join(home.worker, "runs", "2-1", "agent", "artifacts", "draft.md"), "utf8"), draft);
  assert.deepEqual(readdirSync(join(home.worker, "runs", "2-1")).filter((n) => /^\d+$/.test(n)), [], "no step before the hitl ran again");
  assert.equal(readFileSync(join(home.plugins, "echo", "calls.log"), "utf8"), `{"text":"Disk Full on db1"}\n`);
  await again.stop();
});

test("an intent as when: Unicode-aware match, its slots asked as one form before the workflow, the answers reach it; a prompt by reference", async () => {
  const { dir, home, keys } = workflowHome([
    { name: "brief", when: { source: "shop", intent: "flow/ask" }, to: "writer", cwd: "/tmp", use: "workflow", workflow: "flow/brief" },
    { name: "plain", when: { source: "crm" }, to: "writer", cwd: "/tmp", promptRef: "flow/brief", prompt: "Then say hello." },
    { name: "gone", when: { source: "crm", types: ["gone"] }, to: "writer", cwd: "/tmp", use: "workflow", workflow: "flow/missing" },
  ]);
  const s = await serve(dir);
  // What rules can name, listed for copying by GET /v1/plugins.
  const listed = ((await call(s, "GET", "/v1/plugins", keys.owner)).body as { manifest: { id: string }; prompts?: { ref: string }[]; workflows?: unknown; intents?: unknown }[]).find((p) => p.manifest.id === "flow")!;
  assert.deepEqual([...listed.prompts!].sort((a, b) => a.ref.localeCompare(b.ref)), [
    { ref: "flow/brief", text: "You write briefs for the owner." },
    { ref: "flow/writer", text: "Write a note about: {{steps.look}}\n\nKeep it short.\n" },
  ]);
  assert.deepEqual(listed.intents, [{ ref: "flow/ask", includes_any: ["示例报告", "STRASSE", "ΟΔΟΣ"], slots: ["topic", "depth"] }]);
  const post = async (id: string, summary: string, detail?: string) => {
    const body = (await call(s, "POST", "/v1/events", keys.source, { id, type: "chat.message", summary, ...(detail ? { detail } : {}) })).body;
    return [...body.routed, ...body.paused] as string[];
  };
  // While the rule is paused, an event that hits its intent lists it in `paused` (and starts nothing).
  assert.equal((await call(s, "POST", "/v1/rules/brief/pause", keys.owner, {})).status, 200);
  assert.deepEqual(await post("m2", "hello", "Take the Straße"), ["brief"], "ß matches SS");
  assert.deepEqual(await post("m3", "ein STRAẞE"), ["brief"], "ẞ matches SS");
  assert.deepEqual(await post("m4", "no: ΟΔΟΣ"), ["brief"], "Σ at the end of a word matches the intent's Σ");
  assert.deepEqual(await post("m5", "nothing here", "示例"), [], "a part of a phrase is not the phrase");
  assert.equal((await call(s, "POST", "/v1/rules/brief/resume", keys.owner, {})).status, 200);
  assert.deepEqual(await post("m1", "请给我一份示例报告"), ["brief"]);

  const form = await openCard(s, keys, "Before flow/brief starts, please fill in");
  assert.equal(form.text, "Answer with one line per field, \"name: value\" (or one JSON object):\n- topic: Topic — required\n- depth: Depth (short | detailed) — default short");
  await answer(s, keys, form.id, { text: "depth: detailed" });
  const again = await until(async () => (await state(s, keys)).cards.find((c) => c.title === form.title && c.state === "open" && c.id !== form.id), 30_000, "the form asked again");
  assert.match(again.text ?? "", /^Still missing: topic\n/);
  await answer(s, keys, again.id, { text: "topic: 数据库\ndepth: detailed" });
  const done = await until(async () => (await state(s, keys)).runs.find((r) => r.rule === "brief" && r.summary?.startsWith("Workflow flow/brief done")), 60_000, () => `the brief (${s.output()})`);
  const runDir = join(home.worker, "runs", `${done.id}-1`);
  const launch = readdirSync(runDir).filter((n) => /^\d+$/.test(n));
  assert.equal(launch.length, 1);
  assert.equal(readFileSync(join(runDir, launch[0]!, "stdout"), "utf8"), "Done: drafted\n\nBrief on 数据库 (detailed), asked: 请给我一份示例报告\n");

  // A prompt by reference: the asset's text, then the rule's own prompt.
  await call(s, "POST", "/v1/events", keys.source2, { id: "c1", type: "note" });
  const plain = await until(async () => (await state(s, keys)).runs.find((r) => r.rule === "plain" && r.state === "done"), 60_000, "the plain run");
  assert.equal(plain.summary, "Done: drafted");
  const plainDir = join(home.worker, "runs", `${plain.id}-1`, "1");
  assert.match(readFileSync(join(plainDir, "stdout"), "utf8"), /^Done: drafted\n\nYou write briefs for the owner\.\n$/);
  assert.ok(existsSync(plainDir));

  // A workflow that is not loaded: the run fails naming it (the rules file cannot know what a reload will bring).
  await call(s, "POST", "/v1/events", keys.source2, { id: "c2", type: "gone" });
  const gone = await until(async () => (await state(s, keys)).runs.find((r) => r.rule === "gone" && r.error), 60_000, "the gone run");
  assert.equal(gone.error, "workflow not loaded: flow/missing (rules.json workflow; see agent-autoloop plugins list)");
  await s.stop();
});

test("an intent-only rule takes an event of any source: its slots form answered, the workflow goes on; a hitl card step is an ask naming its card template", async () => {
  const { dir, home, keys } = workflowHome([
    { name: "brief", when: { intent: "flow/ask" }, to: "writer", cwd: "/tmp", use: "workflow", workflow: "flow/brief" },
    { name: "carded", when: { source: "shop", types: ["card.*"] }, to: "writer", cwd: "/tmp", use: "workflow", workflow: "flow/carded" },
  ]);
  const s = await serve(dir);
  const posted = await call(s, "POST", "/v1/events", keys.source2, { id: "m1", type: "chat.message", summary: "请给我一份示例报告" });
  assert.deepEqual([posted.status, posted.body.routed], [200, ["brief"]], "an event of crm, a source the rule does not name");
  const missed = await call(s, "POST", "/v1/events", keys.source, { id: "m2", type: "chat.message", summary: "nothing to see" });
  assert.deepEqual(missed.body.routed, [], "no hit, no run");
  const form = await openCard(s, keys, "Before flow/brief starts, please fill in");
  await answer(s, keys, form.id, { text: "topic: 数据库" });
  const done = await until(async () => (await state(s, keys)).runs.find((r) => r.rule === "brief" && r.summary?.startsWith("Workflow flow/brief done")), 60_000, () => `the brief (${s.output()})`);
  assert.deepEqual((await state(s, keys)).runs.filter((r) => r.rule === "brief").map((r) => [r.id, r.state]), [[done.id, "done"], [1, "done"]]);
  const runDir = join(home.worker, "runs", `${done.id}-1`);
  const launch = readdirSync(runDir).filter((n) => /^\d+$/.test(n));
  assert.equal(readFileSync(join(runDir, launch[0]!, "stdout"), "utf8"), "Done: drafted\n\nBrief on 数据库 (short), asked: 请给我一份示例报告\n");
  const events = ((await call(s, "GET", `/v1/runs/${done.id}/why`, keys.owner)).body as Why).facts.flatMap((f) => f.changes)
    .filter((c) => c[0] === "events" && c[2] !== null).map((c) => c[2] as { source: string; type: string });
  assert.ok(events.some((e) => e.source === "intent:flow/ask" && e.type === "card.answer"), JSON.stringify(events));

  // A hitl step of kind card: the ask names the plugin's card template, which the console shows whole.
  await call(s, "POST", "/v1/events", keys.source, { id: "k1", type: "card.look", summary: "the release" });
  const card = await openCard(s, keys, "Look at this");
  assert.deepEqual([card.template, card.text, card.options], ["flow/confirm", "About the release", ["OK"]]);
  await answer(s, keys, card.id, { choice: 0 });
  const carded = await until(async () => (await state(s, keys)).runs.find((r) => r.rule === "carded" && r.summary?.startsWith("Workflow flow/carded done")), 60_000, () => `the carded run (${s.output()})`);
  assert.equal(readFileSync(join(home.worker, "runs", `${carded.id}-1`, "agent", "artifacts", "look.txt"), "utf8"), "OK");
  await s.stop();
});

test("forms read lines or JSON; a rule names workflows, intents and prompts by <plugin>/<name> (its refusals: tests/rules-table.test.ts)", () => {
  const fields = [{ name: "topic", label: "Topic", required: true }, { name: "n", label: "N", type: "number" }, { name: "ok", label: "OK", type: "checkbox" }];
  assert.deepEqual(readForm("topic: a: b\nn = 3\nok: yes", fields), { values: { topic: "a: b", n: 3, ok: true }, missing: [] });
  assert.deepEqual(readForm(`{"topic": "t", "n": "x"}`, fields), { values: { topic: "t" }, missing: [] });
  assert.deepEqual(readForm(null, fields), { values: {}, missing: ["topic"] });

  const base = { sources: { s: {} }, agents: { a: { worker: "w", use: "command", command: ["x"] } } };
  const parse = (rule: Record<string, unknown>) => parseRules(JSON.stringify({ ...base, rules: [{ name: "r", when: { source: "s" }, to: "a", ...rule }] }), { timezone: "UTC" });
  const ok = parse({ when: { source: "s", intent: "p/i" }, use: "workflow", workflow: "p/w", promptRef: "p/x" });
  assert.ok(ok.ok);
  assert.deepEqual(ok.ok && [ok.rules.rules[0]!.intent, ok.rules.rules[0]!.use, ok.rules.rules[0]!.workflow, ok.rules.rules[0]!.promptRef], ["p/i", "workflow", "p/w", "p/x"]);
});

test("the docs' notes workflow, taken from docs/plugins/declarative-plugins.md itself, runs as written: the form, the draft, the answer, the file", async () => {
  const readme = readFileSync(join(engine, "docs", "plugins", "declarative-plugins.md"), "utf8");
  const heredoc = (file: string) => {
    const m = new RegExp(`cat > "\\$H/plugins/notes/${file.replace(".", "\\.")}" <<'JSON'\\n([\\s\\S]*?)\\nJSON\\n`).exec(readme);
    assert.ok(m, `the page writes ${file}`);
    return m[1]!;
  };
  const writer = /^echo '(.*)' > "\$H\/plugins\/notes\/prompts\/writer\.md"$/m.exec(readme);
  const rule = /^# rules\.json: (\{ "name": "notes"[^\n]*\n#\s+([^\n]*) \}$)/m.exec(readme);
  assert.ok(writer && rule, "the page writes the prompt and the rule");
  const ruleJson = JSON.parse(`${rule[1]!.slice(0, rule[1]!.indexOf("\n"))} ${rule[2]!} }`) as Record<string, unknown>;
  const { dir, home, keys } = workflowHome([{ ...ruleJson, when: { source: "shop", intent: "notes/ask" }, cwd: "/tmp" }]);
  const notes = join(home.plugins, "notes");
  for (const d of ["workflows", "prompts", "intents"]) mkdirSync(join(notes, d), { recursive: true });
  for (const f of ["plugin.json", "intents/ask.json", "workflows/note.json"]) writeFileSync(join(notes, f), heredoc(f));
  writeFileSync(join(notes, "prompts", "writer.md"), `${writer[1]!}\n`);
  const s = await serve(dir);
  const posted = await call(s, "POST", "/v1/events", keys.source, { id: "m1", type: "chat.message", summary: "Please WRITE A NOTE on backups" });
  assert.deepEqual(posted.body.routed, ["notes"]);
  await answer(s, keys, (await openCard(s, keys, "Before notes/note starts, please fill in")).id, { text: "topic: backups" });
  const keep = await openCard(s, keys, "Keep this note?");
  const text = "Done: drafted\n\nWrite a short note about backups. The request: Please WRITE A NOTE on backups";
  assert.equal(keep.text, text);
  await answer(s, keys, keep.id, { choice: 0 });
  const done = await until(async () => (await state(s, keys)).runs.find((r) => r.summary === "Workflow notes/note done: 3 steps; files: note.md"), 60_000, () => `the note (${s.output()})`);
  assert.equal(readFileSync(join(home.worker, "runs", `${done.id}-1`, "agent", "artifacts", "note.md"), "utf8"), text);
  await s.stop();
});


test("a workflow whose HTTP tool posts the event its own rule takes stops at the hop limit: each event one hop deeper than its run (issue 26, finding 12)", async () => {
  // The reported case: such a workflow ran 100 times in 15 s, every event at hops 0. The tool names the hub as
  // localhost while the worker reaches it at 127.0.0.1 (another loopback name of the same hub).
  const port = await freePort();
  const made = makeHome({
    timezone: "UTC", sources: { shop: { name: "Shop" } }, channels: {},
    agents: { writer: { worker: "local", use: "command", command: ["node", "-e", agentScript, "{prompt}"] } },
    rules: [{ name: "loop", when: { source: "shop", types: ["loop.*"] }, to: "writer", cwd: "/tmp", use: "workflow", workflow: "loop/again", tools: ["loop.*"] }],
  }, { worker: { name: "local", key: newKey(), capacity: 2 } });
  homes.push(made.dir);
  const dir = join(made.home.plugins, "loop");
  for (const d of ["tools", "workflows"]) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, "plugin.json"), JSON.stringify({
    id: "loop", name: "Loop", version: "0.1.0", apiVersion: "1.0", requires: { network: [`localhost:${port}`] },
    provides: { tools: ["post"], workflows: ["again"], settings: ["key"] },
  }));
  writeFileSync(join(dir, "settings.json"), JSON.stringify([{ key: "key", label: "Source key", type: "secret" }]));
  writeFileSync(join(dir, "tools", "post.json"), JSON.stringify({
    name: "post", description: "post the next event", parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    http: { method: "POST", url: `http://localhost:${port}/v1/events`, authRef: "key", body: { id: "{{param.id}}x", type: "loop.again", summary: "{{param.id}}x" }, resultPath: "" },
  }));
  writeFileSync(join(dir, "workflows", "again.json"), JSON.stringify({ id: "again", steps: [{ id: "post", type: "tool", tool: "loop.post", args: { id: "{{event.summary}}" } }] }));
  writeFileSync(made.home.secrets, `AGENT_AUTOLOOP_PLUGIN_SECRET__loop__key="${made.keys.source}"\n`);
  const s = await serveProcess(made.dir, undefined, undefined, `127.0.0.1:${port}`);
  serves.push(s);
  const keys = made.keys;
  const posted = await call(s, "POST", "/v1/events", keys.source, { id: "a", type: "loop.go", summary: "a" });
  assert.deepEqual(posted.body.routed, ["loop"]);
  // An HTTP tool asks first; "always allow" lets the later calls through at once.
  const approval = await openCard(s, keys, "Allow loop.post?");
  await answer(s, keys, approval.id, { choice: 1 });
  await openCard(s, keys, "An event chain went past 8 hops and was not dispatched");
  await until(async () => (await state(s, keys)).runs.every((r) => ["done", "failed", "nothing", "cancelled"].includes(r.state)), 60_000, () => `the runs to end (${s.output()})`);
  const runs = (await state(s, keys)).runs;
  assert.deepEqual(runs.map((r) => r.state), Array(9).fill("done"), "one run for each hop 0 to 8, then no more");
  const events = [...factRows(await streamFacts({ url: s.url, keys, state: () => state(s, keys) }), "events").values()];
  assert.deepEqual(events.map((e) => [e!.sid, e!.hops, e!.routed, e!.tooDeep ?? false]), [
    ["a", 0, ["loop"], false],
    ...Array.from({ length: 9 }, (_, i) => [`a${"x".repeat(i + 1)}`, i + 1, i + 1 <= 8 ? ["loop"] : [], i + 1 > 8]),
  ]);
});
