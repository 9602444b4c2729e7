/**
 * `ask-owner` issues (issue 31; protocol.md 交付插件): the readable body of an issue (code blocks and local paths
 * removed) as a question card, and the label taken off after the answer — `issueRound` against the fake GitHub held to
 * GitHub's OpenAPI description (through the real hub: tests/delivery-round.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { GitHub } from "../plugins/delivery/github.js";
import { issueInputOf, issueMessage, issueRound, readableBody, questionCharsMax } from "../plugins/delivery/ask-owner.js";
import { readMessage } from "../src/worker/receipt.js";
import { fakeGitHubs } from "./github-fake.js";

const fake = fakeGitHubs("aa-delivery-ask-", "ask-token");

test("the readable body: fenced and indented code blocks and local paths left out, URLs, list items and words with slashes kept", () => {
  const body = [
    "Should the export keep the old column names?",
    "",
    "The log at /home/alice/work/app/export.log says it failed (see C:\\Users\\alice\\out.csv, ~/notes/todo.md).",
    "Docs: https://example.com/docs/export and/or the wiki, file:///tmp/x.txt.",
    "",
    "```ts",
    "const secret = readFileSync('/etc/app/key');",
    "```",
    "",
    "    indented code at /srv/app",
    "    more code",
    "",
    "- one option",
    "    continued in the item",
    "- the other, in `/opt/app/bin`",
    "",
    "~~~~",
    "never closed",
  ].join("\r\n");
  assert.equal(readableBody(body, "en"), [
    "Should the export keep the old column names?",
    "",
    "The log at (a local path) says it failed (see (a local path), (a local path)).",
    "Docs: https://example.com/docs/export and/or the wiki, (a local path).",
    "",
    "(a code block, left out)",
    "",
    "(a code block, left out)",
    "",
    "- one option",
    "    continued in the item",
    "- the other, in `(a local path)`",
    "",
    "(a code block, left out)",
  ].join("\n"));
  assert.equal(readableBody("路径 /var/log/app.log 里有错\n```\nx\n```", "zh"), "路径 （本机路径） 里有错\n（这里的代码块已略去）");
  assert.equal([...readableBody("x".repeat(5000), "en")].length, questionCharsMax);
  assert.equal(readableBody("a\u202eb\u0007c", "en"), "abc");
});

test("an ask-owner issue becomes a question card of its readable body; after the answer its label comes off and nothing else is written", async () => {
  const f = await fake();
  f.createRepo("acme/app", { "README.md": "hi\n" });
  const n = f.openIssue("acme/app", "Keep the old columns?", "Which one?\n\n```\nrm -rf /\n```\nSee /home/alice/a.txt.", ["ask-owner", "bug"]);
  const gh = new GitHub(f.url, "ask-token");
  const input = issueInputOf({ events: [{ type: "delivery.issue", subject: `acme/app#${n}` }] }, "acme/app")!;
  assert.deepEqual(input, { repo: "acme/app", number: n, answered: false });
  const asked = await issueRound(gh, input, "en");
  assert.deepEqual(asked, { kind: "question", subject: `acme/app#${n}`, title: "Keep the old columns?", text: "Which one?\n\n(a code block, left out)\nSee (a local path)." });
  const read = readMessage(issueMessage(asked, "en"));
  assert.deepEqual([read.outcome, read.summary, read.receipt.ask], ["done", `Needs you: acme/app#${n} asks you: Keep the old columns?`, [{
    title: `acme/app#${n} asks: Keep the old columns?`, text: "Which one?\n\n(a code block, left out)\nSee (a local path).",
    options: ["Answered"], recommend: 0, about: `delivery-ask acme/app#${n}`, key: `delivery-ask:acme/app#${n}`,
  }]]);
  assert.deepEqual(f.item("acme/app", n).labels, ["ask-owner", "bug"], "asking changes nothing on GitHub");

  // the answer's run: the label off (its answer lost, read back), the other labels kept, no comment
  const answered = issueInputOf({ events: [], answers: [{ about: `delivery-ask acme/app#${n}` }] }, "acme/app")!;
  assert.deepEqual(answered, { repo: "acme/app", number: n, answered: true });
  f.dropResponse("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}");
  assert.deepEqual(await issueRound(gh, answered, "en"), { kind: "answered", subject: `acme/app#${n}` });
  assert.deepEqual(f.item("acme/app", n).labels, ["bug"]);
  assert.equal(issueMessage({ kind: "answered", subject: `acme/app#${n}` }, "zh"), `已答复 acme/app#${n}：去掉了 ask-owner 标签\n`);
  // a second run of the same answer (the hub's retry) finds the label gone: done all the same
  assert.deepEqual(await issueRound(gh, answered, "en"), { kind: "answered", subject: `acme/app#${n}` });
  assert.deepEqual(f.seen.filter((s) => s.method !== "GET").map((s) => `${s.method} ${s.template} ${s.status}`), [
    "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name} -1",
    "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name} 404",
  ]);
  assert.deepEqual(f.faults, []);
});

test("nothing is asked for a closed issue, one whose label is gone, a pull request, or another repository's issue", async () => {
  const f = await fake();
  f.createRepo("acme/app", { "README.md": "hi\n" });
  f.push("acme/app", "feature", { "a.txt": "a\n" });
  const gh = new GitHub(f.url, "ask-token");
  const closed = f.openIssue("acme/app", "Old", "", ["ask-owner"]);
  f.closeItem("acme/app", closed);
  const gone = f.openIssue("acme/app", "Gone", "", ["ask-owner"]);
  f.unlabel("acme/app", gone, "ask-owner");
  const pull = f.openPull("acme/app", "feature", { labels: ["ask-owner"] });
  const run = (number: number) => issueRound(gh, { repo: "acme/app", number, answered: false }, "en");
  assert.deepEqual(await run(closed), { kind: "nothing", subject: `acme/app#${closed}`, why: "is closed" });
  assert.deepEqual(await run(gone), { kind: "nothing", subject: `acme/app#${gone}`, why: "has no ask-owner label" });
  assert.deepEqual(await run(pull), { kind: "nothing", subject: `acme/app#${pull}`, why: "is a pull request: ask-owner is for issues" });
  const empty = f.openIssue("acme/app", "Empty", "", ["ask-owner"]);
  assert.deepEqual(await run(empty), { kind: "question", subject: `acme/app#${empty}`, title: "Empty", text: "(the issue has no text besides its title)" });
  assert.equal(issueInputOf({ events: [{ type: "delivery.issue", subject: "evil/app#3" }] }, "acme/app"), null);
  assert.equal(issueInputOf({ answers: [{ about: "delivery-ask evil/app#3" }] }, "acme/app"), null);
  assert.equal(issueInputOf({ events: [{ type: "delivery.pull_request", subject: "acme/app#3" }] }, "acme/app"), null);
  assert.deepEqual(f.seen.filter((s) => s.method !== "GET"), []);
  assert.deepEqual(f.faults, []);
});
