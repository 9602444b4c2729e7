/**
 * examples/github-issue-event.mjs (issue 29, "the first hour"): a real payload becomes the event; --help, empty input,
 * text that is not JSON and JSON that is not an issues payload print the usage and why on stderr (exit 0 for --help,
 * 2 otherwise) and nothing on stdout — never a stack trace.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";

const script = join(import.meta.dirname, "..", "examples", "github-issue-event.mjs");
const usage = "usage: node examples/github-issue-event.mjs < payload.json\n";

function run(args: string[], input: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [script, ...args], { input, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("a real payload on stdin becomes the event", () => {
  const payload = { action: "labeled", issue: { id: 7, number: 12, title: "Crash on start", html_url: "https://github.com/o/r/issues/12" } };
  assert.deepEqual(run([], JSON.stringify(payload)), {
    status: 0, stderr: "",
    stdout: '{"id":"7:labeled","type":"issues.labeled","subject":"#12","summary":"Crash on start","link":"https://github.com/o/r/issues/12"}\n',
  });
});

test("--help, empty input, not JSON, not an issues payload: the usage and why, no stack trace", () => {
  const cases: [string[], string, number, string][] = [
    [["--help"], "", 0, ""],
    [[], "", 2, "nothing on standard input\n\n"],
    [[], "  \n", 2, "nothing on standard input\n\n"],
    [[], "{not json", 2, "standard input is not JSON ("],
    [[], '{"action":"opened"}', 2, "not a GitHub issues payload: it needs action, issue.id, issue.number, issue.title and issue.html_url\n\n"],
    [[], "null", 2, "not a GitHub issues payload"],
    [["--example", "no-such-action"], "", 2, "no issues.no-such-action example\n\n"],
  ];
  for (const [args, input, status, why] of cases) {
    const r = run(args, input);
    assert.equal(r.status, status, `${args.join(" ")} ${JSON.stringify(input)}: ${r.stderr}`);
    assert.equal(r.stdout, "");
    assert.ok(r.stderr.startsWith(why), r.stderr);
    assert.ok(r.stderr.includes(usage), r.stderr);
    assert.ok(!r.stderr.includes("    at "), `no stack trace: ${r.stderr}`);
  }
});
