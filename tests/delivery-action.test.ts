/**
 * `plugins/delivery/action.yml` and its script (issue 31; protocol.md 交付插件, 发布): the action is a valid composite
 * action by GitHub's own parser (@actions/workflow-parser's action schema) with exactly the outputs `release` and
 * `superseded`; its script (ship.ts) is run as the runner runs it — a real checkout of the fake GitHub's repository,
 * `GITHUB_*` variables, an outputs file — against the fake GitHub and a health endpoint on 127.0.0.1.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { parseAction } from "@actions/workflow-parser/actions/action-parser";
import { NoOperationTraceWriter } from "@actions/workflow-parser";
import { parse as parseYaml } from "yaml";
import { fakeGitHubs, type FakeGitHub } from "./github-fake.js";
import { tempDir } from "./helpers.js";

const repoRoot = join(import.meta.dirname, "..");
const actionFile = join(repoRoot, "plugins", "delivery", "action.yml");
const fake = fakeGitHubs("aa-delivery-action-", "action-token");
const root = tempDir("aa-delivery-action-work-");
after(() => rmSync(root, { recursive: true, force: true }));

test("action.yml is a valid composite action by GitHub's own parser, with the outputs release and superseded only", () => {
  const text = readFileSync(actionFile, "utf8");
  const parsed = parseAction({ name: "action.yml", content: text }, new NoOperationTraceWriter());
  assert.deepEqual(parsed.context.errors.getErrors().map((e) => e.message), []);
  const action = parseYaml(text);
  assert.deepEqual(Object.keys(action.outputs), ["release", "superseded"]);
  assert.equal(action.runs.using, "composite");
  // the step runs the script tested below with the tsx this project is tested with
  const tsx = JSON.parse(readFileSync(join(repoRoot, "node_modules", "tsx", "package.json"), "utf8")).version;
  assert.deepEqual(action.runs.steps.map((s: { run: string }) => s.run), [`npx --yes tsx@${tsx} "$GITHUB_ACTION_PATH/ship.ts"`]);
  // a broken one is refused by the same parser (the check can fail)
  const broken = parseAction({ name: "action.yml", content: text.replace("      shell: bash\n", "") }, new NoOperationTraceWriter());
  assert.deepEqual(broken.context.errors.getErrors().map((e) => e.message), ["action.yml (Line: 29, Col: 7): Required property is missing: shell"]);
});

/** A health endpoint on 127.0.0.1 serving `{ version }` (null: 503). */
async function healthServer() {
  const state: { version: string | null } = { version: null };
  const server = createServer((_req, res) => {
    if (state.version === null) res.writeHead(503).end();
    else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ version: state.version }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  after(() => server.close());
  return { state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/health` };
}

let n = 0;
/**
 * Runs ship.ts as the action's step does, for commit `target` of the fake's `acme/app` (asynchronously: the fake
 * GitHub and the health endpoint answer from this process).
 */
async function runShip(f: FakeGitHub, target: string, env: Record<string, string> = {}) {
  const work = join(root, `work-${++n}`);
  execFileSync("git", ["clone", "--quiet", f.repo("acme/app").dir, work], { stdio: "ignore" });
  execFileSync("git", ["-C", work, "checkout", "--quiet", target], { stdio: "ignore" });
  const output = join(root, `output-${n}`);
  writeFileSync(output, "");
  // as `npx tsx ship.ts` does: tsx's command, from the checkout (which has no node_modules)
  const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
    const child = execFile(process.execPath, [join(repoRoot, "node_modules", "tsx", "dist", "cli.mjs"), join(repoRoot, "plugins", "delivery", "ship.ts")], {
      cwd: work, encoding: "utf8",
      env: {
        PATH: process.env.PATH, HOME: process.env.HOME, GITHUB_REPOSITORY: "acme/app", GITHUB_SHA: target, GITHUB_WORKSPACE: work, GITHUB_OUTPUT: output,
        GITHUB_API_URL: f.url, GH_TOKEN: "action-token", TEST_LOCAL_HEALTH: "true", ...env,
      },
    }, (_e, stdout, stderr) => done({ status: child.exitCode, stdout, stderr }));
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, outputs: readFileSync(output, "utf8") };
}

test("ship.ts: a release unless only internal docs changed since the live version; superseded when main moved past", async () => {
  const health = await healthServer();
  const f = await fake();
  const settings = { checks: { workflow: "CI", jobs: ["check"] }, health: { url: health.url, field: "version" } };
  const live = f.createRepo("acme/app", { "ops/delivery.json": JSON.stringify(settings), "src/app.ts": "a\n" });
  health.state.version = live.slice(0, 8);
  const docs = f.push("acme/app", "main", { "docs/guide.md": "# Guide\n" });
  const s = (sha: string) => sha.slice(0, 12);
  assert.deepEqual(await runShip(f, docs), { status: 0, stdout: `release=false superseded=false: only internal docs changed (1 files) (live ${s(live)}, target ${s(docs)})\n`, stderr: "", outputs: "release=false\nsuperseded=false\n" });
  const code = f.push("acme/app", "main", { "src/app.ts": "b\n" });
  assert.deepEqual((await runShip(f, code)).outputs, "release=true\nsuperseded=false\n");
  // docs after the unreleased code change: still a release (the whole diff from the live version)
  const docsAgain = f.push("acme/app", "main", { "docs/guide.md": "# Guide 2\n" });
  const later = await runShip(f, docsAgain);
  assert.deepEqual([later.outputs, later.stdout], ["release=true\nsuperseded=false\n", `release=true superseded=false: src/app.ts changed (live ${s(live)}, target ${s(docsAgain)})\n`]);
  // the run of `code` after main moved on: superseded, releases nothing
  const old = await runShip(f, code);
  assert.deepEqual([old.outputs, old.stdout], ["release=false\nsuperseded=true\n", `release=false superseded=true: main has moved on to ${s(docsAgain)}, which contains ${s(code)}: its Ship releases both\n`]);
  // live already contains the target
  health.state.version = docsAgain;
  assert.deepEqual((await runShip(f, docsAgain)).stdout, `release=false superseded=false: the live version ${s(docsAgain)} contains ${s(docsAgain)} already\n`);
  assert.deepEqual(f.faults, []);
});

test("ship.ts: an unknown live version releases; settings it cannot use fail the step naming the field", async () => {
  const health = await healthServer();
  const f = await fake();
  const settings = { checks: { workflow: "CI", jobs: ["check"] }, health: { url: health.url, field: "version" } };
  f.createRepo("acme/app", { "ops/delivery.json": JSON.stringify(settings), "src/app.ts": "a\n" });
  const docs = f.push("acme/app", "main", { "docs/guide.md": "# Guide\n" });
  health.state.version = "1234567";
  assert.deepEqual((await runShip(f, docs)).stdout, "release=true superseded=false: the live version 1234567 is not a commit GitHub knows\n");
  health.state.version = null;
  assert.deepEqual((await runShip(f, docs)).stdout, "release=true superseded=false: the health endpoint answered 503\n");
  // the health URL is http: refused without test-local-health, nothing written
  const refused = await runShip(f, docs, { TEST_LOCAL_HEALTH: "false" });
  assert.deepEqual(refused, { status: 1, stdout: "", stderr: "ops/delivery.json: health.url: must be an https address (http://127.0.0.1 only with test-local-health: 'true')\n", outputs: "" });
  // no health settings: the live version is unknown
  const plain = f.push("acme/app", "main", { "ops/delivery.json": JSON.stringify({ checks: settings.checks }) });
  assert.deepEqual((await runShip(f, plain)).stdout, "release=true superseded=false: ops/delivery.json has no health settings: the live version is unknown\n");
  assert.equal((await runShip(f, plain, { GITHUB_OUTPUT: "" })).status, 1);
});

test("the action's script imports only Node and its own files (a project's runner has none of this package's dependencies)", () => {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [, spec] of readFileSync(file, "utf8").matchAll(/^import (?!type )[^"']*["']([^"']+)["']/gm)) {
      if (spec!.startsWith("./")) visit(join(file, "..", spec!.replace(/\.js$/, ".ts")));
      else assert.match(spec!, /^node:/, `${file} imports ${spec}`);
    }
  };
  visit(join(repoRoot, "plugins", "delivery", "ship.ts"));
  assert.deepEqual([...seen].map((f) => f.slice(repoRoot.length + 1)).sort(), ["plugins/delivery/github.ts", "plugins/delivery/project.ts", "plugins/delivery/ship.ts"]);
});
