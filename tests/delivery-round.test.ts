/**
 * The delivery round end to end through the real hub (issue 31; protocol.md 交付插件), against the fake GitHub held to
 * GitHub's OpenAPI description: a labelled pull request → the poll rule's run emits `delivery.pull_request` → the
 * round (a `command` agent a real worker launches, sandboxed) reads ops/delivery.json of main, reviews the branch's
 * own diff with the project's reviewer (a tiny script given only the diff on stdin and the guide), waits for a
 * successful CI run, merges exactly the reviewed SHA, follows it until a Ship run covers the merge and the health
 * endpoint (on 127.0.0.1, `--test-local-health`) serves it, and takes the label off; a review with findings writes
 * failure, opens a notice card and merges nothing; an `ask-owner` issue becomes a question card and loses its label
 * after the answer.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { newKey } from "../src/host/home.js";
import type { EventEntry } from "../src/protocol/responses.js";
import { reviewDiff } from "../plugins/delivery/review-diff.js";
import { codexReviewPrompt } from "../plugins/delivery/reviewer-codex.js";
import { startFakeGitHub, type FakeGitHub } from "./github-fake.js";
import { git, resolve } from "./github-fake-git.js";
import { engine, hubFixture, tempDir, until, type Fixture } from "./helpers.js";
import { startFakeModel, type Turn } from "./fake-model.js";
import { agentBin, agentsMissing, fakeProvider } from "./real-agents.js";

const token = "round-token-5b1e";
const root = tempDir("aa-delivery-round-");
const hubs: Fixture[] = [];
const fakes: FakeGitHub[] = [];
after(async () => {
  for (const h of hubs) await h.close();
  for (const f of fakes) await f.stop();
  delete process.env.GH_TOKEN;
  delete process.env.GITHUB_API_URL;
  delete process.env.OPENAI_API_KEY;
  rmSync(root, { recursive: true, force: true });
});

/** The reviewer of the tests: records what it was given; a diff with FIXME in it is a finding. */
const reviewerScript = `
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
const stdin = readFileSync(0, "utf8");
const out = process.argv[2];
mkdirSync(out, { recursive: true });
const guide = process.env.DELIVERY_REVIEW_GUIDE ? readFileSync(process.env.DELIVERY_REVIEW_GUIDE, "utf8") : null;
writeFileSync(join(out, String(readdirSync(out).length + 1) + ".json"), JSON.stringify({ stdin, guide, cwd: process.cwd(), files: readdirSync("."), env: Object.keys(process.env).sort() }));
if (stdin.includes("FIXME")) { console.log("src/app.ts: a FIXME is left in"); process.exit(1); }
`;

/** node with tsx, as a rule's command runs a plugin's TypeScript from any folder. */
const tsNode = [process.execPath, "--import", import.meta.resolve("tsx")];

/**
 * A fake GitHub with `acme/app` (main holds ops/delivery.json and the review guide) and a hub whose poll rule emits
 * the delivery events its round rule takes, one lane per pull request; a worker on this machine runs both. The rules'
 * working folder holds the reviewer and the fake's bare repositories: the sandboxed round sees no other host /tmp.
 */
