/**
 * What an agent plugin is given of a long output (src/worker/output.ts): the whole output when it fits, else the
 * head and the tail cut at line boundaries with one line saying how much was left out. The built-in plugins read a
 * long output as they read the short one it was made from (their recorded or documented outputs with megabytes of
 * other lines put in the middle), and a receipt block whose code fences cross the cut is still found.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engine, tempDir } from "./helpers.js";
import { OutputWindow } from "../src/worker/output.js";
import { readMessage } from "../src/worker/receipt.js";
import type { AgentPlugin } from "../src/sdk/index.js";
import claude from "../plugins/claude/agent.js";
import codex from "../plugins/codex/agent.js";
import dsh from "../plugins/dsh/agent.js";
import acp from "../plugins/acp/agent.js";
import command from "../plugins/command/agent.js";

const fixture = (p: string) => readFileSync(join(engine, "tests", "fixtures", p), "utf8");
const jsonl = (...events: object[]) => events.map((e) => JSON.stringify(e)).join("\n") + "\n";

/** A window over a file holding `text`, written in `pieces` appends with an update after each. */
function windowOf(text: string | Buffer, headBytes: number, tailBytes: number, pieces = 1): OutputWindow {
  const file = join(tempDir("aa-out-"), "stdout");
  writeFileSync(file, "");
  const w = new OutputWindow(file, headBytes, tailBytes);
  const buf = Buffer.from(text);
  const step = Math.ceil(buf.length / pieces);
  for (let at = 0; at < buf.length; at += step) {
    appendFileSync(file, buf.subarray(at, at + step));
    w.update();
  }
  return w;
}

test("an output that fits in head + tail is given whole, byte for byte, however it arrived (cut inside lines and characters)", () => {
  const text = "first line\nzweite Zeile äöü\n第三行，中文\nno line end at the end 🙂";
  for (const pieces of [1, 3, 7, Buffer.byteLength(text)]) {
    assert.equal(windowOf(text, 16, 64, pieces).text(), text, `${pieces} pieces`);
  }
  const missing = new OutputWindow(join(tempDir("aa-out-"), "nothing"), 16, 64);
  assert.equal(missing.update(), false);
  assert.equal(missing.text(), "");
});

test("a long output: the head up to its last line end, one line with the bytes left out, the tail from its first line start", () => {
  const lines = Array.from({ length: 100 }, (_, i) => `line ${String(i).padStart(3, "0")}`); // 8 bytes + "\n"
  const text = lines.join("\n") + "\n";
  const w = windowOf(text, 40, 60, 9);
  // head: the first 40 bytes end inside line 4 → lines 0–3 (36 bytes); tail: the last 60 bytes start inside line 93 → lines 94–99.
  assert.equal(w.text(), `${lines.slice(0, 4).join("\n")}\n[… ${900 - 36 - 54} bytes of output left out here …]\n${lines.slice(94).join("\n")}\n`);
  assert.equal(w.total, 900);
});

test("a first line longer than the head and a last line longer than the tail are cut at character boundaries", () => {
  const text = "ä".repeat(30) + "\n" + "middle\n".repeat(20) + "ü".repeat(30);
  const out = windowOf(text, 11, 13, 4).text();
  // 11 bytes of 2-byte characters keep 5 of them; the last 13 bytes start inside a character, so 6 remain.
  assert.equal(out, `${"ä".repeat(5)}\n[… ${Buffer.byteLength(text) - 10 - 12} bytes of output left out here …]\n${"ü".repeat(6)}`);
});

/** `text` with `bytes` of lines no plugin looks at put after its first line. */
function padded(text: string, bytes: number): string {
  const nl = text.indexOf("\n") + 1;
  const filler = JSON.stringify({ type: "filler", note: "x".repeat(200) }) + "\n";
  return text.slice(0, nl) + filler.repeat(Math.ceil(bytes / filler.length)) + text.slice(nl);
}

