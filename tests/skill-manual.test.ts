/**
 * skills/agent-autoloop/SKILL.md (issue 29): an agent given only the manual can write a working rule. Every whole
 * rules.json of the manual passes the real `check`; the first one runs end to end on a real `serve` (its command
 * agent's run ends with the summary the manual promises); its receipt example is read by the worker's own reader
 * with no error.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { engine, serveProcess, tempDir, until } from "./helpers.js";
import { readMessage } from "../src/worker/receipt.js";
import type { State } from "../src/protocol/responses.js";

const manual = readFileSync(join(engine, "skills", "agent-autoloop", "SKILL.md"), "utf8");
const bin = join(engine, "bin", "agent-autoloop.js");
const root = tempDir("aa-skill-");
after(() => rmSync(root, { recursive: true, force: true }));
const env = { ...process.env, HOME: root, AGENT_AUTOLOOP_HOME: join(root, "aa"), AGENT_AUTOLOOP_LANG: "en", AGENT_AUTOLOOP_URL: "http://127.0.0.1:1", DISPLAY: "", WAYLAND_DISPLAY: "" };
const cli = async (...args: string[]) => (await promisify(execFile)(process.execPath, [bin, ...args], { env, encoding: "utf8" })).stdout.trim();

/** The fenced blocks of the manual in `lang` whose first line is `first`. */
const blocks = (lang: string, first?: string) =>
  [...manual.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)\\n```", "g"))].map((m) => m[1]!).filter((b) => first === undefined || b.startsWith(first));

test("the manual's whole rules.json files pass check; its receipt example reads with no error", async () => {
  await cli("init");
  const files = blocks("jsonc", "// rules.json (whole file)");
  assert.equal(files.length, 2);
  for (const [i, text] of files.entries()) {
    const f = join(root, `rules-${i}.json`);
    writeFileSync(f, text);
    assert.match(await cli("check", f), /is valid: 1 rules, 1 agents/);
  }
  const [receipt] = blocks("agent-autoloop");
  const m = readMessage("Done: the example\n```agent-autoloop\n" + receipt + "\n```");
  assert.equal(m.receiptError, null);
  assert.deepEqual(Object.keys(m.receipt).sort(), ["ask", "events", "later", "notice", "resolve"]);
});

test("the manual's first rules.json runs: key, event, the run's summary as the manual says", async () => {
  writeFileSync(join(root, "aa", "rules.json"), blocks("jsonc", "// rules.json (whole file)")[0]!);
  const hub = await serveProcess(join(root, "aa"), undefined, env);
  const url = hub.url;
  try {
    const key = (await promisify(execFile)(process.execPath, [bin, "key", "new", "source", "shop"], { env: { ...env, AGENT_AUTOLOOP_URL: url }, encoding: "utf8" })).stdout.trim();
    // The manual's curl line, as data.
    const curl = /-d '(\{"id": "order-17"[^']*)'/.exec(manual)![1]!;
    const posted = await fetch(`${url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: curl });
    assert.deepEqual(await posted.json(), { event: 1, duplicate: false, routed: ["orders"], paused: [] });
    const owner = (JSON.parse(readFileSync(join(root, "aa", "config.json"), "utf8")) as { owner: string }).owner;
    const run = await until(async () => {
      const s = (await (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as State;
      return s.runs.find((r) => r.state === "done");
    }, 60_000, () => `the run: ${hub.output()}`);
    assert.deepEqual([run.rule, run.summary], ["orders", "Done: looked at it"]);
  } finally {
    await hub.stop();
  }
});
