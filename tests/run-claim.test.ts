/**
 * How runs are claimed and reported (protocol.md Agent：领活、干活): which runs a heartbeat asks the worker to stop,
 * a repeated claim id, and the decided cards a job's context carries. Pure: the Clock kernel on a real SQLite file.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules } from "./helpers.js";
import { laneKey } from "../src/kernel/tables.js";
import { hashKey, runToken } from "../src/kernel/credentials.js";

const start = "2026-11-02T08:00:00Z";
const rules = { ...baseRules, rules: [{ ...baseRules.rules[0], parallel: 5 }, baseRules.rules[1]] };

test("a heartbeat asks a worker to stop only its own runs being stopped, in id order", () => {
  const k = new Clock(rules, start);
  const runs: number[] = [];
  for (const s of ["a", "b", "c", "d", "e"]) {
    runs.push(k.claimed(`e-${s}`, null, { subject: s }));
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
  const run = k.claimed("e1");
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
  const one = k.claimed("e1");
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
  const one = k.claimed("e1");
  k.started(one, "s-1");
  k.result(one, { outcome: "done" });
  k.loadRules({ ...resume, rules: [{ ...resume.rules[0], to: "bot2" }, rules.rules[1]] });
  k.event("e2");
  const two = k.claim("c2", K.worker2).job!;
  assert.deepEqual([two.run, two.session], [2, null]);
  k.close();
});

const crm = (k: Clock) => k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "crm", newHash: hashKey("crm") });
const lane = (k: Clock, rule = "alerts", name = "") => k.store.view.get("lanes", laneKey(rule, name))!;
const group = (k: Clock, name = "alerts") => k.store.view.get("groups", name)?.active;
const uncertainCard = (k: Clock, run: number) => k.store.view.where("cards", "1").map(({ row }) => row).find((c) => c.key === `uncertain:${run}`)!;
const tables = (d: { committed: { changes: unknown[][] }[] }) => [...new Set(d.committed.flatMap((f) => f.changes.map((ch) => ch[0])))].sort();

test("a group runs at most the largest parallel of its own rules at once; a group with nothing running keeps no row", () => {
  const k = new Clock({ ...baseRules, rules: [{ ...baseRules.rules[0], parallel: 1 }, { ...baseRules.rules[1], parallel: 3 }] }, start);
  crm(k);
  k.event("a1", { subject: "a" });
  k.event("b1", { subject: "b" });
  const a = k.claim("c1").job!.run;
  assert.deepEqual(k.claim("c2"), { job: null, cancel: [] }, "lane b waits: group alerts runs one run at a time");
  for (const s of ["w", "x", "y", "z"]) k.commit({ kind: "event", keyHash: hashKey("crm"), event: { id: `t-${s}`, type: "ticket.x", subject: s } });
  const taken = ["d1", "d2", "d3", "d4"].map((id) => k.claim(id, K.worker2).job?.run ?? null);
  assert.deepEqual([taken, group(k, "per-subject"), group(k)], [[3, 4, 5, null], [3, 4, 5], [a]]);
  k.result(a, { outcome: "done" });
  assert.equal(group(k), undefined);
  assert.equal(k.claim("c3").job!.run, 2);
  k.close();
});

test("two claims decided in one commit take two different runs", () => {
  const k = new Clock(rules, start);
  k.event("e-a", { subject: "a" });
  k.event("e-b", { subject: "b" });
  const both = k.store.commit([
    { input: { kind: "work", keyHash: K.worker, claim: "x1", running: [], capacity: 1 }, now: k.now },
    { input: { kind: "work", keyHash: K.worker, claim: "x2", running: [], capacity: 1 }, now: k.now },
  ], k.env);
  assert.deepEqual(both.map((d) => (d.body as { job: { run: number } }).job.run), [1, 2]);
  k.close();
});

test("a heartbeat counts once a minute: the worker's time and its runs' leases are kept at 60 s, not before", () => {
  const k = new Clock(rules, start);
  const run = k.claimed("e1");
  const t0 = k.now;
  k.now = t0 + 59_999;
  k.heartbeat([run]);
  assert.deepEqual([k.store.view.get("workers", "w1")!.seenAt, k.run(run).seenAt], [t0, t0]);
  k.now = t0 + 60_000;
  k.heartbeat([run]);
  assert.deepEqual([k.store.view.get("workers", "w1")!.seenAt, k.run(run).seenAt], [t0 + 60_000, t0 + 60_000]);
  k.close();
});

test("a run being stopped keeps its lease while its worker reports it, and ends cancelled when the worker goes quiet", () => {
  const k = new Clock(rules, start);
  const run = k.claimed("e1");
  k.commit({ kind: "cancel", keyHash: K.owner, run });
  k.advance(k.now + 4 * 60_000);
  k.heartbeat([run]);
  k.advance(k.now + 4 * 60_000);
  assert.equal(k.run(run).state, "stopping", "the heartbeat 4 minutes in moved its lease");
  k.advance(k.now + 60_000);
  assert.equal(k.run(run).state, "cancelled");
  k.close();
});

test("a token made for a run that was never claimed is refused", () => {
  const k = new Clock(rules, start);
  k.event("e1");
  const forged = runToken(k.env.master, 1, 0, 0);
  const d = k.commit({ kind: "started", run: 1, token: forged, session: null, link: null });
  assert.deepEqual([d.status, k.run(1).state], [403, "queued"]);
  k.close();
});

test("a worker that reports its uncertain run again gives it back its lane, group and lease, and closes its card", () => {
  const k = new Clock(baseRules, start);
  const one = k.claimed("e1"); // never started: it comes back claimed
  k.advance(k.now + 5 * 60_000);
  assert.deepEqual([k.run(one).state, lane(k).active, group(k), uncertainCard(k, one).state], ["uncertain", null, undefined, "open"]);
  k.event("e2"); // queued in the free lane; nobody claims it
  const queued = lane(k).queued!;
  k.heartbeat([one], K.worker2);
  assert.equal(k.run(one).state, "uncertain", "another worker's heartbeat does not bring it back");
  k.heartbeat([one]);
  assert.deepEqual([k.run(one).state, k.run(one).seenAt, lane(k).active, lane(k).queued, group(k), uncertainCard(k, one).state], ["claimed", k.now, one, queued, [one], "closed"]);
  k.event("e3");
  assert.deepEqual(k.run(queued).events.length, 2, "later work joins the queued run");
  k.advance(k.now + 5 * 60_000 - 1);
  assert.equal(k.run(one).state, "claimed");
  k.advance(k.now + 1);
  assert.equal(k.run(one).state, "uncertain", "its lease ran again from the heartbeat");
  k.close();
});

/** A clock whose first run started on session s-1 and then went unreported for 5 minutes (uncertain). */
function uncertainRun(): [Clock, number] {
  const k = new Clock(baseRules, start);
  const one = k.claimed("e1");
  k.started(one, "s-1");
  k.advance(k.now + 5 * 60_000);
  return [k, one];
}