async function setup(name: string, options: { codexModel?: string } = {}): Promise<{ f: FakeGitHub; hub: Fixture; work: string; main: string }> {
  const work = join(root, name);
  mkdirSync(work);
  const f = await startFakeGitHub(join(work, "github"), token);
  fakes.push(f);
  const reviewer = join(work, "reviewer.mjs");
  writeFileSync(reviewer, reviewerScript);
  // the project's health endpoint serves main's first commit; its Ship (a workflow run on the push to main) releases
  // each merge at once, as the project's own release steps would after plugins/delivery/action.yml said so
  const live = { version: "" };
  const health = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ version: live.version })));
  await new Promise<void>((r) => health.listen(0, "127.0.0.1", r));
  after(() => health.close());
  const settings = {
    checks: { workflow: "CI", jobs: ["check", "lint"] },
    // with a model: no reviewer of the project's own, so the round's default Codex reviewer (the real CLI) reviews
    review: options.codexModel ? { guide: "docs/review.md" } : { command: [process.execPath, reviewer, join(work, "reviews")], guide: "docs/review.md" },
    health: { url: `http://127.0.0.1:${(health.address() as AddressInfo).port}/health`, field: "version" },
  };
  const main = f.createRepo("acme/app", { "README.md": "hi\n", "ops/delivery.json": JSON.stringify(settings), "docs/review.md": "Look for FIXME.\n" });
  live.version = main;
  f.afterRequest("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge", () => {
    const merged = resolve(f.repo("acme/app").dir, "refs/heads/main")!;
    f.runWorkflow("acme/app", { name: "Ship", event: "push", headSha: merged, headBranch: "main", jobs: [{ name: "release", conclusion: "success" }] });
    live.version = merged;
  }, false);
  // the worker's environment, which the agents' `env` lets through to them
  process.env.GH_TOKEN = token;
  process.env.GITHUB_API_URL = f.url;
  // the model of the default reviewer is the owner's choice, in the rule's command (never the project's settings)
  const codex = options.codexModel ? fakeProvider(options.codexModel).flatMap((c) => ["--codex-config", c]) : [];
  if (options.codexModel) process.env.OPENAI_API_KEY = "sk-fake-key";
  // The project's health endpoint and the fake model are on this computer's loopback: named for the sandbox's own
  // network (issue 26 round 33); GITHUB_API_URL's port is found in the agents' environment.
  const loopbackPorts = [(health.address() as AddressInfo).port, ...(options.codexModel ? [Number(new URL(options.codexModel).port)] : [])];
  const agent = (script: string, access: string) => ({
    worker: "local", use: "command", access, loopbackPorts, env: ["GH_TOKEN", "GITHUB_API_URL", ...(options.codexModel ? ["OPENAI_API_KEY"] : [])],
    command: [...tsNode, join(engine, "plugins", "delivery", script), "--repo", "acme/app", ...(script === "round.ts" ? ["--test-local-health", ...codex] : [])],
  });
  const hub = await hubFixture({
    timezone: "UTC",
    sources: { github: { name: "GitHub" } },
    agents: { poller: agent("poll.ts", "read"), deliverer: agent("round.ts", "edit") },
    channels: {},
    rules: [
      { name: "delivery-poll", when: { cron: "0 0 1 1 *" }, to: "poller", cwd: work, emits: { source: "github", types: ["delivery.*"] } },
      { name: "delivery", when: { source: "github", types: ["delivery.pull_request", "delivery.issue"] }, to: "deliverer", cwd: work, parallel: 2 },
    ],
  }, { worker: { name: "local", key: newKey(), capacity: 2 } });
  hubs.push(hub);
  return { f, hub, work, main };
}

/** Runs the poll rule now and waits until `count` runs of the round rule have ended. */
async function pollAndDeliver(hub: Fixture, count: number) {
  assert.equal((await hub.call("POST", "/v1/rules/delivery-poll/run", hub.keys.owner)).status, 200);
  let last = "";
  return until(async () => {
    const s = await hub.state();
    last = JSON.stringify(s.runs.map((r) => [r.rule, r.state, r.summary]));
    const rounds = s.runs.filter((r) => r.rule === "delivery");
    return rounds.length === count && rounds.every((r) => ["done", "nothing", "failed"].includes(r.state)) && s;
  }, 90_000, () => `${count} delivery runs to end: ${last} ${workerOutputs(hub)}`);
}

/** The worker's run files a failed wait shows: each launch's stdout and stderr, each run's result. */
function workerOutputs(hub: Fixture): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/^(stdout|stderr|result\.json)$/.test(e.name)) out.push(`${p}: ${readFileSync(p, "utf8").slice(-1500)}`);
    }
  };
  try {
    walk(join(hub.home.dir, "worker", "runs"));
  } catch (e) {
    out.push(String(e));
  }
  return out.join("\n");
}

/** The statuses of `sha` in the order written, as `context state description`. */
const statuses = (f: FakeGitHub, sha: string) => f.repo("acme/app").statuses.filter((s) => s.sha === sha).map((s) => `${s.context} ${s.state} ${s.description}`);
/** The statuses of a head reviewed, checked, merged as `merge` and shipped, in the order written. */
const shippedStatuses = (merge: string) => [
  "delivery pending Reviewing this commit",
  "delivery pending Reviewed; waiting for the full checks",
  "agent-review success Reviewed: no problems found",
  `delivery pending Merged as ${merge.slice(0, 12)}; waiting for Ship and the health check`,
  `delivery success Shipped: live version ${merge.slice(0, 12)}`,
];
/** The label records of an item, as `event label actor`. */
const records = (f: FakeGitHub, pr: number) => f.repo("acme/app").events.get(pr)!.map((e) => `${e.event} ${e.label} ${e.actor}`);