const samples: [string, AgentPlugin, string, number | null, string][] = [
  ["claude, a finished run", claude, fixture("claude/claude-stream-json-1.jsonl"), 0, ""],
  ["claude, a resumed run", claude, fixture("claude/claude-stream-json-resume.jsonl"), 0, ""],
  ["claude, a deleted session", claude, fixture("claude/claude-stream-json-resume-deleted.jsonl"), 1, fixture("claude/claude-stream-json-resume-deleted.stderr")],
  ["claude, still running", claude, fixture("claude/claude-stream-json-partial.jsonl"), null, ""],
  ["codex, a finished run", codex, fixture("codex/codex-exec-json.jsonl"), 0, ""],
  ["codex, a resumed run", codex, fixture("codex/codex-exec-resume-json.jsonl"), 0, ""],
  ["codex, an error", codex, fixture("codex/codex-exec-json-error-400.jsonl"), 1, ""],
  ["dsh, a finished run", dsh, jsonl({ type: "session", sessionId: "ses-7" }, { type: "step_end", usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 60 } }, { type: "final", reason: "completed", text: "Done: fixed it" }), 0, ""],
  ["acp, a finished turn", acp, jsonl({ acp: "session", session: "s-1" }, { acp: "end", stopReason: "end_turn", text: "Done: yes", usage: { inputTokens: 5, outputTokens: 2 } }), 0, ""],
];

for (const [name, plugin, stdout, code, stderr] of samples) {
  test(`${name}: read from head and tail of 3 MB more output, the plugin gives what it gives for the output alone`, () => {
    const long = padded(stdout, 3 * 1024 * 1024);
    const out = windowOf(long, 64 * 1024, 256 * 1024, 5);
    const err = windowOf(stderr, 1024, 4096);
    assert.match(out.text(), /\n\[… \d+ bytes of output left out here …\]\n/);
    assert.deepEqual(plugin.read(out.text(), code, err.text()), plugin.read(stdout, code, stderr));
  });
}

const receipt = '```agent-autoloop\n{"notice": [{"title": "Checked the logs"}]}\n```';

test("a code block open across the cut keeps the cut inside it; the receipt after it is found as in the whole output", () => {
  const text = `Done: looked at the build\n\`\`\`sh\n${"make: line of build output\n".repeat(400)}\`\`\`\nThat was the build.\n${receipt}\n`;
  const whole = readMessage(text);
  assert.deepEqual(whole.receipt, { notice: [{ title: "Checked the logs" }] });
  const out = windowOf(text, 200, 300, 6).text();
  assert.match(out, /^Done: looked at the build\n```sh\n(make: line of build output\n)+\[… \d+ bytes of output left out here …\]\n(make: line of build output\n)+```\nThat was the build\.\n```agent-autoloop\n/);
  assert.deepEqual(command.read(out, 0, ""), { started: true, finished: true, text: out.trim() });
  const cut = readMessage(out);
  assert.deepEqual([cut.summary, cut.receipt, cut.receiptError], [whole.summary, whole.receipt, null]);
});

test("a tail that starts inside a code block opened in the part left out gets its opening line again, a head that ends inside one its closing", () => {
  const text = `Done: two blocks\n~~~~md\n${"first block\n".repeat(50)}~~~~\n${"between\n".repeat(300)}\`\`\`text\n${"second block\n".repeat(50)}\`\`\`\n${receipt}\n`;
  assert.deepEqual(readMessage(text).receipt, { notice: [{ title: "Checked the logs" }] });
  const out = windowOf(text, 100, 300, 4).text();
  assert.match(out, /^Done: two blocks\n~~~~md\n(first block\n)+~~~~\n\[… \d+ bytes of output left out here …\]\n```text\n(second block\n)+```\n```agent-autoloop\n/);
  assert.deepEqual(readMessage(out).receipt, { notice: [{ title: "Checked the logs" }] });
  // Without the line opening it again, the second block's closing fence would open a block that swallows the receipt.
  assert.deepEqual(readMessage(out.replace("\n```text\n", "\n")).receipt, {});
});

test("blocks wholly left out change nothing; a closing fence with 300 blanks after it still closes", () => {
  const blocks = "```\ncode\n```\n~~~~md\nmore\n~~~~\n".repeat(200);
  const text = `Done: many blocks\n\`\`\`\n${"inside\n".repeat(100)}\`\`\`${" ".repeat(300)}\n${blocks}${receipt}\n`;
  assert.deepEqual(readMessage(text).receipt, { notice: [{ title: "Checked the logs" }] });
  for (const [head, tail] of [[40, 120], [2000, 120], [40, 6000]]) {
    const out = windowOf(text, head!, tail!, 3).text();
    assert.match(out, /bytes of output left out here/);
    assert.deepEqual(readMessage(out).receipt, { notice: [{ title: "Checked the logs" }] }, `head ${head}, tail ${tail}`);
  }
});
