/**
 * The review process and the git objects of a delivery round (issue 31; protocol.md 交付插件, 审查进程): the reviewer
 * gets the diff on stdin and the guide, in an empty folder, with none of the round's environment; its exit code is its
 * verdict and its limits hold. Git fetches by SHA only over https (a local path only for a test's fake), never a
 * transport that runs a command, and the token is in no message.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runReviewer, findingsCharsMax, reviewOutputBytesMax } from "../plugins/delivery/reviewer.js";
import { cloneUrlAllowed, fetchObjects, fileAt } from "../plugins/delivery/objects.js";
import { commit, initBare } from "./github-fake-git.js";
import { tempDir } from "./helpers.js";

const root = tempDir("aa-delivery-reviewer-");
after(() => rmSync(root, { recursive: true, force: true }));
const script = (name: string, body: string) => {
  const path = join(root, name);
  writeFileSync(path, body);
  return [process.execPath, path];
};

test("the reviewer gets the diff on stdin and the guide's path, in an empty folder, with only PATH, HOME, LANG, TMPDIR; exit 0 passes, 1 is findings", async () => {
  process.env.GH_TOKEN = "must-not-reach-the-reviewer";
  const echo = script("echo.mjs", `import { readFileSync, readdirSync } from "node:fs";
const input = readFileSync(0, "utf8");
const guide = process.env.DELIVERY_REVIEW_GUIDE ? readFileSync(process.env.DELIVERY_REVIEW_GUIDE, "utf8") : "none";
console.log(JSON.stringify({ input, guide, files: readdirSync("."), env: Object.keys(process.env).filter((k) => k !== "LANG").sort(), here: process.cwd() === process.env.HOME }));
process.exit(input.startsWith("bad") ? 1 : 0);
`);
  assert.deepEqual(await runReviewer(echo, "good diff", "the guide"), { kind: "passed" });
  const got = await runReviewer(echo, "bad diff", "the guide");
  assert.equal(got.kind, "findings");
  assert.deepEqual(JSON.parse((got as { text: string }).text), { input: "bad diff", guide: "the guide", files: ["review-guide.md"], env: ["DELIVERY_REVIEW_GUIDE", "HOME", "PATH", "TMPDIR"], here: true });
  const noGuide = await runReviewer(echo, "bad", null);
  assert.deepEqual(JSON.parse((noGuide as { text: string }).text), { input: "bad", guide: "none", files: [], env: ["HOME", "PATH", "TMPDIR"], here: true });
  delete process.env.GH_TOKEN;
});

test("findings are cut to their limit; no text is said so; another exit, a signal, too much output or too long is a broken reviewer", async () => {
  const long = script("long.mjs", `process.stdout.write("x".repeat(${findingsCharsMax + 50})); process.exit(1);`);
  assert.deepEqual(await runReviewer(long, "", null), { kind: "findings", text: "x".repeat(findingsCharsMax) });
  assert.deepEqual(await runReviewer(script("silent.mjs", "process.exit(1);"), "", null), { kind: "findings", text: "(the reviewer gave no text)" });
  assert.deepEqual(await runReviewer(script("two.mjs", "process.exit(2);"), "", null), { kind: "broken", reason: "the reviewer ended with exit code 2" });
  assert.deepEqual(await runReviewer(script("kill.mjs", "process.kill(process.pid, 'SIGTERM');"), "", null), { kind: "broken", reason: "the reviewer ended with SIGTERM" });
  assert.deepEqual(await runReviewer(script("flood.mjs", `const b = "y".repeat(65536); for (let i = 0; i < ${Math.ceil(reviewOutputBytesMax / 65536) + 2}; i++) process.stdout.write(b); setTimeout(() => {}, 60000);`), "", null),
    { kind: "broken", reason: `the reviewer wrote more than ${reviewOutputBytesMax} bytes` });
  assert.deepEqual(await runReviewer(script("slow.mjs", "setTimeout(() => {}, 60000);"), "", null, 300), { kind: "broken", reason: "the reviewer took longer than 0.3 s" });
  const missing = await runReviewer([join(root, "no-such-reviewer")], "", null);
  assert.equal(missing.kind, "broken");
  assert.match((missing as { reason: string }).reason, /^the reviewer did not start: spawn .*no-such-reviewer ENOENT$/);
});

test("git objects: fetched by SHA into the round's own bare repository; only https (a local path only for a test's fake); the token in no message", () => {
  assert.equal(cloneUrlAllowed("https://github.com/acme/app.git", false), true);
  for (const bad of ["ext::sh -c touch% /tmp/pwned", "http://github.com/acme/app.git", "https://user:pw@github.com/acme/app.git", "file:///srv/app.git", "/srv/app.git", "git@github.com:acme/app.git"]) {
    assert.equal(cloneUrlAllowed(bad, false), false, bad);
  }
  assert.equal(cloneUrlAllowed("/srv/app.git", true), true);
  const origin = join(root, "origin.git");
  initBare(origin);
  const first = commit(origin, [], { "docs/review.md": "guide\n" }, "first");
  const cache = join(root, "cache.git");
  assert.throws(() => fetchObjects(cache, "ext::sh -c id", [first], "tok", true), /^Error: the repository's clone URL is not an https address: "ext::sh -c id"$/);
  assert.throws(() => fetchObjects(cache, origin, ["main"], "tok", true), /^Error: not a commit SHA: "main"$/);
  assert.equal(existsSync(cache), false, "nothing made for a refused request");
  fetchObjects(cache, origin, [first], "tok", true);
  assert.equal(fileAt(cache, first, "docs/review.md", 100), "guide\n");
  assert.equal(fileAt(cache, first, "docs/missing.md", 100), null);
  assert.throws(() => fileAt(cache, first, "docs/review.md", 3), /^Error: docs\/review.md: larger than 3 bytes$/);
  assert.throws(() => fetchObjects(cache, "https://127.0.0.1:1/acme/app.git", ["f".repeat(40)], "secret-token-9", false), (e: Error) => {
    assert.match(e.message, /^git fetch of 1 commits failed: /);
    assert.doesNotMatch(e.message, /secret-token-9/);
    return true;
  });
});