test("a labelled pull request is reviewed on its own diff, waits for CI, is merged at exactly the reviewed SHA, shipped, and loses its label", async () => {
  const { f, hub, work, main } = await setup("merge");
  const head = f.push("acme/app", "feature", { "src/app.ts": "export const answer = 42;\n" }, "add the answer");
  f.runWorkflow("acme/app", { name: "CI", headSha: head, headBranch: "feature", jobs: [
    { name: "check (ubuntu-latest)", conclusion: "success" }, { name: "check (windows-latest)", conclusion: "success" }, { name: "lint", conclusion: "success" },
  ] });
  const pr = f.openPull("acme/app", "feature", { labels: ["deliver"], title: "Add the answer" });
  const s = await pollAndDeliver(hub, 1);

  const item = f.item("acme/app", pr);
  const dir = f.repo("acme/app").dir;
  const merge = resolve(dir, "refs/heads/main")!;
  assert.deepEqual([item.state, item.pull!.merged, item.pull!.mergeSha], ["closed", true, merge]);
  assert.deepEqual(git(dir, ["rev-list", "--parents", "-n", "1", merge]).split(" "), [merge, main, head], "main's merge commit has exactly the reviewed head");
  assert.deepEqual(statuses(f, head), shippedStatuses(merge));
  assert.deepEqual(item.labels, []);
  assert.deepEqual(records(f, pr), ["labeled deliver alice", "unlabeled deliver delivery-bot"]);
  assert.deepEqual(f.faults, []);

  // the reviewer got the branch's own diff on stdin and main's guide, in an empty folder, with no token
  const reviews = readdirSync(join(work, "reviews"));
  assert.deepEqual(reviews, ["1.json"]);
  const seen = JSON.parse(readFileSync(join(work, "reviews", "1.json"), "utf8")) as { stdin: string; guide: string; files: string[]; env: string[]; cwd: string };
  assert.equal(seen.stdin, reviewDiff(dir, main, head).text);
  assert.equal(seen.stdin, [
    `### commit ${head}`, "diff --git a/src/app.ts b/src/app.ts", "new file mode 100644",
    `index ${"0".repeat(40)}..${git(dir, ["hash-object", "--stdin"], "export const answer = 42;\n")}`,
    "--- /dev/null", "+++ b/src/app.ts", "@@ -0,0 +1 @@", "+export const answer = 42;", "",
  ].join("\n"));
  assert.equal(seen.guide, "Look for FIXME.\n");
  assert.deepEqual(seen.files, ["review-guide.md"]);
  assert.deepEqual(seen.env.filter((k) => k !== "LANG"), ["DELIVERY_REVIEW_GUIDE", "HOME", "PATH", "TMPDIR"]);
  assert.notEqual(seen.cwd, work);

  // the hub: the poll's run emitted one event, the round's run merged, no card for the owner
  const polls = s.runs.filter((r) => r.rule === "delivery-poll");
  assert.deepEqual(polls.map((r) => [r.state, r.summary]), [["done", "1 items to deliver in acme/app (0 with an unreadable label record, 0 whose pull request could not be read, 0 over this poll's limit)"]]);
  const rounds = s.runs.filter((r) => r.rule === "delivery");
  assert.deepEqual(rounds.map((r) => [r.state, r.summary, r.lane, r.events]), [["done", `Shipped acme/app#${pr}: merge commit ${merge.slice(0, 12)} released by Ship, the health endpoint's version ${merge.slice(0, 12)} covers it`, `acme/app#${pr}`, 1]]);
  assert.deepEqual(s.cards, []);
  const events = await hub.call("GET", "/v1/events", hub.keys.owner);
  const record = f.repo("acme/app").events.get(pr)![0]!.id;
  assert.deepEqual(events.body.events.filter((e: { source: string }) => e.source === "github").map((e: EventEntry) => [e.eventId, e.type, e.subject, e.routed, e.runs.map((r) => [r.rule, r.state])]),
    [[`receipt:delivery:acme/app#${pr}:${record}:${head}`, "delivery.pull_request", `acme/app#${pr}`, ["delivery"], [["delivery", "done"]]]]);
});