test("an uncertain run that reports started takes its lane back and runs", () => {
  const [k, one] = uncertainRun();
  const back = k.started(one, "s-1");
  assert.deepEqual([back.status, k.run(one).state, lane(k).active, group(k), uncertainCard(k, one).state], [200, "running", one, [one], "closed"]);
  k.close();
});

test("an uncertain run whose lane another run took stays uncertain and outside its group until its result", () => {
  const [k, one] = uncertainRun();
  const two = k.claimed("e2");
  k.now += 60_000;
  k.heartbeat([one, two]);
  const again = k.started(one, "s-1");
  assert.deepEqual([again.status, k.run(one).state, lane(k).active, group(k), uncertainCard(k, one).state], [200, "uncertain", two, [two], "open"]);
  const end = k.result(one, { outcome: "done" });
  assert.deepEqual([k.run(one).state, lane(k).active, group(k), uncertainCard(k, one).state], ["done", two, [two], "closed"]);
  assert.deepEqual(tables(end), ["cardkeys", "cards", "lanes", "meta", "outbox", "runs", "sessions"], "its group's row is not written");
  k.close();
});

test("a lane's last session is not resumed while another run is using it, in any state that still goes on", () => {
  for (const state of ["claimed", "running", "stopping", "uncertain"]) {
    const k = new Clock({ ...rules, rules: [{ ...rules.rules[0], resume: true }, rules.rules[1]] }, start);
    for (const subject of ["y", "x"]) { // both lanes' last session is s-1
      const run = k.claimed(`${subject}1`, null, { subject });
      k.started(run, "s-1");
      k.result(run, { outcome: "done" });
    }
    k.event("y2", { subject: "y" });
    const y = k.claim("c-y2").job!;
    assert.deepEqual([y.session, k.store.view.get("sessions", "s-1")], ["s-1", { run: y.run }]);
    if (state === "running") k.started(y.run, "s-1");
    if (state === "stopping") k.commit({ kind: "cancel", keyHash: K.owner, run: y.run });
    if (state === "uncertain") k.advance(k.now + 5 * 60_000);
    assert.equal(k.run(y.run).state, state);
    k.event("x2", { subject: "x" });
    const x = k.claim("c-x2").job!;
    assert.deepEqual([x.run, x.session], [y.run + 1, null], state);
    k.close();
  }
});

test("a run started by a timer gets it in the job's timers, not among its events", () => {
  const k = new Clock(rules, start);
  const first = k.claimed("e1");
  const at = new Date(k.now + 60_000).toISOString();
  k.result(first, { outcome: "done", later: [{ key: "check", at, about: "look again" }] });
  k.advance(Date.parse(at));
  k.event("e2");
  const job = k.claim("c2").job!;
  assert.deepEqual([job.context.events.map((e: { id: string }) => e.id), job.context.timers], [["e2"], [{ key: "check", about: "look again", at }]]);
  k.close();
});

test("a started run its worker reports again after it went uncertain comes back running", () => {
  const [k, one] = uncertainRun();
  k.heartbeat([one]);
  assert.deepEqual([k.run(one).state, lane(k).active, group(k)], ["running", one, [one]]);
  k.close();
});

