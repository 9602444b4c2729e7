/**
 * How runs are claimed and reported (protocol.md Agent：领活、干活): which runs a heartbeat asks the worker to stop,
 * a repeated claim id, and the decided cards a job's context carries. Pure: the Clock kernel on a real SQLite file.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules } from "./helpers.js";

const start = "2026-11-02T08:00:00Z";
const rules = { ...baseRules, rules: [{ ...baseRules.rules[0], parallel: 5 }, baseRules.rules[1]] };

test("a heartbeat asks a worker to stop only its own runs being stopped, in id order", () => {
  const k = new Clock(rules, start);
  const runs: number[] = [];
  for (const s of ["a", "b", "c", "d", "e"]) {
    k.event(`e-${s}`, { subject: s });
    runs.push(k.claim(`c-${s}`).job!.run);
  }
  const [a, b, c, d, e] = runs as [number, number, number, number, number];
  k.result(d, { outcome: "done" });
  k.result(e, { outcome: "cancelled" }); // the agent's own choice: nothing to stop
  k.commit({ kind: "cancel", keyHash: K.owner, run: c }); // stopping
  k.commit({ kind: "cancel", keyHash: K.owner, run: a }); // stopping, then it reports
  k.result(a, { outcome: "cancelled" }); // cancelled, stop requested
  k.now += 60_000;
  const hb = k.commit({ kind: "work", keyHash: K.worker, claim: "hb", running: [c, b, a, d, e, 99], capacity: 0 });
  assert.deepEqual(hb.body, { job: null, cancel: [a, c] });
  const other = k.commit({ kind: "work", keyHash: K.worker2, claim: "hb2", running: [a, c], capacity: 0 });
  assert.deepEqual(other.body, { job: null, cancel: [] }, "another worker's runs are not its to stop");
  k.close();
});

test("a repeated claim id gets the same job with a new token while the run goes on, and nothing once it ended", () => {
  const k = new Clock(rules, start);
  k.event("e1");
  const first = k.claim("same").job!;
  const again = k.claim("same").job!;
  assert.deepEqual([again.run, again.attempt, k.run(first.run).claims], [first.run, 1, 2]);
  assert.notEqual(again.token, first.token);
  k.commit({ kind: "started", run: first.run, token: again.token, session: null, link: null });
  assert.equal(k.claim("same").job!.run, first.run, "running: the same job again");
  k.result(first.run, { outcome: "done" });
  assert.deepEqual(k.claim("same"), { job: null, cancel: [] });
  k.close();
});

test("a job's context lists the lane's decided questions, oldest first, with the chosen option or the words", () => {
  const k = new Clock(rules, start);
  k.event("e1");
  const run = k.claim("c1").job!.run;
  k.result(run, { outcome: "done", ask: [{ title: "Pick", options: ["x", "y"] }, { title: "Say", options: ["x"] }, { title: "Open", options: ["x"] }], notice: [{ title: "N" }] });
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 1, text: null, by: null, ref: null });
  k.commit({ kind: "answer", keyHash: K.owner, card: 2, choice: null, text: "in my words", by: null, ref: null });
  k.commit({ kind: "answer", keyHash: K.owner, card: 4, choice: 0, text: null, by: null, ref: null });
  const job = k.claim("c2").job!;
  k.result(job.run, { outcome: "done" });
  k.event("e2");
  const third = k.claim("c3").job!;
  assert.deepEqual(third.context.decided.map((d: { card: number; title: string; choice: string }) => [d.card, d.title, d.choice]), [[1, "Pick", "y"], [2, "Say", "in my words"]]);
  k.close();
});

test("started: a claimed run starts once; its session and link are kept, and a repeat with nothing new writes nothing", () => {
  const k = new Clock(rules, start);
  k.event("e1");
  const job = k.claim("c1").job!;
  const first = k.started(job.run, "s-1", "https://x.example/1");
  const r = k.run(job.run);
  assert.deepEqual([r.state, r.startedAt, r.session, r.link, first.committed.length], ["running", k.now, "s-1", "https://x.example/1", 1]);
  assert.deepEqual(k.store.view.get("sessions", "s-1"), { run: job.run });
  k.now += 1000;
  const again = k.started(job.run, "s-1", "https://x.example/1");
  assert.deepEqual([again.status, again.committed.length, k.run(job.run).startedAt], [200, 0, k.now - 1000]);
  const moved = k.started(job.run, null, "https://x.example/2");
  assert.deepEqual([moved.committed.length, k.run(job.run).link, k.run(job.run).session], [1, "https://x.example/2", "s-1"]);
  k.close();
});

test("a resumed run that reports a new session gives up the one it was handed; a stopped lane's session is not resumed", () => {
  const k = new Clock({ ...rules, rules: [{ ...rules.rules[0], resume: true }, rules.rules[1]] }, start);
  k.event("e1");
  const one = k.claim("c1").job!.run;
  k.started(one, "s-1");
  k.result(one, { outcome: "done" });
  k.event("e2");
  const two = k.claim("c2").job!;
  assert.equal(two.session, "s-1", "the lane's last session is resumed");
  assert.deepEqual(k.store.view.get("sessions", "s-1"), { run: two.run });
  k.started(two.run, "s-2");
  assert.deepEqual([k.store.view.get("sessions", "s-1"), k.store.view.get("sessions", "s-2")], [undefined, { run: two.run }]);
  k.result(two.run, { outcome: "cancelled" });
  k.event("e3");
  assert.equal(k.claim("c3").job!.session, null, "the last run was stopped: a new session");
  k.close();
});

test("a lane's session is resumed only by the agent that had it", () => {
  const resume = { ...rules, rules: [{ ...rules.rules[0], resume: true }, rules.rules[1]] };
  const k = new Clock(resume, start);
  k.event("e1");
  const one = k.claim("c1").job!.run;
  k.started(one, "s-1");
  k.result(one, { outcome: "done" });
  k.loadRules({ ...resume, rules: [{ ...resume.rules[0], to: "bot2" }, rules.rules[1]] });
  k.event("e2");
  const two = k.claim("c2", K.worker2).job!;
  assert.deepEqual([two.run, two.session], [2, null]);
  k.close();
});
