/**
 * The release judgement the round and the project's Ship action share (issue 31; protocol.md 交付插件, 后续发布;
 * plugins/delivery/project.ts): the release scope over the whole diff from the live version, the health endpoint's
 * version, and a short SHA expanded through GitHub — on real bare repositories and a real HTTP server.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { fullSha, healthBytesMax, readHealth, releaseScope } from "../plugins/delivery/project.js";
import { GitHub } from "../plugins/delivery/github.js";
import { commit, initBare } from "./github-fake-git.js";
import { fakeGitHubs } from "./github-fake.js";
import { tempDir } from "./helpers.js";

const root = tempDir("aa-delivery-project-");
after(() => rmSync(root, { recursive: true, force: true }));
const fake = fakeGitHubs("aa-delivery-project-gh-", "project-token");

test("the release scope: only ordinary internal docs skip, over the whole diff from the live version", () => {
  const dir = join(root, "scope.git");
  initBare(dir);
  const live = commit(dir, [], { "src/app.ts": "a\n", "docs/guide.md": "g\n", "run.sh": { text: "#!/bin/sh\n", mode: "100755" }, "notes/plan.txt": "p\n" }, "live");
  const docs = commit(dir, [live], { "docs/guide.md": "g2\n", "README.md": "r\n", "docs/img/a.png": "png" }, "docs");
  const code = commit(dir, [docs], { "src/app.ts": "b\n" }, "code");
  const docsAfterCode = commit(dir, [code], { "docs/guide.md": "g3\n" }, "docs again");
  const scope = (from: string | null, to: string, docsPatterns?: string[]) => releaseScope(dir, from, to, docsPatterns);
  assert.deepEqual(scope(live, live), { release: false, why: "the target is the live version" });
  assert.deepEqual(scope(live, docs), { release: false, why: "only internal docs changed (3 files)" });
  assert.deepEqual(scope(live, code), { release: true, why: "src/app.ts changed" });
  // a later docs-only change never lets the unreleased code change be skipped
  assert.deepEqual(scope(code, docsAfterCode), { release: false, why: "only internal docs changed (1 files)" });
  assert.deepEqual(scope(live, docsAfterCode), { release: true, why: "src/app.ts changed" });
  assert.deepEqual(scope(null, docs), { release: true, why: "the live version is unknown" });
  // the live version is not in the target's history (a rollback branch), or git does not know it
  const elsewhere = commit(dir, [live], { "docs/other.md": "o\n" }, "elsewhere");
  assert.deepEqual(scope(elsewhere, docs), { release: true, why: `the live version ${elsewhere.slice(0, 12)} is not in the history of ${docs.slice(0, 12)}` });
  assert.deepEqual(scope("0".repeat(40), docs), { release: true, why: `the live version 000000000000 is not in the history of ${docs.slice(0, 12)}` });
  // an executable bit, a link, a rename out of the docs: a release, even for a Markdown file
  const exec = commit(dir, [live], { "docs/guide.md": { text: "g\n", mode: "100755" } }, "exec bit");
  assert.deepEqual(scope(live, exec), { release: true, why: "docs/guide.md is executable" });
  const link = commit(dir, [live], { "docs/latest.md": { text: "guide.md", mode: "120000" } }, "link");
  assert.deepEqual(scope(live, link), { release: true, why: "docs/latest.md is a symbolic link" });
  const renamed = commit(dir, [live], { "notes/plan.txt": null, "src/plan.txt": "p\n" }, "rename");
  assert.deepEqual(scope(live, renamed, ["notes/**"]), { release: true, why: "notes/plan.txt was renamed to src/plan.txt" });
  const intoDocs = commit(dir, [live], { "notes/plan.txt": null, "docs/plan.txt": "p\n" }, "rename in");
  assert.deepEqual(scope(live, intoDocs, ["notes/**", "docs/**"]), { release: false, why: "only internal docs changed (1 files)" });
  // the project's own patterns: `*` stays in one folder, `**/` any folders, `?` one character
  assert.deepEqual(scope(live, docs, ["docs/*.md"]), { release: true, why: "README.md changed" });
  assert.deepEqual(scope(live, docs, ["docs/**", "READM?.md"]), { release: false, why: "only internal docs changed (3 files)" });
  assert.deepEqual(scope(live, docs, []), { release: true, why: "README.md changed" });
});

test("the health version: a 200 with a SHA at the field; anything else is unknown, never an exception", async () => {
  let answer: { status: number; body: string } = { status: 200, body: "" };
  const server = createServer((_req, res) => res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`;
  const read = (body: unknown, field = "version", status = 200) => {
    answer = { status, body: typeof body === "string" ? body : JSON.stringify(body) };
    return readHealth(url, field, true);
  };
  assert.deepEqual(await read({ version: "ABCDEF1234" }), { kind: "version", sha: "abcdef1234" });
  assert.deepEqual(await read({ build: { sha: "a".repeat(40) } }, "build.sha"), { kind: "version", sha: "a".repeat(40) });
  assert.deepEqual(await read({ version: "v1.2.3" }), { kind: "unknown", why: "the health answer has no commit SHA at version" });
  assert.deepEqual(await read({ version: "abc12" }), { kind: "unknown", why: "the health answer has no commit SHA at version" });
  assert.deepEqual(await read([{ version: "abcdef1" }]), { kind: "unknown", why: "the health answer has no commit SHA at version" });
  assert.deepEqual(await read("<html>ok</html>"), { kind: "unknown", why: "the health answer is not JSON" });
  assert.deepEqual(await read({ version: "abcdef1" }, "version", 503), { kind: "unknown", why: "the health endpoint answered 503" });
  assert.deepEqual(await read({ version: "abcdef1", pad: "x".repeat(healthBytesMax) }), { kind: "unknown", why: `the health answer is larger than ${healthBytesMax} bytes` });
  // without the test flag only https is read; credentials never
  assert.deepEqual(await readHealth(url, "version", false), { kind: "unknown", why: "the health URL is not an https address" });
  assert.deepEqual(await readHealth("https://user:pw@example.com/health", "version", false), { kind: "unknown", why: "the health URL is not an https address" });
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  const gone = await readHealth(url, "version", true);
  assert.equal(gone.kind, "unknown");
  assert.match((gone as { why: string }).why, /^the health endpoint did not answer \(/);
});

test("a short SHA is expanded through GitHub; one GitHub does not know is null (a release is needed)", async () => {
  const f = await fake();
  const main = f.createRepo("acme/app", { "a.txt": "a\n" });
  const gh = new GitHub(f.url, "project-token");
  assert.equal(await fullSha(gh, "acme/app", main.slice(0, 7)), main);
  assert.equal(await fullSha(gh, "acme/app", main), main);
  assert.equal(await fullSha(gh, "acme/app", "1234567"), null);
  assert.equal(await fullSha(gh, "acme/app", "12345"), null);
  assert.equal(await fullSha(new GitHub(f.url, "wrong-token"), "acme/app", main.slice(0, 7)), null);
  assert.deepEqual(f.faults, []);
});