test("a review with findings writes failure to delivery and agent-review, opens a notice card and merges nothing; the same commit is not reviewed again", async () => {
  const { f, hub, work, main } = await setup("findings");
  const head = f.push("acme/app", "feature", { "src/app.ts": "// FIXME: finish\n" }, "half done");
  f.runWorkflow("acme/app", { name: "CI", headSha: head, headBranch: "feature", jobs: [{ name: "check", conclusion: "success" }, { name: "lint", conclusion: "success" }] });
  const pr = f.openPull("acme/app", "feature", { labels: ["deliver"] });
  const s = await pollAndDeliver(hub, 1);

  const item = f.item("acme/app", pr);
  assert.deepEqual([item.state, item.pull!.merged, resolve(f.repo("acme/app").dir, "refs/heads/main")], ["open", false, main]);
  assert.deepEqual(statuses(f, head), [
    "delivery pending Reviewing this commit",
    "delivery failure Review found problems",
    "agent-review failure Review found problems",
  ]);
  assert.deepEqual(item.labels, ["deliver"]);
  assert.deepEqual(f.faults, []);
  const title = `Review found problems in acme/app#${pr} at ${head.slice(0, 12)}`;
  assert.deepEqual(s.runs.filter((r) => r.rule === "delivery").map((r) => [r.state, r.summary]), [["done", title]]);
  assert.deepEqual(s.cards.map((c) => [c.kind, c.state, c.rule, c.title, c.text, c.lane]), [["notice", "open", "delivery", title, "src/app.ts: a FIXME is left in", `acme/app#${pr}`]]);

  // a later event of the same commit (its label put back, a new label record) reviews nothing and rewrites nothing
  f.unlabel("acme/app", pr, "deliver");
  f.label("acme/app", pr, "deliver");
  const again = await pollAndDeliver(hub, 2);
  assert.equal(again.runs.filter((r) => r.rule === "delivery")[0]!.summary, `Nothing to do: acme/app#${pr} failed review at ${head.slice(0, 12)}; push a new commit to have it reviewed again`);
  assert.equal(readdirSync(join(work, "reviews")).length, 1, "the reviewer ran once");
  assert.equal(statuses(f, head).length, 3);
  assert.deepEqual(f.faults, []);
});

test("deliver-attended: reviewed and checked, then a question card; the answer's run (same lane) merges the reviewed SHA without reviewing again", async () => {
  const { f, hub, work, main } = await setup("attended");
  const head = f.push("acme/app", "feature", { "src/app.ts": "export const answer = 42;\n" }, "add the answer");
  f.runWorkflow("acme/app", { name: "CI", headSha: head, headBranch: "feature", jobs: [{ name: "check", conclusion: "success" }, { name: "lint", conclusion: "success" }] });
  const pr = f.openPull("acme/app", "feature", { labels: ["deliver-attended"], title: "Add the answer" });
  const asked = await pollAndDeliver(hub, 1);
  const lane = `acme/app#${pr}`;
  assert.deepEqual(asked.runs.filter((r) => r.rule === "delivery").map((r) => [r.state, r.summary, r.lane]),
    [["done", `Needs you: ${lane} at ${head.slice(0, 12)} is reviewed and checked; merging waits for your answer`, lane]]);
  assert.deepEqual(asked.cards.map((c) => [c.kind, c.state, c.title, c.text, c.options, c.about, c.lane]), [[
    "ask", "open", `Merge ${lane}?`, `"Add the answer": commit ${head} is reviewed and its full checks passed. The merge is of exactly this commit.`,
    ["Merge", "Do not merge"], `delivery-merge ${lane} ${head}`, lane,
  ]]);
  assert.deepEqual([f.item("acme/app", pr).pull!.merged, resolve(f.repo("acme/app").dir, "refs/heads/main")], [false, main], "nothing merged before the answer");
  const waiting = [
    "delivery pending Reviewing this commit",
    "delivery pending Reviewed; waiting for the full checks",
    "agent-review success Reviewed: no problems found",
    "delivery pending Reviewed and checked; waiting for the owner",
  ];
  assert.deepEqual(statuses(f, head), waiting);

  assert.equal((await hub.call("POST", `/v1/cards/${asked.cards[0]!.id}/answer`, hub.keys.owner, { choice: 0 })).status, 200);
  const s = await until(async () => {
    const now = await hub.state();
    const rounds = now.runs.filter((r) => r.rule === "delivery");
    return rounds.length === 2 && rounds[0]!.state === "done" && now;
  }, 90_000, () => `the answer's run: ${workerOutputs(hub)}`);
  const merge = resolve(f.repo("acme/app").dir, "refs/heads/main")!;
  assert.deepEqual([f.item("acme/app", pr).pull!.merged, f.item("acme/app", pr).pull!.mergeSha], [true, merge]);
  assert.deepEqual(git(f.repo("acme/app").dir, ["rev-list", "--parents", "-n", "1", merge]).split(" "), [merge, main, head]);
  assert.deepEqual(s.runs.filter((r) => r.rule === "delivery")[0]!.summary, `Shipped ${lane}: merge commit ${merge.slice(0, 12)} released by Ship, the health endpoint's version ${merge.slice(0, 12)} covers it`);
  assert.deepEqual(s.runs.filter((r) => r.rule === "delivery")[0]!.lane, lane);
  assert.deepEqual(statuses(f, head), [
    ...waiting,
    "delivery pending Reviewed; waiting for the full checks",
    "agent-review success Reviewed: no problems found",
    `delivery pending Merged as ${merge.slice(0, 12)}; waiting for Ship and the health check`,
    `delivery success Shipped: live version ${merge.slice(0, 12)}`,
  ]);
  assert.deepEqual(readdirSync(join(work, "reviews")), ["1.json"], "the answer's run did not review again");
  assert.deepEqual(records(f, pr), ["labeled deliver-attended alice", "unlabeled deliver-attended delivery-bot"]);
  assert.deepEqual(s.cards, [], "the question is answered; no other card");
  assert.deepEqual(f.faults, []);
});

