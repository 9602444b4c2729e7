/**
 * A workflow's artifacts reach the hub (issue 18 "Workflows run": an `artifact` step writes a file "listed in `why` and
 * linkable as a `doc-ref`"). The hub may run on another machine than the worker, so the worker sends each file as the
 * step writes it: `PUT /v1/runs/:id/artifacts/:file` with the run's token; the owner reads it with
 * `GET /v1/runs/:id/artifacts/:file` (text/plain, nosniff, sandboxed), `why` lists it, and a doc-ref `run:<id>/<file>`
 * links to it (console, card link page, text projection).
 *
 * A real hub with its local worker (hubFixture) runs a workflow whose prompt step's agent is a real node process;
 * another rule's run is claimed by hand so the refusals of the PUT can be tried while it goes on and after it ended.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { hubFixture, until, type Fixture } from "./helpers.js";
import { newKey, readMasterKey } from "../src/host/home.js";
import { runToken } from "../src/kernel/credentials.js";
import { artifactMaxBytes, artifactsPerRunMax } from "../src/kernel/limits.js";
import { templateLines, artifactRoute } from "../src/sdk/index.js";
import { templateHtml } from "../src/host/template-html.js";
import { runWorkflow, type WorkflowHost } from "../src/worker/workflow.js";
import type { Job } from "../src/protocol/responses.js";
import type { Result } from "../src/protocol/schema.js";

const fixtures: Fixture[] = [];
after(async () => {
  for (const f of fixtures) await f.close();
});

/**
 * The prompt step's agent: its last message is two lines, the second with characters a page could run and a C1
 * control (U+0085), which the worker's file keeps and the hub's copy leaves out, as every /v1 text does.
 */
const agentScript = `console.log("Done: drafted\\n\\n<script>alert(1)</script> ünïcödé\\u0085")`;
const written = "Done: drafted\n\n<script>alert(1)</script> ünïcödé\u0085";
const draft = "Done: drafted\n\n<script>alert(1)</script> ünïcödé";

async function workflowHub(): Promise<Fixture> {
  const f = await hubFixture({
    timezone: "UTC",
    sources: { shop: { name: "Shop" } },
    agents: {
      writer: { worker: "local", use: "command", command: ["node", "-e", agentScript] },
      elsewhere: { worker: "w1", use: "command", command: ["true"] },
    },
    channels: {},
    rules: [
      { name: "save", when: { source: "shop", types: ["save.*"] }, to: "writer", cwd: "/tmp", use: "workflow", workflow: "flow/save" },
      { name: "byhand", when: { source: "shop", types: ["hand.*"] }, to: "elsewhere", cwd: "/tmp", prompt: "x" },
    ],
  }, { worker: { name: "local", key: newKey(), capacity: 1 } });
  fixtures.push(f);
  const flow = join(f.home.plugins, "flow");
  mkdirSync(join(flow, "workflows"), { recursive: true });
  writeFileSync(join(flow, "plugin.json"), JSON.stringify({ id: "flow", name: "Flow", version: "0.1.0", apiVersion: "1.0", provides: { workflows: ["save"] } }));
  writeFileSync(join(flow, "workflows", "save.json"), JSON.stringify({
    id: "save", steps: [{ id: "draft", type: "prompt", prompt: "Write it." }, { id: "keep", type: "artifact", from: "draft", file: "draft.md" }],
  }));
  const reload = await f.call("POST", "/v1/plugins/reload", f.keys.owner);
  assert.deepEqual(reload.body.loaded, ["flow"]);
  return f;
}

/** The rows of `table` in a why's facts. */
const rowsOf = (why: { facts: { changes: unknown[][] }[] }, table: string) => why.facts.flatMap((f) => f.changes).filter((c) => c[0] === table && c[2]).map((c) => c[2] as any);

