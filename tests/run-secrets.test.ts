/**
 * Issue 26 round 9, Medium (reported case kept): a sandboxed agent given GH_TOKEN by its rule's `env` printed it in
 * its last message, in a notice card of its receipt, and on stderr before failing; the transcript said `[redacted]`,
 * but the whole token reached the run's summary, the card (`status`, the file channel's cards.txt), the failure
 * reason (`why`, the console, search). The kind: everything a worker reports of an agent has the run's secrets
 * replaced, not only its transcript.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { realpathSync, rmSync } from "node:fs";
import { baseRules, hubFixture, tempDir, until, type Fixture } from "./helpers.js";
import { Worker } from "../src/worker/worker.js";
import { redactedDeep } from "../src/worker/transcript.js";

const token = "ghp_r9FAKEsecretVALUE0123456789abcdef";
const saved = process.env.GH_TOKEN;
const work = realpathSync(tempDir("aa-run-secrets-"));
after(() => {
  if (saved === undefined) delete process.env.GH_TOKEN;
  else process.env.GH_TOKEN = saved;
  rmSync(work, { recursive: true, force: true });
});

/** A `command` agent: prints its last message (a receipt with a notice) holding the token, or fails with it on stderr. */
const agent = String.raw`
const t = process.env.GH_TOKEN;
if (process.argv[1] === "fail") { process.stderr.write("push failed for " + t + "\n"); process.exit(3); }
const receipt = { notice: [{ title: "Pushed with " + t, text: "the token " + t + " worked" }], events: [{ id: "follow-1", type: "followup.push", subject: "S-" + t, summary: "pushed with " + t }] };
console.log("Done: pushed with " + t + "\n\n` + "```" + String.raw`agent-autoloop\n" + JSON.stringify(receipt) + "\n` + "```" + String.raw`");
`;

test("issue 26 r9 (reported case): a run's secrets are replaced in its summary, its receipt's cards and its failure reason, not only its transcript", async () => {
  process.env.GH_TOKEN = token;
  const rules = {
    ...baseRules,
    agents: {
      ...baseRules.agents,
      bot: { worker: "w1", use: "command", env: ["GH_TOKEN"], command: [process.execPath, "-e", agent, "ok"] },
      bad: { worker: "w1", use: "command", env: ["GH_TOKEN"], command: [process.execPath, "-e", agent, "fail"] },
    },
    rules: [
      { ...baseRules.rules[0], cwd: work },
      { name: "failing", when: { source: "shop", types: ["fail.*"] }, to: "bad", cwd: work, prompt: "fail" },
    ],
  };
  let f: Fixture | null = null;
  let w: Worker | null = null;
  try {
    f = await hubFixture(rules);
    w = new Worker({ url: f.url, key: f.keys.worker, name: "w1", capacity: 1, home: f.home, lang: "en" });
    void w.run();
    await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x" });
    await f.call("POST", "/v1/events", f.keys.source, { id: "e2", type: "fail.x" });
    const fx = f;
    const st = (await until(async () => {
      const s = await fx.state();
      const done = s.runs.find((r) => r.rule === "alerts" && r.state === "done");
      const failed = s.runs.find((r) => r.rule === "failing" && r.error);
      return done && failed ? s : null;
    }, 30_000, "both runs to report"))!;
    const done = st.runs.find((r) => r.rule === "alerts")!;
    const failed = st.runs.find((r) => r.rule === "failing")!;
    assert.equal(done.summary, "Done: pushed with [redacted]");
    assert.equal(failed.error, "exit code 3: push failed for [redacted]");
    const card = st.cards.find((c) => c.title.startsWith("Pushed with"));
    assert.deepEqual([card?.title, card?.text], ["Pushed with [redacted]", "the token [redacted] worked"]);
    // Nowhere in the hub's answer (channels are given the same cards).
    assert.equal(JSON.stringify(st).includes(token), false, "the state holds no token");
    // The receipt's event kept its formats (round 9b: "[redacted]" in a subject made the hub refuse the whole result).
    const events = (await f.call("GET", "/v1/events", f.keys.owner)).body as { events: { subject: string; summary: string; type: string }[] };
    const follow = events.events.find((e) => e.type === "followup.push");
    assert.deepEqual([follow?.subject, follow?.summary], ["S-REDACTED", "pushed with [redacted]"]);
  } finally {
    w?.stop();
    await f?.close();
  }
});

test("redactedDeep: every string of a value, keys left, a string without a secret left exactly as it is; control characters inside a secret do not hide it", () => {
  const secret = "s3cr3t-VALUE-123";
  const value = { summary: `a ${secret} b`, keep: "line\u0007bell", list: [`x${secret.slice(0, 4)}\u0000${secret.slice(4)}y`, 3, null], [secret]: true };
  assert.deepEqual(redactedDeep(value, [secret]), { summary: "a [redacted] b", keep: "line\u0007bell", list: ["xREDACTEDy", 3, null], [secret]: true });
  assert.deepEqual(redactedDeep({ subject: `S-${secret}`, type: `t.${secret}` }, [secret]), { subject: "S-REDACTED", type: "t.REDACTED" });
  assert.equal(redactedDeep(value, []), value);
});