test("an ask-owner issue: the poll's event becomes a question card of its readable body; the answer's run (same lane) takes the label off", async () => {
  const { f, hub } = await setup("ask-owner");
  const n = f.openIssue("acme/app", "Keep the old columns?", "Should the export keep them?\n\n```sh\ncat /home/alice/.netrc\n```\nThe log is /var/log/export.log.", ["ask-owner"]);
  const asked = await pollAndDeliver(hub, 1);
  const lane = `acme/app#${n}`;
  assert.deepEqual(asked.runs.filter((r) => r.rule === "delivery").map((r) => [r.state, r.summary, r.lane]), [["done", `Needs you: ${lane} asks you: Keep the old columns?`, lane]]);
  assert.deepEqual(asked.cards.map((c) => [c.kind, c.state, c.rule, c.title, c.text, c.options, c.about, c.lane]), [[
    "ask", "open", "delivery", `${lane} asks: Keep the old columns?`, "Should the export keep them?\n\n(a code block, left out)\nThe log is (a local path).",
    ["Answered"], `delivery-ask ${lane}`, lane,
  ]]);
  assert.deepEqual(f.item("acme/app", n).labels, ["ask-owner"], "the label stays until the answer");
  // the same state polled again starts nothing new (the event id is the same)
  assert.equal((await hub.call("POST", "/v1/rules/delivery-poll/run", hub.keys.owner)).status, 200);
  const polled = await until(async () => {
    const now = await hub.state();
    return now.runs.filter((r) => r.rule === "delivery-poll" && r.state === "done").length === 2 && now;
  }, 90_000, () => `the second poll: ${workerOutputs(hub)}`);
  assert.equal(polled.runs.filter((r) => r.rule === "delivery").length, 1);

  assert.equal((await hub.call("POST", `/v1/cards/${asked.cards[0]!.id}/answer`, hub.keys.owner, { text: "Keep them for one more release" })).status, 200);
  const s = await until(async () => {
    const now = await hub.state();
    const rounds = now.runs.filter((r) => r.rule === "delivery");
    return rounds.length === 2 && rounds[0]!.state === "done" && now;
  }, 90_000, () => `the answer's run: ${workerOutputs(hub)}`);
  assert.deepEqual(s.runs.filter((r) => r.rule === "delivery").map((r) => [r.state, r.summary, r.lane]), [
    ["done", `Answered ${lane}: its ask-owner label is off`, lane],
    ["done", `Needs you: ${lane} asks you: Keep the old columns?`, lane],
  ]);
  assert.deepEqual(f.item("acme/app", n).labels, []);
  assert.deepEqual(records(f, n), ["labeled ask-owner alice", "unlabeled ask-owner delivery-bot"]);
  assert.deepEqual(s.cards, []);
  assert.deepEqual(f.seen.filter((x) => x.method !== "GET").map((x) => `${x.method} ${x.template}`), ["DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"], "no comment, no other write");
  assert.deepEqual(f.faults, []);
});