/** A raw request: status, headers and text. */
async function raw(f: Fixture, method: string, path: string, key: string | null, body?: unknown): Promise<{ status: number; headers: Headers; text: string }> {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(f.url + path, { method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

test("an artifact step's file is sent to the hub: the owner reads it as sandboxed text, why lists it, the notice names its route", async () => {
  const f = await workflowHub();
  assert.equal((await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "save.now" })).status, 200);
  const run = await until(async () => (await f.state()).runs.find((r) => r.rule === "save" && r.state === "done"), 60_000, "the workflow run");
  assert.equal(run.summary, "Workflow flow/save done: 2 steps; files: draft.md");

  const got = await raw(f, "GET", `/v1/runs/${run.id}/artifacts/draft.md`, f.keys.owner);
  assert.equal(got.status, 200);
  assert.equal(got.text, draft);
  assert.equal(got.headers.get("content-type"), "text/plain; charset=utf-8");
  assert.equal(got.headers.get("x-content-type-options"), "nosniff");
  assert.equal(got.headers.get("content-security-policy"), "sandbox");

  assert.equal((await raw(f, "GET", `/v1/runs/${run.id}/artifacts/draft.md`, null)).status, 401);
  assert.equal((await raw(f, "GET", `/v1/runs/${run.id}/artifacts/draft.md`, f.keys.worker)).status, 403);
  const other = await f.call("GET", `/v1/runs/${run.id}/artifacts/other.md`, f.keys.owner);
  assert.deepEqual([other.status, other.body], [404, { error: `run ${run.id} has no artifact other.md` }]);
  assert.equal((await f.call("GET", `/v1/runs/999/artifacts/draft.md`, f.keys.owner)).status, 404);

  const why = await f.call("GET", `/v1/runs/${run.id}/why`, f.keys.owner);
  const bytes = Buffer.byteLength(draft);
  assert.deepEqual(why.body.artifacts, [{ file: "draft.md", bytes, path: `/v1/runs/${run.id}/artifacts/draft.md` }]);
  // The facts of why do not carry the text again: the route reads it.
  const rows = why.body.facts.flatMap((f: { changes: unknown[][] }) => f.changes).filter((c: unknown[]) => c[0] === "artifacts");
  assert.deepEqual(rows.map((c: unknown[]) => [c[1], Object.keys(c[2] as object).sort()]), [[`${run.id}\u0000draft.md`, ["at", "bytes", "file", "run"]]], "why's facts carry no artifact text");
  const notice = rowsOf(why.body, "cards").find((c: { kind: string; run: number }) => c.kind === "notice" && c.run === run.id) as { text: string } | undefined;
  assert.match(notice?.text ?? "", new RegExp(`^draft\\.md \\(${Buffer.byteLength(written)} bytes\\): .*/artifacts/draft\\.md · doc-ref run:${run.id}/draft\\.md · /v1/runs/${run.id}/artifacts/draft\\.md$`));
});

test("PUT of an artifact takes the run's token while the run goes on; refused bodies write nothing; an ended run is 409", async () => {
  const f = await workflowHub();
  await f.call("POST", "/v1/events", f.keys.source, { id: "h1", type: "hand.now" });
  const claimed = await f.call("GET", "/v1/work?claim=c1", f.keys.worker);
  const job = claimed.body.job as { run: number; token: string };
  const put = (file: string, body: unknown, key: string | null = job.token) => f.call("PUT", `/v1/runs/${job.run}/artifacts/${file}`, key, body);

  assert.deepEqual(await put("a.txt", { text: "one" }), { status: 200, body: { run: job.run, file: "a.txt", bytes: 3, path: `/v1/runs/${job.run}/artifacts/a.txt` } });
  assert.equal((await put("a.txt", { text: "two, replaced" })).status, 200);
  assert.equal((await raw(f, "GET", `/v1/runs/${job.run}/artifacts/a.txt`, f.keys.owner)).text, "two, replaced");

  const seq = f.seq();
  const refusals: [string, unknown, string | null, number, string][] = [
    ["b.txt", { text: "x" }, null, 401, "missing Authorization: Bearer <key>"],
    ["b.txt", { text: "x" }, "not-the-token", 403, "the token is wrong or no longer valid (each claim issues a new one)"],
    ["b.txt", { text: "x".repeat(artifactMaxBytes + 1) }, job.token, 400, `text: at most ${artifactMaxBytes} bytes (UTF-8)`],
    ["b.txt", { text: "é".repeat(artifactMaxBytes / 2 + 1) }, job.token, 400, `text: at most ${artifactMaxBytes} bytes (UTF-8)`],
    ["b.txt", {}, job.token, 400, "text: required"],
    ["b.txt", { text: "x", more: 1 }, job.token, 400, "more: unknown field"],
    ["a%2Fb", { text: "x" }, job.token, 400, "file: a file name of letters, digits, _ . - (at most 100), not starting with . or -"],
    ["..%2Fescape", { text: "x" }, job.token, 400, "file: a file name of letters, digits, _ . - (at most 100), not starting with . or -"],
    [".hidden", { text: "x" }, job.token, 400, "file: a file name of letters, digits, _ . - (at most 100), not starting with . or -"],
  ];
  for (const [file, body, key, status, error] of refusals) {
    assert.deepEqual(await put(file, body, key), { status, body: { error } }, `${file} ${JSON.stringify(body).slice(0, 40)}`);
  }
  assert.equal(f.seq(), seq, "no refusal wrote a fact");
  assert.equal((await f.call("GET", `/v1/runs/${job.run}/artifacts/b.txt`, f.keys.owner)).status, 404);

  // At most artifactsPerRunMax files a run; replacing one of them is still taken.
  for (let i = 1; i < artifactsPerRunMax; i++) assert.equal((await put(`f${i}.txt`, { text: String(i) })).status, 200);
  const tooMany = await put("one-more.txt", { text: "x" });
  assert.deepEqual(tooMany, { status: 409, body: { error: `run ${job.run} has ${artifactsPerRunMax} artifacts already, the most a run may have` } });
  assert.equal((await put("f1.txt", { text: "again" })).status, 200);

  assert.equal((await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done" })).status, 200);
  const ended = f.seq();
  assert.deepEqual(await put("a.txt", { text: "late" }), { status: 409, body: { error: "this run has already ended" } });
  assert.equal(f.seq(), ended);
  assert.equal((await raw(f, "GET", `/v1/runs/${job.run}/artifacts/a.txt`, f.keys.owner)).text, "two, replaced");
  // The token is derived as the hub derives it (the test's own check that it used the run's real token).
  assert.equal(job.token, runToken(readMasterKey(f.home, false), job.run, 1, 1));
});

test("a doc-ref run:<id>/<file> links to the artifact's route: the card link page links it, the text projection names it", () => {
  assert.equal(artifactRoute("run:12/draft.md"), "/v1/runs/12/artifacts/draft.md");
  for (const other of ["run:12/../x", "run:0/a", "doc:12/a", "run:12/", "run:12/a/b", "https://example.com/x"]) assert.equal(artifactRoute(other), null, other);
  const ui = { kind: "k", title: "T", data: [{ type: "doc-ref" as const, docId: "run:12/draft.md", title: "The draft" }, { type: "doc-ref" as const, docId: "manual/intro" }] };
  const html = templateHtml({ ref: "p/k", ...ui } as never, "en");
  assert.match(html, /<a href="\/v1\/runs\/12\/artifacts\/draft\.md" rel="noopener"><bdi dir="auto">The draft<\/bdi><\/a>/);
  assert.ok(!html.includes('href="manual/intro"'), "another doc id is not a link");
  const text = templateLines(ui as never, "en").join("\n");
  assert.ok(text.includes("/v1/runs/12/artifacts/draft.md"), text);
});

test("an artifact the hub could not take is said in the run's notice; the workflow still ends done", async () => {
  const dir = mkdtempSync(join(tmpdir(), "aa-artifact-"));
  try {
    const job = {
      run: 7, token: "t", attempt: 1, session: null, rule: { name: "r", workflow: "p/w" }, context: { events: [], answers: [] },
      declared: { workflow: { steps: [{ id: "a", type: "hitl", options: ["x"] }, { id: "k", type: "artifact", from: "a", file: "k.txt" }], slots: [], prompts: {} } },
    } as unknown as Job;
    let submitted: Result | null = null;
    const host: WorkflowHost = {
      job, statesDir: join(dir, "states"), agentDir: join(dir, "agent"), lang: "en",
      launch: async () => null, message: async () => ({ outcome: "done", summary: "", error: null }) as never,
      callTool: async () => ({ ok: false, error: "no" }), isCancelled: () => false, progress: () => {},
      sendArtifact: async () => "fetch failed",
      submit: async (b) => { submitted = b; },
    };
    await runWorkflow(host, null);
    const asked = submitted as Result | null;
    assert.ok(asked?.ask?.[0]);
    job.session = asked.session ?? null;
    (job.context as { answers: unknown[] }).answers = [{ about: asked.ask[0].about, choice: 0, options: ["x"], text: null }];
    await runWorkflow(host, null);
    const done = submitted as Result | null;
    assert.equal(done?.outcome, "done");
    assert.equal(readFileSync(join(dir, "agent", "artifacts", "k.txt"), "utf8"), "x");
    assert.equal(done?.notice?.[0]?.text, `k.txt (1 bytes): ${join(dir, "agent", "artifacts", "k.txt")} · not sent to the hub: fetch failed`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