test("a heartbeat names every run of its worker being stopped, listed or not; a stopped run that finished is not named", () => {
  const k = new Clock(rules, start);
  const a = k.claimed("e-a", null, { subject: "a" });
  const b = k.claimed("e-b", null, { subject: "b" });
  k.commit({ kind: "cancel", keyHash: K.owner, run: a });
  k.commit({ kind: "cancel", keyHash: K.owner, run: b });
  k.result(b, { outcome: "done" }); // finished before it heard of the stop: done, not cancelled
  k.now += 60_000;
  assert.deepEqual([k.run(b).state, k.heartbeat([]).body], ["done", { job: null, cancel: [a] }]);
  assert.deepEqual(k.heartbeat([a, b]).body, { job: null, cancel: [a] });
  k.close();
});

test("a repeated claim id of an uncertain run gets its job again", () => {
  const k = new Clock(rules, start);
  const run = k.claimed("e1");
  k.advance(k.now + 5 * 60_000);
  assert.equal(k.run(run).state, "uncertain");
  assert.deepEqual([k.claim("c-e1").job?.run, k.run(run).claims], [run, 2]);
  k.close();
});

test("an answer resumes the asking run's session only for the agent that had it", () => {
  const k = new Clock(baseRules, start);
  const run = k.claimed("e1");
  k.started(run, "s-1");
  k.result(run, { outcome: "done", ask: [{ title: "Q", options: ["a", "b"] }] });
  k.loadRules({ ...baseRules, rules: [{ ...baseRules.rules[0], to: "bot2" }, baseRules.rules[1]] });
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 0, text: null, by: null, ref: null });
  const next = k.claim("c2", K.worker2).job!;
  assert.deepEqual([next.run, k.run(next.run).sessionHint, next.session], [2, { session: "s-1", agent: "bot" }, null]);
  k.close();
});

test("a job's decided questions leave out notices, even answered in words, and questions closed without an answer", () => {
  const k = new Clock(rules, start);
  const run = k.claimed("e1");
  k.result(run, { outcome: "done", ask: [{ title: "Dropped", options: ["x"] }, { title: "Kept", options: ["x"] }], notice: [{ title: "N" }] });
  k.commit({ kind: "resolve", keyHash: K.owner, card: 1, reason: "not needed" });
  k.commit({ kind: "answer", keyHash: K.owner, card: 2, choice: 0, text: null, by: null, ref: null });
  k.commit({ kind: "answer", keyHash: K.owner, card: 3, choice: null, text: "look at it again", by: null, ref: null });
  const job = k.claim("c2").job!;
  assert.deepEqual(job.context.decided.map((d: { card: number }) => d.card), [2]);
  k.close();
});

test("a claimed run that starts is counted once in its group", () => {
  const k = new Clock(rules, start);
  const run = k.claimed("e1");
  k.started(run, null);
  assert.deepEqual([k.run(run).state, group(k)], ["running", [run]]);
  k.close();
});

test("session rows: a run drops only the rows that still name it, when it reports a new session, fails or ends", () => {
  const k = new Clock(rules, start);
  const sessions = () => k.store.view.where("sessions", "1").map(({ key, row }) => [key, row.run]);
  const a = k.claimed("e-a", null, { subject: "a" });
  const b = k.claimed("e-b", null, { subject: "b" });
  k.started(a, "s-1");
  k.started(a, "s-2"); // a moved on: s-1 is no longer its
  assert.deepEqual(sessions(), [["s-2", a]]);
  k.started(b, "s-2"); // b reports a's session: the row names b now
  k.result(a, { outcome: "failed", error: "x" });
  assert.deepEqual(sessions(), [["s-2", b]], "a's retry keeps b's row");
  k.started(b, "s-3");
  k.started(b, "s-2");
  const c = k.claimed("e-c", null, { subject: "c" });
  k.started(c, "s-3");
  k.result(b, { outcome: "done" });
  assert.deepEqual(sessions(), [["s-3", c]], "b's end keeps c's row");
  k.close();
});

test("a run that fails while another of its lane waits for a retry leaves that one waiting with its own work", () => {
  const [k, one] = uncertainRun();
  const two = k.claimed("e2");
  k.result(two, { outcome: "failed", error: "x" });
  assert.equal(k.run(two).state, "waiting");
  k.result(one, { outcome: "failed", error: "y" });
  assert.deepEqual([k.run(two).state, k.run(two).events.length, k.run(one).state, k.run(one).events.length], ["waiting", 1, "waiting", 1]);
  k.close();
});

test("a timer's event has its lane as subject, none for the rule's only lane", () => {
  const k = new Clock(rules, start);
  const at = new Date(k.now + 60_000).toISOString();
  for (const subject of ["a", null]) {
    k.event(`e-${subject}`, subject ? { subject } : {});
    const run = k.claim(`c-${subject}`).job!.run;
    k.result(run, { outcome: "done", later: [{ key: "k", at }] });
  }
  k.advance(Date.parse(at));
  const timers = k.store.view.where("events", "1").map(({ row }) => row).filter((e) => e.internal === "timer");
  assert.deepEqual(timers.map((e) => e.subject).sort(), ["a", null]);
  k.close();
});
