/**
 * Agents that print a lot (issue 14, item 8): the worker reads the output incrementally, keeps a bounded head and
 * tail, and the run still ends with its last message's receipt applied. The agents are real child processes that
 * print the stream-json lines Claude Code prints (the built-in `claude` plugin reads them) or plain text (`command`).
 */
import { test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hubFixture, baseRules, tempDir, until, type Fixture } from "./helpers.js";
import { Worker } from "../src/worker/worker.js";
import type { State } from "../src/protocol/responses.js";

let f: Fixture | null = null;
let worker: Worker | null = null;
afterEach(async () => {
  worker?.stop();
  worker = null;
  await f?.close();
  f = null;
});

const mb = 1024 * 1024;

/** A receipt with a card, a timer and an event (rule "alerts" may emit `followup.*` from source shop). */
function message(first: string): string {
  const receipt = {
    ask: [{ title: "Pick a name", options: ["Alpha", "Beta"], key: "name" }],
    later: [{ key: "look-again", at: "2099-01-01T00:00:00Z" }],
    events: [{ id: "big-1", type: "followup.big", summary: "after the long output" }],
  };
  return `${first}\nThe details are above.\n\n\`\`\`agent-autoloop\n${JSON.stringify(receipt, null, 2)}\n\`\`\``;
}

/**
 * Writes an executable that prints like `claude -p --output-format stream-json --verbose`: the init line, `bytes` of
 * assistant lines (~1 KiB each), then the result line with `text` as the last message.
 */
function fakeClaude(bytes: number, text: string): string {
  const file = join(tempDir(), "claude");
  const init = { type: "system", subtype: "init", session_id: "sess-big", tools: [] };
  const result = {
    type: "result", subtype: "success", is_error: false, result: text, session_id: "sess-big",
    usage: { input_tokens: 10, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  };
  writeFileSync(file, `#!/usr/bin/env node
const fs = require("fs");
fs.writeSync(1, ${JSON.stringify(JSON.stringify(init) + "\n")});
const line = JSON.stringify({ type: "assistant", message: { content: [{ type: "text", text: "x".repeat(960) }] } }) + "\\n";
const chunk = Buffer.from(line.repeat(Math.floor(${mb} / line.length)));
for (let left = ${bytes}; left > 0; left -= chunk.length) fs.writeSync(1, chunk);
fs.writeSync(1, ${JSON.stringify(JSON.stringify(result) + "\n")});
`);
  chmodSync(file, 0o755);
  return file;
}

async function runWith(agent: Record<string, unknown>): Promise<{ fx: Fixture; st: State }> {
  const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", ...agent } } };
  const fx = await hubFixture(rules);
  f = fx;
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  worker = new Worker({ url: fx.url, key: fx.keys.worker, name: "w1", capacity: 2, home: fx.home, lang: "en" });
  void worker.run();
  // Any end, so that a failure shows its error rather than a time-out.
  const st = (await until(async () => {
    const s = await fx.state();
    return ["done", "nothing", "waiting", "failed", "cancelled"].includes(s.runs[0]?.state ?? "") ? s : null;
  }, 180_000, "the run to end"))!;
  assert.deepEqual([st.runs[0]!.state, st.runs[0]!.error], ["done", null]);
  return { fx, st };
}

function assertReceiptApplied(st: State, summary: string): void {
  assert.equal(st.runs[0]!.summary, summary);
  assert.deepEqual(st.cards.map((c) => [c.title, c.options]), [["Pick a name", ["Alpha", "Beta"]]]);
  assert.deepEqual(st.timers.map((t) => [t.rule, t.key, t.at]), [["alerts", "look-again", "2099-01-01T00:00:00.000Z"]]);
  assert.deepEqual(st.unrouted.map((e) => [e.source, e.eventId, e.type]), [["shop", "receipt:big-1", "followup.big"]]);
}

test("70 MB of stream-json before the result line: the run ends done with the result's receipt (it failed with 'no result' when only the first 64 MiB were read)", async () => {
  const { fx, st } = await runWith({ use: "claude", program: fakeClaude(70 * mb, message("Done: read 70 MB")) });
  assert.ok(statSync(join(fx.home.worker, "runs", "1-1", "1", "stdout")).size > 70 * mb);
  assert.equal(st.runs[0].session, "sess-big");
  assertReceiptApplied(st, "Done: read 70 MB");
});

test("200 MB of stream-json before the result line: done, with the result's card, timer and event", async () => {
  const { fx, st } = await runWith({ use: "claude", program: fakeClaude(200 * mb, message("Done: read 200 MB")) });
  assert.ok(statSync(join(fx.home.worker, "runs", "1-1", "1", "stdout")).size > 200 * mb);
  assert.equal(st.runs[0].session, "sess-big");
  assertReceiptApplied(st, "Done: read 200 MB");
});

test("a command agent whose last message is 20 MB (a log in a code block): its first line and its receipt are read", async () => {
  const file = join(tempDir(), "agent.js");
  writeFileSync(file, `const fs = require("fs");
fs.writeSync(1, "Done: built it\\nThe log:\\n\`\`\`text\\n");
const chunk = Buffer.from("cc -O2 -c some/file.c -o some/file.o\\n".repeat(28000));
for (let left = ${20 * mb}; left > 0; left -= chunk.length) fs.writeSync(1, chunk);
fs.writeSync(1, ${JSON.stringify("```\n" + message("That was all.").split("\n").slice(1).join("\n") + "\n")});
`);
  const { st } = await runWith({ use: "command", command: ["node", file] });
  assertReceiptApplied(st, "Done: built it");
});