test("the default Codex reviewer, end to end: label → poll event → round → review by the fake model through the real Codex CLI → checks → merge → Ship → health → delivery success; a finding is the owner's one card", { skip: agentsMissing(["codex"]) ?? false }, async () => {
  // the model answers from the diff Codex hands it (its <stdin> block) and the guide: a FIXME added is a finding.
  // (Codex's own shell does not start inside the hub's agent sandbox — "bwrap: setting up uid map: Operation not
  // permitted", nested user namespaces — which is why the reviewer gives the diff on standard input.)
  const turns: Turn[] = [];
  const model = await startFakeModel((turn) => {
    turns.push(turn);
    return { text: JSON.stringify(turn.allUser.includes("+// FIXME: finish") ? { verdict: "findings", findings: "src/half.ts: a FIXME is left in" } : { verdict: "passed", findings: "" }) };
  });
  const path = process.env.PATH;
  process.env.PATH = `${agentBin}:${path}`;
  try {
    const { f, hub, main } = await setup("codex", { codexModel: model.url });
    // first a pull request with a finding, then one that passes (each round on the main it was made from)
    const bad = f.push("acme/app", "half", { "src/half.ts": "// FIXME: finish\n" }, "half done");
    const good = f.push("acme/app", "feature", { "src/app.ts": "export const answer = 42;\n" }, "add the answer");
    for (const [sha, branch] of [[good, "feature"], [bad, "half"]] as const) {
      f.runWorkflow("acme/app", { name: "CI", headSha: sha, headBranch: branch, jobs: [{ name: "check", conclusion: "success" }, { name: "lint", conclusion: "success" }] });
    }
    const halfPr = f.openPull("acme/app", "half", { labels: ["deliver"], title: "Half done" });
    await pollAndDeliver(hub, 1);
    const pr = f.openPull("acme/app", "feature", { labels: ["deliver"], title: "Add the answer" });
    const s = await pollAndDeliver(hub, 2);

    const merge = resolve(f.repo("acme/app").dir, "refs/heads/main")!;
    assert.deepEqual(git(f.repo("acme/app").dir, ["rev-list", "--parents", "-n", "1", merge]).split(" "), [merge, main, good]);
    assert.deepEqual(statuses(f, good), shippedStatuses(merge));
    assert.deepEqual(statuses(f, bad), ["delivery pending Reviewing this commit", "delivery failure Review found problems", "agent-review failure Review found problems"]);
    assert.deepEqual([f.item("acme/app", pr).labels, f.item("acme/app", halfPr).labels], [[], ["deliver"]]);
    assert.deepEqual(f.faults, []);
    // the model saw each pull request's own diff (its stdin block) and main's guide, in one turn each
    assert.equal(turns.length, 2);
    const dir = f.repo("acme/app").dir;
    assert.deepEqual(turns.map((t) => t.allUser.includes(`<stdin>\n${reviewDiff(dir, main, bad).text}`)), [true, false]);
    assert.deepEqual(turns.map((t) => t.allUser.includes(`<stdin>\n${reviewDiff(dir, main, good).text}`)), [false, true]);
    assert.ok(turns.every((t) => t.allUser.includes(codexReviewPrompt("Look for FIXME.\n")) && t.toolResult === null));

    // what the owner sees: the merged one needs nothing; the finding is one notice card in its pull request's lane
    const rounds = s.runs.filter((r) => r.rule === "delivery").sort((a, b) => a.lane.localeCompare(b.lane));
    const title = `Review found problems in acme/app#${halfPr} at ${bad.slice(0, 12)}`;
    assert.deepEqual(rounds.map((r) => [r.lane, r.state, r.summary]), [
      [`acme/app#${halfPr}`, "done", title],
      [`acme/app#${pr}`, "done", `Shipped acme/app#${pr}: merge commit ${merge.slice(0, 12)} released by Ship, the health endpoint's version ${merge.slice(0, 12)} covers it`],
    ]);
    assert.deepEqual(s.cards.map((c) => [c.kind, c.state, c.rule, c.title, c.text, c.lane]), [["notice", "open", "delivery", title, "src/half.ts: a FIXME is left in", `acme/app#${halfPr}`]]);
  } finally {
    process.env.PATH = path;
    await model.close();
  }
});
