/**
 * Runs (protocol.md Agent：领活、干活、交回执, 失败时会怎样): how a worker claims a run and keeps it (claim ids,
 * heartbeats, leases, uncertain runs, sessions and groups), how a run ends (receipts, retries, giving up, stops) and what
 * that leaves behind. First on the real kernel and a real SQLite file with the clock in the test's hands, then over
 * real HTTP: the job's exact shape, refusals, long polls.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K, changed, written } from "./clock.js";
import { baseRules, hubEachTest } from "./helpers.js";
import { hashKey, runToken } from "../src/kernel/credentials.js";
import { runLeaseMs } from "../src/kernel/limits.js";
import type { Committed } from "./clock.js";
import type { Job, WorkAnswer } from "../src/protocol/responses.js";

const start = "2026-11-02T08:00:00Z";
const rules = { ...baseRules, rules: [{ ...baseRules.rules[0], parallel: 5 }, baseRules.rules[1]] };
const resumeRules = { ...rules, rules: [{ ...rules.rules[0], resume: true }, rules.rules[1]] };
/** Every deadline the kernel has for the hub's timer, earliest first. */
const deadlines = (k: Clock) => k.dueKeys(Number.MAX_SAFE_INTEGER);
/** GET /v1/work as w1 with claim id `claim`: the whole decision (its facts too). */
const work = (k: Clock, claim: string) => k.commit({ kind: "work", keyHash: K.worker, claim, running: [], capacity: 1 });
const jobOf = (d: Committed) => (d.body as WorkAnswer).job!;
const uncertainCard = (k: Clock, run: number) => k.cards().find((c) => c.title === `Run ${run} (alerts) is uncertain`)!;
const tables = (d: Committed) => [...new Set(d.committed.flatMap((f) => f.changes.map((ch) => ch[0])))].sort();

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
  assert.deepEqual([again.run, again.attempt, again.token], [first.run, 1, runToken(k.env.master, first.run, 1, 2)], "the second claim of the first attempt");
  assert.notEqual(again.token, first.token);
  assert.equal(k.commit({ kind: "started", run: first.run, token: first.token, session: null, link: null }).status, 403, "the first token is replaced");
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
  assert.deepEqual(third.context.decided.map((d) => [d.card, d.title, d.choice]), [[1, "Pick", "y"], [2, "Say", "in my words"]]);
  k.close();
});

test("started: a claimed run starts once; its session and link are kept, and a repeat with nothing new writes nothing", () => {
  const k = new Clock(rules, start);
  k.event("e1");
  const job = k.claim("c1").job!;
  const first = k.started(job.run, "s-1", "https://x.example/1");
  const r = k.run(job.run);
  assert.deepEqual([r.state, r.startedAt, r.session, r.link, first.committed.length], ["running", k.iso(), "s-1", "https://x.example/1", 1]);
  assert.deepEqual(changed(first, "sessions"), [["s-1", { run: job.run }]], "the run holds its session");
  k.now += 1000;
  const again = k.started(job.run, "s-1", "https://x.example/1");
  assert.deepEqual([again.status, again.committed.length, k.run(job.run).startedAt], [200, 0, new Date(k.now - 1000).toISOString()]);
  const moved = k.started(job.run, null, "https://x.example/2");
  assert.deepEqual([moved.committed.length, k.run(job.run).link, k.run(job.run).session], [1, "https://x.example/2", "s-1"]);
  k.close();
});

test("a resumed run that reports a new session gives up the one it was handed; a stopped lane's session is not resumed", () => {
  const k = new Clock(resumeRules, start);
  const one = k.claimed("e1");
  k.started(one, "s-1");
  k.result(one, { outcome: "done" });
  k.event("e2");
  const claim = work(k, "c2");
  const two = jobOf(claim);
  assert.equal(two.session, "s-1", "the lane's last session is resumed");
  assert.deepEqual(changed(claim, "sessions"), [["s-1", { run: two.run }]], "and held by the run that resumes it");
  const moved = k.started(two.run, "s-2");
  assert.deepEqual(changed(moved, "sessions"), [["s-1", null], ["s-2", { run: two.run }]]);
  k.result(two.run, { outcome: "cancelled" });
  k.event("e3");
  assert.equal(k.claim("c3").job!.session, null, "the last run was stopped: a new session");
  k.close();
});

test("a lane's session is resumed only by the agent that had it", () => {
  const k = new Clock(resumeRules, start);
  const one = k.claimed("e1");
  k.started(one, "s-1");
  k.result(one, { outcome: "done" });
  k.loadRules({ ...resumeRules, rules: [{ ...resumeRules.rules[0], to: "bot2" }, rules.rules[1]] });
  k.event("e2");
  const two = k.claim("c2", K.worker2).job!;
  assert.deepEqual([two.run, two.session], [2, null]);
  k.close();
});

test("a group runs at most the largest parallel of its own rules at once; a group with nothing running keeps no row", () => {
  const k = new Clock({ ...baseRules, rules: [{ ...baseRules.rules[0], parallel: 1 }, { ...baseRules.rules[1], parallel: 3 }] }, start);
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "crm", newHash: hashKey("crm") });
  k.event("a1", { subject: "a" });
  k.event("b1", { subject: "b" });
  const a = k.claim("c1").job!.run;
  assert.deepEqual(k.claim("c2"), { job: null, cancel: [] }, "lane b waits: group alerts runs one run at a time");
  for (const s of ["w", "x", "y", "z"]) k.commit({ kind: "event", keyHash: hashKey("crm"), event: { id: `t-${s}`, type: "ticket.x", subject: s } });
  const taken = ["d1", "d2", "d3", "d4"].map((id) => k.claim(id, K.worker2).job?.run ?? null);
  assert.deepEqual(taken, [3, 4, 5, null], "group per-subject runs three at once");
  const end = k.result(a, { outcome: "done" });
  assert.deepEqual(changed(end, "groups"), [["alerts", null]], "group alerts, with nothing running, keeps no row");
  assert.equal(k.claim("c3").job!.run, 2);
  k.close();
});

test("two claims decided in one commit take two different runs", () => {
  const k = new Clock(rules, start);
  k.event("e-a", { subject: "a" });
  k.event("e-b", { subject: "b" });
  const both = k.commitAll([
    { kind: "work", keyHash: K.worker, claim: "x1", running: [], capacity: 1 },
    { kind: "work", keyHash: K.worker, claim: "x2", running: [], capacity: 1 },
  ]);
  assert.deepEqual(both.map((d) => jobOf(d).run), [1, 2]);
  k.close();
});

test("a heartbeat counts once a minute: the worker's time and its runs' leases are kept at 60 s, not before", () => {
  const k = new Clock(rules, start);
  const run = k.claimed("e1");
  const t0 = k.now;
  const seen = () => k.state().workers.find((w) => w.name === "w1")!.seenAt;
  k.now = t0 + 59_999;
  k.heartbeat([run]);
  assert.equal(seen(), new Date(t0).toISOString());
  k.now = t0 + 60_000;
  k.heartbeat([run]);
  assert.equal(seen(), new Date(t0 + 60_000).toISOString());
  // The lease runs from the heartbeat at 60 s: one counted at 59.999 s would have ended it a millisecond sooner.
  k.advance(t0 + 60_000 + runLeaseMs - 1);
  assert.equal(k.run(run).state, "claimed");
  k.advance(t0 + 60_000 + runLeaseMs);
  assert.equal(k.run(run).state, "uncertain");
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

/** Alerts split by subject, two at once: run 1 in lane "a", claimed by w1, never started, unreported for 5 min (uncertain). */
function lostRun(): Clock {
  const k = new Clock({ ...baseRules, rules: [{ ...baseRules.rules[0], parallel: 2 }, baseRules.rules[1]] }, start);
  k.claimed("e1", null, { subject: "a" });
  k.advance(k.now + runLeaseMs);
  return k;
}

test("a worker that reports its uncertain run again gives it back its lane, group and lease, and closes its card", () => {
  // Uncertain: its lane and its place in the group are free, and its card is open.
  const free = lostRun();
  assert.deepEqual([free.run(1).state, uncertainCard(free, 1).state], ["uncertain", "open"]);
  free.event("a2", { subject: "a" });
  free.event("b1", { subject: "b" });
  assert.deepEqual([free.claim("x1").job?.run, free.claim("x2").job?.run], [2, 3], "its lane, and both places of the group");
  free.close();
  // Reported again by its own worker: all of it is its own again.
  const k = lostRun();
  k.event("a2", { subject: "a" }); // queued in its lane; nobody claims it
  k.heartbeat([1], K.worker2);
  assert.equal(k.run(1).state, "uncertain", "another worker's heartbeat does not bring it back");
  k.heartbeat([1]);
  const back = k.now;
  assert.deepEqual([k.run(1).state, uncertainCard(k, 1).state], ["claimed", "closed"]);
  k.event("a3", { subject: "a" });
  assert.deepEqual([k.run(2).state, k.run(2).events], ["queued", 2], "later work joins the queued run");
  assert.equal(k.claim("x1", K.worker, [1]).job, null, "its lane is its own");
  k.event("b1", { subject: "b" });
  assert.equal(k.claim("x2", K.worker, [1]).job?.run, 3, "one place of the group is free");
  k.event("c1", { subject: "c" });
  assert.equal(k.claim("x3", K.worker, [1, 3]).job, null, "the other is its own");
  k.advance(back + runLeaseMs - 1);
  assert.equal(k.run(1).state, "claimed");
  k.advance(back + runLeaseMs);
  assert.equal(k.run(1).state, "uncertain", "its lease ran again from the heartbeat");
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
  assert.deepEqual([back.status, k.run(one).state, uncertainCard(k, one).state], [200, "running", "closed"]);
  k.event("e2");
  assert.equal(k.claim("c2", K.worker, [one]).job, null, "its lane and group are its own again");
  k.close();
});

test("an uncertain run whose lane another run took stays uncertain and outside its group until its result", () => {
  const [k, one] = uncertainRun();
  const two = k.claimed("e2");
  k.now += 60_000;
  k.heartbeat([one, two]);
  const again = k.started(one, "s-1");
  assert.deepEqual([again.status, k.run(one).state, uncertainCard(k, one).state], [200, "uncertain", "open"]);
  k.event("e3");
  assert.equal(k.claim("c3", K.worker, [one, two]).job, null, "the lane and the group are two's");
  k.result(two, { outcome: "done" });
  assert.equal(k.claim("c4", K.worker, [one]).job?.run, 3, "once two ended, nothing holds them: one is in neither");
  const end = k.result(one, { outcome: "done" });
  assert.deepEqual([k.run(one).state, uncertainCard(k, one).state], ["done", "closed"]);
  assert.deepEqual(tables(end), ["cardkeys", "cards", "lanes", "meta", "outbox", "runs", "sessions"], "its group's row is not written");
  k.close();
});

test("a lane's last session is not resumed while another run is using it, in any state that still goes on", () => {
  for (const state of ["claimed", "running", "stopping", "uncertain"]) {
    const k = new Clock(resumeRules, start);
    for (const subject of ["y", "x"]) { // both lanes' last session is s-1
      const run = k.claimed(`${subject}1`, null, { subject });
      k.started(run, "s-1");
      k.result(run, { outcome: "done" });
    }
    k.event("y2", { subject: "y" });
    const claim = work(k, "c-y2");
    const y = jobOf(claim);
    assert.deepEqual([y.session, changed(claim, "sessions")], ["s-1", [["s-1", { run: y.run }]]]);
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
  assert.deepEqual([job.context.events.map((e) => e.id), job.context.timers], [["e2"], [{ key: "check", about: "look again", at }]]);
  k.close();
});

test("a started run its worker reports again after it went uncertain comes back running", () => {
  const [k, one] = uncertainRun();
  k.heartbeat([one]);
  assert.equal(k.run(one).state, "running");
  k.event("e2");
  assert.equal(k.claim("c2", K.worker, [one]).job, null, "its lane and group are its own again");
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
  const again = k.claim("c-e1").job!;
  assert.deepEqual([again.run, again.token], [run, runToken(k.env.master, run, 1, 2)], "its second claim");
  k.close();
});

test("an answer resumes the asking run's session only for the agent that had it", () => {
  /** Run 1 asked on session s-1 (agent bot); the rule now goes to `to`; the owner answers. */
  const answered = (to: string) => {
    const k = new Clock(baseRules, start);
    const run = k.claimed("e1");
    k.started(run, "s-1");
    k.result(run, { outcome: "done", ask: [{ title: "Q", options: ["a", "b"] }] });
    k.loadRules({ ...baseRules, rules: [{ ...baseRules.rules[0], to }, baseRules.rules[1]] });
    k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 0, text: null, by: null, ref: null });
    return k;
  };
  const other = answered("bot2");
  const next = other.claim("c2", K.worker2).job!;
  assert.deepEqual([next.run, next.session], [2, null]);
  other.close();
  const same = answered("bot");
  const resumed = same.claim("c2").job!;
  assert.deepEqual([resumed.run, resumed.session], [2, "s-1"]);
  same.close();
});

test("a job's decided questions leave out notices, even answered in words, and questions closed without an answer", () => {
  const k = new Clock(rules, start);
  const run = k.claimed("e1");
  k.result(run, { outcome: "done", ask: [{ title: "Dropped", options: ["x"] }, { title: "Kept", options: ["x"] }], notice: [{ title: "N" }] });
  k.commit({ kind: "resolve", keyHash: K.owner, card: 1, reason: "not needed" });
  k.commit({ kind: "answer", keyHash: K.owner, card: 2, choice: 0, text: null, by: null, ref: null });
  k.commit({ kind: "answer", keyHash: K.owner, card: 3, choice: null, text: "look at it again", by: null, ref: null });
  const job = k.claim("c2").job!;
  assert.deepEqual(job.context.decided.map((d) => d.card), [2]);
  k.close();
});

test("a claimed run that starts is counted once in its group", () => {
  const k = new Clock(rules, start);
  const run = k.claimed("e1");
  k.started(run, null);
  assert.equal(k.run(run).state, "running");
  // The group runs five at once: four more lanes take the four places left, a fifth waits.
  const taken = ["b", "c", "d", "e", "f"].map((subject) => {
    k.event(`e-${subject}`, { subject });
    return k.claim(`c-${subject}`, K.worker, [run]).job?.run ?? null;
  });
  assert.deepEqual(taken, [2, 3, 4, 5, null]);
  k.close();
});

test("session rows: a run drops only the rows that still name it, when it reports a new session, fails or ends", () => {
  const k = new Clock(rules, start);
  const sessions = (d: Committed) => changed(d, "sessions").map(([key, row]) => [key, row?.run ?? null]);
  const a = k.claimed("e-a", null, { subject: "a" });
  const b = k.claimed("e-b", null, { subject: "b" });
  assert.deepEqual(sessions(k.started(a, "s-1")), [["s-1", a]]);
  assert.deepEqual(sessions(k.started(a, "s-2")), [["s-1", null], ["s-2", a]], "a moved on: s-1 is no longer its");
  assert.deepEqual(sessions(k.started(b, "s-2")), [["s-2", b]], "b reports a's session: the row names b now");
  assert.deepEqual(sessions(k.result(a, { outcome: "failed", error: "x" })), [], "a's retry keeps b's row");
  k.started(b, "s-3");
  k.started(b, "s-2");
  const c = k.claimed("e-c", null, { subject: "c" });
  assert.deepEqual(sessions(k.started(c, "s-3")), [["s-3", c]]);
  assert.deepEqual(sessions(k.result(b, { outcome: "done" })), [["s-2", null]], "b's end keeps c's row");
  k.close();
});

test("a run that fails while another of its lane waits for a retry leaves that one waiting with its own work", () => {
  const [k, one] = uncertainRun();
  const two = k.claimed("e2");
  k.result(two, { outcome: "failed", error: "x" });
  assert.equal(k.run(two).state, "waiting");
  k.result(one, { outcome: "failed", error: "y" });
  assert.deepEqual([k.run(two).state, k.run(two).events, k.run(one).state, k.run(one).events], ["waiting", 1, "waiting", 1]);
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
  const seq = k.seq();
  k.advance(Date.parse(at));
  const timers = written({ facts: k.stream(seq) }, "events").filter((e) => e!.internal === "timer");
  assert.deepEqual(timers.map((e) => e!.subject).sort(), ["a", null]);
  k.close();
});

test("usage counts as reported per kind: any token count for tokens, cost for cost", () => {
  const k = new Clock(baseRules, start);
  for (const [usage, reported] of [
    [{ input: 1 }, { tokens: true, cost: false }], [{ output: 1 }, { tokens: true, cost: false }], [{ cached: 1 }, { tokens: true, cost: false }],
    [{ cost: 0 }, { tokens: false, cost: true }], [{}, { tokens: false, cost: false }],
  ] as const) {
    const before = k.state().spending.today;
    const run = k.claimed(`u${JSON.stringify(usage)}`);
    k.result(run, { outcome: "done", usage });
    // What the owner sees: a run that did not report a kind is counted as missing it.
    const after = k.state().spending.today;
    const counted = { tokens: after.missingTokens === before.missingTokens, cost: after.missingCost === before.missingCost };
    assert.deepEqual([counted, after.rounds - before.rounds, k.run(run).usage], [reported, 1, usage], JSON.stringify(usage));
  }
  k.close();
});

test("ending a run frees its session and clears its deadlines; its lane resumes its session unless it was stopped", () => {
  const k = new Clock(resumeRules, start);
  const run = k.claimed("e1", "s-1");
  assert.deepEqual(deadlines(k), [`lease:${run}`, "offline:w1"]);
  const end = k.result(run, { outcome: "done" });
  assert.deepEqual(changed(end, "sessions"), [["s-1", null]], "its session is free");
  assert.deepEqual(deadlines(k), ["offline:w1"]);
  // A run cancelled before any attempt leaves the lane's last run as it was: the next run resumes s-1.
  k.event("e2");
  const queued = k.state().runs.find((r) => r.state === "queued")!.id;
  const cancel = k.commit({ kind: "cancel", keyHash: K.owner, run: queued });
  assert.deepEqual([cancel.body, written(cancel, "runs").map((r) => r!.stopRequested)], [{ ok: true, changed: true, state: "cancelled" }, [true]]);
  k.event("e3");
  const resumed = k.claim("c3").job!;
  assert.equal(resumed.session, "s-1", "the lane's last run ended on s-1, not stopped");
  k.started(resumed.run, "s-3");
  k.result(resumed.run, { outcome: "cancelled" });
  k.event("e4");
  assert.equal(k.claim("c4").job!.session, null, "the lane's last run was stopped: a new session");
  k.close();
});

test("a failing run's card closes as 'Stopped' when it is stopped and 'No longer needed' when it then succeeds", () => {
  for (const [outcome, result] of [["cancelled", "Stopped"], ["done", "No longer needed"]] as const) {
    const k = new Clock(baseRules, start);
    const run = k.claimed("f1");
    for (let i = 0; i < 3; i++) {
      k.result(run, { outcome: "failed", error: `boom ${i}` });
      k.advance(k.run(run).readyAt);
      assert.equal(k.claim(`retry-${i}`).job!.run, run);
    }
    const card = k.cards().find((c) => c.title === '"alerts" failed 3 times in a row')!;
    assert.deepEqual([card.run, card.state], [run, "open"]);
    assert.deepEqual(deadlines(k).filter((d) => d.startsWith("retry")), []);
    k.result(run, { outcome });
    assert.deepEqual([k.card(card.id).state, k.card(card.id).result], ["closed", result], outcome);
    k.close();
  }
});

test("answers a run carried are 'Done' when it finishes, and stay answered when it is stopped", () => {
  for (const [outcome, state, result] of [["done", "closed", "Done"], ["nothing", "closed", "Done"], ["cancelled", "answered", null]] as const) {
    const k = new Clock(baseRules, start);
    const first = k.claimed("a1");
    k.result(first, { outcome: "done", ask: [{ title: "Q", options: ["a", "b"] }] });
    k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 1, text: null, by: null, ref: null });
    const next = k.claim("c-next").job!.run;
    assert.deepEqual(k.run(next).answers, [1]);
    k.result(next, { outcome });
    const card = k.card(1);
    assert.deepEqual([card.state, card.result], [state, result], outcome);
    k.close();
  }
});

test("a receipt resolves only open cards of its rule's source and group made before its claim, and not its own", () => {
  const rules = {
    ...baseRules,
    rules: [
      baseRules.rules[0],
      { name: "crm-alerts", when: { source: "crm", types: ["ticket.*"] }, to: "bot2", group: "alerts" },
      { name: "shop-other", when: { source: "shop", types: ["other.*"] }, to: "bot2", group: "other" },
    ],
  };
  const k = new Clock(rules, start);
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "crm", newHash: hashKey("crm") });
  const first = k.claimed("r1");
  k.result(first, { outcome: "done", ask: [{ title: "A", options: ["x"] }, { title: "B", options: ["x"] }, { title: "C", options: ["x"] }] });
  k.commit({ kind: "resolve", keyHash: K.owner, card: 3, reason: null });
  for (const [keyHash, id, type] of [[hashKey("crm"), "t1", "ticket.x"], [K.source, "o1", "other.x"]] as const) {
    assert.equal(k.commit({ kind: "event", keyHash, event: { id, type } }).status, 200);
    const run = k.claim(`c-${id}`, K.worker2).job!.run;
    k.result(run, { outcome: "done", ask: [{ title: id, options: ["x"] }] });
  }
  // Card 4: source crm, group alerts; card 5: source shop, group other. Neither is in scope of a rule of shop and alerts.
  assert.deepEqual([4, 5].map((id) => [k.card(id).title, k.card(id).rule]), [["t1", "crm-alerts"], ["o1", "shop-other"]]);
  // Run 4 fails once with a notice, then its retry resolves that notice: a run does not resolve its own cards.
  const run = k.claimed("r2");
  k.result(run, { outcome: "failed", error: "x", notice: [{ title: "mine" }] });
  k.advance(k.run(run).readyAt);
  assert.equal(k.claim("c-retry").job!.run, run);
  k.now += 1000;
  const d = k.result(run, {
    outcome: "done", ask: [{ title: "E", options: ["x"] }],
    resolve: [{ card: 1, reason: "fixed" }, { card: 99 }, { card: 3 }, { card: 4 }, { card: 5 }, { card: 6 }, { card: 7 }],
  });
  assert.deepEqual(d.body, { rejected: [
    { card: 99, reason: "没有这张卡片：99" }, { card: 3, reason: "这张卡片已经结案" },
    { card: 4, reason: "不在本轮核对范围" }, { card: 5, reason: "不在本轮核对范围" },
    { card: 6, reason: "不在本轮核对范围" }, { card: 7, reason: "不在本轮核对范围" },
  ] });
  const c1 = k.card(1);
  assert.deepEqual([c1.state, c1.result], ["closed", "No longer needed: fixed"]);
  // Another run's open card of the same rule, made before this claim: in scope.
  const third = k.claimed("r3");
  const d2 = k.result(third, { outcome: "done", resolve: [{ card: 2 }] });
  assert.deepEqual(d2.body, { rejected: [] });
  assert.equal(k.card(2).state, "closed");
  k.close();
});

test("a run stopped while it waits for its retry leaves no retry deadline behind", () => {
  const k = new Clock(baseRules, start);
  const run = k.claimed("w1");
  k.result(run, { outcome: "failed", error: "x" });
  assert.deepEqual([k.run(run).state, deadlines(k).includes(`retry:${run}`)], ["waiting", true]);
  k.commit({ kind: "cancel", keyHash: K.owner, run });
  assert.deepEqual([k.run(run).state, deadlines(k).includes(`retry:${run}`)], ["cancelled", false]);
  k.close();
});

test("a card made after a run was claimed is outside its receipt's scope; one made in the same millisecond is inside", () => {
  const rules = { ...baseRules, rules: [{ ...baseRules.rules[0], parallel: 2 }, baseRules.rules[1]] };
  const k = new Clock(rules, start);
  k.event("b1", { subject: "b" });
  k.result(k.claim("c-b1").job!.run, { outcome: "done", ask: [{ title: "same millisecond", options: ["x"] }] });
  k.event("a1", { subject: "a" });
  const a = k.claim("c-a1").job!.run;
  k.now += 1;
  k.event("b2", { subject: "b" });
  k.result(k.claim("c-b2").job!.run, { outcome: "done", ask: [{ title: "later", options: ["x"] }] });
  const d = k.result(a, { outcome: "done", resolve: [{ card: 1 }, { card: 2 }] });
  assert.deepEqual(d.body, { rejected: [{ card: 2, reason: "不在本轮核对范围" }] });
  assert.deepEqual([1, 2].map((id) => k.card(id).state), ["closed", "open"]);
  k.close();
});

test("a failed attempt waits on its session, and work that came meanwhile joins it (manual, deepest hops)", () => {
  const k = new Clock(baseRules, start);
  const run = k.claimed("m1", "s-1");
  k.event("m2", { hops: 3 });
  const manual = k.commit({ kind: "runNow", keyHash: K.owner, rule: "alerts", subject: null, reason: null });
  assert.equal(manual.status, 200);
  const newer = k.state().runs.find((r) => r.state === "queued")!.id;
  assert.deepEqual(written(manual, "runs").map((r) => [r!.id, r!.manual, r!.hops]), [[newer, true, 3]]);
  assert.deepEqual([k.run(run).manual, k.run(newer).manual], [false, true]);
  const failed = k.result(run, { outcome: "failed", summary: "only a summary" });
  assert.deepEqual(written(failed, "runs").filter((r) => r!.id === run).map((r) => [r!.manual, r!.hops, r!.events.length]), [[true, 3, 3]], "it took the newer run's work");
  assert.deepEqual(changed(failed, "sessions"), [["s-1", null]], "no run holds s-1 while it waits");
  const r = k.run(run);
  assert.deepEqual([r.state, r.error, r.manual, r.events], ["waiting", "only a summary", true, 3]);
  assert.deepEqual(deadlines(k), [`retry:${run}`, "offline:w1"], "the lease deadline went with the attempt");
  assert.deepEqual([k.run(newer).state, k.run(newer).outcome, k.run(newer).mergedInto], ["cancelled", "cancelled", run]);
  k.now = Date.parse(r.readyAt);
  const [due] = k.tick();
  assert.deepEqual([k.run(run).state, due!.wake?.workers], ["queued", true], "a retry that comes due wakes the workers");
  k.event("m3");
  assert.equal(k.run(run).events, 4, "it is the lane's queued run: new work joins it");
  assert.equal(k.claim("c-retry").job!.session, "s-1", "the retry continues the failed attempt's session");
  k.close();
});

test("the tenth failure in a row gives up with a notice; a failure with neither error nor summary reads 'failed'", () => {
  const k = new Clock(baseRules, start);
  const run = k.claimed("g1");
  for (let i = 1; i <= 10; i++) {
    if (i > 1) {
      k.advance(k.run(run).readyAt);
      assert.equal(k.claim(`g-${i}`).job!.run, run);
    }
    k.result(run, { outcome: "failed" });
  }
  const r = k.run(run);
  assert.deepEqual([r.state, r.error, r.failures], ["cancelled", "failed", 10]);
  const cards = k.cards();
  const gaveUp = cards.find((c) => c.title === '"alerts" failed 10 times in a row; no more retries')!;
  assert.deepEqual([gaveUp.text, gaveUp.run, gaveUp.state], [`Run ${run} is now cancelled: failed`, run, "open"]);
  const failing = cards.find((c) => c.title === '"alerts" failed 3 times in a row')!;
  assert.deepEqual([failing.text.split("\n")[0], failing.run], [`Run ${run}: failed`, run]);
  k.close();
});

test("a stopped run that reports failed ends cancelled; notices of a failed attempt follow the rule's tell", () => {
  const k = new Clock(baseRules, start);
  const run = k.claimed("s1");
  const stop = k.commit({ kind: "cancel", keyHash: K.owner, run });
  assert.deepEqual([stop.body, stop.wake?.workers], [{ ok: true, changed: true, state: "stopping" }, true]);
  assert.deepEqual(k.heartbeat([run]).body, { job: null, cancel: [run] }, "its worker is told");
  assert.deepEqual(k.commit({ kind: "cancel", keyHash: K.owner, run }).body, { ok: true, changed: false, state: "stopping" }, "asked twice");
  k.result(run, { outcome: "failed", error: "killed" });
  assert.deepEqual([k.run(run).state, k.run(run).failures], ["cancelled", 0]);
  const gaveUp = k.claimed("s3");
  k.result(gaveUp, { outcome: "cancelled", ask: [{ title: "never asked", options: ["a"] }] });
  assert.deepEqual([k.run(gaveUp).state, k.cards()], ["cancelled", []], "a cancelled receipt applies nothing");
  const queued = k.claimed("s2");
  k.result(queued, { outcome: "failed", error: "x", notice: [{ title: "heads up" }] });
  assert.deepEqual(k.cards().map((c) => c.title), ["heads up"]);
  k.close();
  const never = new Clock({ ...baseRules, rules: [{ ...baseRules.rules[0], tell: "never" }] }, start);
  const r = never.claimed("n1");
  never.result(r, { outcome: "failed", error: "x", notice: [{ title: "heads up" }] });
  assert.deepEqual(never.cards(), []);
  never.close();
});

test("tell always: a done run with no card of its own gets one 'is done' notice with its summary", () => {
  const k = new Clock({ ...baseRules, rules: [{ ...baseRules.rules[0], tell: "always" }] }, start);
  k.result(k.claimed("t1"), { outcome: "done", summary: "all fixed" });
  k.result(k.claimed("t2"), { outcome: "done", ask: [{ title: "Q", options: ["a"] }] });
  k.result(k.claimed("t3"), { outcome: "nothing", summary: "nothing to do" });
  // Asking again what is still open makes no card, so the run gets its "is done" notice.
  k.result(k.claimed("t4"), { outcome: "done", summary: "asked again", ask: [{ title: "Q", options: ["a"] }] });
  k.result(k.claimed("t5"), { outcome: "done" });
  const cards = k.cards().map((c) => [c.title, c.text, c.fyi]);
  assert.deepEqual(cards, [
    ['"alerts" is done', "all fixed", true], ["Q", "", false], ['"alerts" is done', "asked again", true], ['"alerts" is done', "", true],
  ]);
  k.close();
});

test("a later timer can be cancelled; when it comes due its lane runs again on the session of the run that set it", () => {
  const k = new Clock(baseRules, start);
  const at = new Date(Date.parse(start) + 3_600_000).toISOString();
  const run = k.claimed("l1", "s-9");
  k.result(run, { outcome: "done", session: "s-9", later: [{ key: "check", at, about: "look again" }, { key: "gone", at }] });
  const second = k.claimed("l2");
  k.result(second, { outcome: "done", later: [{ key: "gone", cancel: true }] });
  assert.deepEqual(k.state().timers.map((t) => [t.rule, t.key, t.about, t.at]), [["alerts", "check", "look again", at]]);
  assert.deepEqual(deadlines(k).filter((d) => d.startsWith("later")).length, 1);
  const seq = k.seq();
  k.advance(Date.parse(at));
  const [ev, ...more] = written({ facts: k.stream(seq) }, "events");
  assert.deepEqual([ev!.sid, ev!.type, ev!.routed, ev!.summary, more], [`later::check:${at}`, "timer.due", ["alerts"], "look again", []]);
  const job = k.claim("c3").job!;
  assert.deepEqual([job.session, job.context.timers, job.context.events], ["s-9", [{ key: "check", about: "look again", at }], []]);
  // The run names the timer's event as what started it (mutation run of run-end.ts: an empty list passed).
  assert.deepEqual(written({ facts: k.stream(seq) }, "runs").map((r) => (r as { events: number[] }).events).at(-1), [ev!.id]);
  k.close();
});

test("a run not reported for five minutes becomes uncertain with a notice naming its worker", () => {
  const k = new Clock(baseRules, start);
  const run = k.claimed("x1");
  k.advance(k.now + 5 * 60_000);
  const [card] = k.cards();
  assert.deepEqual([k.run(run).state, card!.title, card!.text, card!.run], [
    "uncertain", `Run ${run} (alerts) is uncertain`,
    "Worker w1 has not reported this run for 5 minutes; its group is released. A later result is still accepted.", run,
  ]);
  assert.deepEqual(written({ facts: k.stream() }, "cards").map((c) => [c!.id, c!.system, c!.key]), [[card!.id, "uncertain", `uncertain:${run}`]], "as the stream shows it");
  k.close();
});

test("when a rule goes, its queued runs are cancelled with a notice; other rules' runs stay", () => {
  const k = new Clock(baseRules, start);
  k.event("o1");
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "crm", newHash: hashKey("crm") });
  k.commit({ kind: "event", keyHash: hashKey("crm"), event: { id: "t1", type: "ticket.x" } });
  const seq = k.seq();
  k.loadRules({ ...baseRules, rules: [baseRules.rules[1]] });
  const runs = k.state().runs.map((r) => [r.id, r.rule, r.state]).sort();
  assert.deepEqual(runs, [[1, "alerts", "cancelled"], [2, "per-subject", "queued"]]);
  const card = k.card(1);
  assert.deepEqual([card.title, card.run, card.rule, card.lane], ['Rule "alerts" is gone; run 1 is cancelled', 1, null, ""]);
  assert.deepEqual(written({ facts: k.stream(seq) }, "cards").map((c) => c!.system), ["ruleGone"]);
  k.close();
});

test("a carried answer the owner already closed stays as the owner left it; a failed run of a rule that went ends cancelled", () => {
  const k = new Clock(baseRules, start);
  k.result(k.claimed("a1"), { outcome: "done", ask: [{ title: "Q", options: ["a", "b"] }] });
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 0, text: null, by: null, ref: null });
  const next = k.claim("c-next").job!.run;
  k.commit({ kind: "resolve", keyHash: K.owner, card: 1, reason: "handled by hand" });
  k.result(next, { outcome: "done" });
  assert.equal(k.card(1).result, "No longer needed: handled by hand");
  const running = k.claimed("a2");
  k.loadRules({ ...baseRules, rules: [baseRules.rules[1]] });
  k.result(running, { outcome: "failed", error: "x" });
  assert.deepEqual([k.run(running).state, k.run(running).failures], ["cancelled", 0]);
  k.close();
});

describe("over HTTP", () => {
  const f = hubEachTest();

  const event = (id: string, extra: Record<string, unknown> = {}) => f.call("POST", "/v1/events", f.keys.source, { id, type: "alert.cpu", ...extra });
  const work = (claim: string, q = "", key = f.keys.worker) => f.call("GET", `/v1/work?claim=${claim}${q}`, key);

  test("a worker claims a run; the job has exactly the protocol's shape", async () => {
    await event("e1", { subject: "#1", summary: "hot", detail: "d", link: "https://x.example/1" });
    const r = await work("c1");
    assert.equal(r.status, 200);
    const job: Job = r.body.job;
    assert.equal(typeof job.token, "string");
    assert.deepEqual({ ...job, token: "T", context: { ...job.context, events: job.context.events.map((e) => ({ ...e, receivedAt: "R" })) } }, {
      run: 1, token: "T", attempt: 1,
      rule: { name: "alerts", cwd: "/tmp", skill: null, prompt: "handle it" },
      agent: { id: "bot", name: "bot", use: "command", model: null, effort: null, access: "edit", command: ["echo", "hi"], program: null, sandbox: true, env: [] },
      session: null,
      askFirst: ["delete data"],
      // No `tools` in the rule: none offered; the rule is not `parallel`, so its one lane is "".
      tools: [],
      sessionKey: "alerts:",
      context: {
        events: [{ id: "e1", source: "shop", sourceName: "Shop", type: "alert.cpu", subject: "#1", summary: "hot", detail: "d", link: "https://x.example/1", receivedAt: "R" }],
        answers: [], timers: [], waiting: [], open: [], decided: [],
      },
    });
    assert.deepEqual(r.body.cancel, []);
  });

  test("the same claim id gives the same job with a new token; the old token stops working", async () => {
    await event("e1");
    const a = await work("c1");
    const b = await work("c1");
    assert.equal(b.body.job.run, a.body.job.run);
    assert.equal(b.body.job.attempt, 1);
    assert.notEqual(b.body.job.token, a.body.job.token);
    const old = await f.call("POST", `/v1/runs/1/started`, a.body.job.token, {});
    assert.equal(old.status, 403);
    assert.match(old.body.error, /token/);
    const ok = await f.call("POST", `/v1/runs/1/started`, b.body.job.token, { session: "s-1" });
    assert.equal(ok.status, 200);
    const another = await work("c2");
    assert.equal(another.body.job, null, "the group runs one at a time");
  });

  test("a worker only gets runs of agents on it; other workers get nothing", async () => {
    await event("e1");
    const other = await work("x", "", f.keys.worker2);
    assert.equal(other.body.job, null);
    const mine = await work("y");
    assert.equal(mine.body.job.run, 1);
  });

  test("the queue is read a page at a time: a worker's run behind 70 runs of another worker is claimed, oldest first", async () => {
    // 70 queued tickets for w2 (more than two pages of 32), then two alerts for w1.
    for (let i = 0; i < 70; i++) assert.equal((await f.call("POST", "/v1/events", f.keys.source2, { id: `t${i}`, type: "ticket.new", subject: `#${i}` })).status, 200);
    await event("e1");
    const first = await work("c1");
    assert.equal(first.body.job.run, 71);
    assert.equal(first.body.job.context.events[0].id, "e1");
    const w2 = await work("x1", "", f.keys.worker2);
    assert.equal(w2.body.job.run, 1);
    assert.equal((await work("c2")).body.job, null, "the alerts' group runs one at a time");
  });

  test("a claim id is required, at most 100 characters, and without control characters; each refusal says which", async () => {
    const errors = [];
    for (const claim of ["", "x".repeat(101), "a%01b", "a%7Fb", "a%0Ab"]) {
      const r = await work(claim);
      errors.push([r.status, r.body.error]);
    }
    const long = "claim: required, at most 100 characters";
    assert.deepEqual(errors, [[400, long], [400, long], [400, "claim: no control characters"], [400, "claim: no control characters"], [400, "claim: no control characters"]]);
    assert.equal((await work("x".repeat(100))).status, 200);
  });

  test("a result is applied once; the same token and body replay the same answer; another body is 409", async () => {
    await event("e1");
    const { job } = (await work("c1")).body;
    const result = {
      outcome: "done", summary: "asked", session: "s-9", usage: { input: 10, output: 5, cost: 0.01 },
      ask: [{ title: "Restart?", text: "the shop is slow", options: ["yes", "no"], recommend: 0, about: "note", key: "restart" }],
      notice: [{ title: "FYI", text: "look", fyi: true }],
      resolve: [{ card: 999, reason: "gone" }],
      later: [{ key: "check", at: "2030-01-01T09:00:00+08:00", about: "check again" }],
      events: [{ id: "f1", type: "followup.created", subject: "#1" }, { id: "f2", type: "other.type" }],
    };
    const seq = f.seq();
    const r = await f.call("POST", "/v1/runs/1/result", job.token, result);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      rejected: [
        { card: 999, reason: "没有这张卡片：999" },
        { event: "f2", reason: "type other.type 不在 emits.types 里" },
      ],
    });
    assert.equal(f.seq(), seq + 1, "one transaction, one fact");
    const again = await f.call("POST", "/v1/runs/1/result", job.token, { ...result });
    assert.deepEqual(again, r);
    assert.equal(f.seq(), seq + 1, "a replay writes nothing");
    const other = await f.call("POST", "/v1/runs/1/result", job.token, { ...result, summary: "changed" });
    assert.equal(other.status, 409);
    const state = await f.state();
    const run = state.runs.find((x) => x.id === 1)!;
    assert.equal(run.state, "done");
    assert.equal(run.session, "s-9");
    assert.deepEqual(run.usage, { input: 10, output: 5, cost: 0.01 });
    assert.deepEqual(state.cards.map((c) => [c.kind, c.title, c.lane, c.about]), [["ask", "Restart?", "", "note"]]);
    assert.deepEqual(state.recentCards.map((c) => [c.kind, c.fyi, c.state, c.title]), [["notice", true, "closed", "FYI"]]);
    assert.deepEqual(state.timers.map((x) => [x.rule, x.key, x.at]), [["alerts", "check", "2030-01-01T01:00:00.000Z"]]);
    // the receipt event f1 was recorded from source shop (emits), one hop deeper, and is not routed (followup.*)
    assert.equal(state.unrouted[0].eventId, "receipt:f1", "a run's event id apart from the source's own");
    assert.equal(state.unrouted[0].source, "shop");
    assert.equal(state.spending.today.rounds, 1);
    assert.equal(state.spending.today.tokens, 15);
  });

  test("an ask with the same key is not sent again while open", async () => {
    await event("e1");
    let job = (await work("c1")).body.job;
    const ask = { title: "Q?", options: ["a", "b"], key: "k" };
    await f.call("POST", "/v1/runs/1/result", job.token, { outcome: "done", ask: [ask] });
    await event("e2");
    job = (await work("c2")).body.job;
    assert.equal(job.context.open.length, 1, "the open card is in the next run's context");
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [ask] });
    const state = await f.state();
    assert.equal(state.cards.length, 1);
  });

  test("capacity 0 only reports in: no job, and a repeated heartbeat writes nothing", async () => {
    await event("e1");
    const first = await work("h1", "&capacity=0");
    assert.deepEqual(first.body, { job: null, cancel: [] });
    const seq = f.seq();
    const second = await work("h2", "&capacity=0");
    assert.deepEqual(second.body, { job: null, cancel: [] });
    assert.equal(f.seq(), seq, "a blocked heartbeat within a minute writes no fact");
    const state = await f.state();
    assert.equal(state.workers[0]!.name, "w1");
    assert.equal(state.workers[0]!.online, true);
  });

  test("a held long poll gets the job as soon as an event arrives", async () => {
    const poll = work("lp", "&wait=20");
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    await event("e-late");
    const r = await poll;
    assert.equal(r.body.job.run, 1);
    assert.ok(Date.now() - started < 5000);
  });

  test("a failed result waits 5 minutes for a retry and keeps the session", async () => {
    await event("e1");
    const job = (await work("c1")).body.job;
    await f.call("POST", "/v1/runs/1/started", job.token, { session: "sess-a" });
    const r = await f.call("POST", "/v1/runs/1/result", job.token, { outcome: "failed", error: "network down", notice: [{ title: "n" }], ask: [{ title: "ignored", options: ["x"] }] });
    assert.equal(r.status, 200);
    const state = await f.state();
    const run = state.runs[0]!;
    assert.equal(run.state, "waiting");
    assert.equal(run.failures, 1);
    assert.equal(Date.parse(run.readyAt) - Date.parse((run.endedAt ?? run.claimedAt)!) >= 5 * 60_000 - 5_000, true);
    assert.deepEqual(state.cards.map((c) => c.title), ["n"], "failed keeps only notices");
    assert.equal((await work("c2")).body.job, null, "not before the retry time");
    await event("e2");
    const st2 = await f.state();
    assert.equal(st2.runs.length, 1, "an event for the lane joins the waiting run");
  });

  test("the owner stops a claimed run: the worker is told, reports cancelled, the run ends cancelled", async () => {
    await event("e1");
    const job = (await work("c1")).body.job;
    const stop = await f.call("POST", "/v1/runs/1/cancel", f.keys.owner, {});
    assert.deepEqual(stop.body, { ok: true, changed: true, state: "stopping" });
    const w = await work("c2", "&running=1&capacity=0");
    assert.deepEqual(w.body.cancel, [1]);
    await f.call("POST", "/v1/runs/1/result", job.token, { outcome: "cancelled" });
    const state = await f.state();
    assert.equal(state.runs[0]!.state, "cancelled");
    const again = await f.call("POST", "/v1/runs/1/cancel", f.keys.owner, {});
    assert.equal(again.status, 409);
  });

  test("stopping a queued run ends it at once", async () => {
    await event("e1");
    const r = await f.call("POST", "/v1/runs/1/cancel", f.keys.owner, {});
    assert.deepEqual(r.body, { ok: true, changed: true, state: "cancelled" });
    assert.equal((await work("c1")).body.job, null);
  });

  test("parallel rules split lanes by subject; the same subject merges into the queued run", async () => {
    const crm = (id: string, subject: string) => f.call("POST", "/v1/events", f.keys.source2, { id, type: "ticket.new", subject });
    await crm("1", "#a");
    await crm("2", "#b");
    await crm("3", "#a");
    const a: Job = (await work("p1", "", f.keys.worker2)).body.job;
    const b: Job = (await work("p2", "", f.keys.worker2)).body.job;
    assert.deepEqual(a.context.events.map((e) => e.id), ["1", "3"]);
    assert.deepEqual(b.context.events.map((e) => e.id), ["2"]);
    assert.equal((await work("p3", "", f.keys.worker2)).body.job, null, "parallel 2 means at most 2 at once");
    await crm("4", "#a");
    assert.equal((await work("p4", "", f.keys.worker2)).body.job, null, "one run at a time per lane");
  });

  test("bad work and result requests are refused with the field named, and leave no fact", async () => {
    await event("e1");
    const job = (await work("c1")).body.job;
    const seq = f.seq();
    const bad: [string, string, string | null, unknown, number, RegExp][] = [
      ["GET", "/v1/work", f.keys.worker, undefined, 400, /^claim: required/],
      ["GET", "/v1/work?claim=x&wait=abc", f.keys.worker, undefined, 400, /wait/],
      ["GET", "/v1/work?claim=x&running=1,a", f.keys.worker, undefined, 400, /running/],
      ["GET", "/v1/work?claim=x&capacity=-1", f.keys.worker, undefined, 400, /capacity/],
      ["POST", "/v1/runs/1/result", job.token, { outcome: "maybe" }, 400, /^outcome: must be one of \["done","nothing","failed","cancelled"\]$/],
      ["POST", "/v1/runs/1/started", job.token, { link: "javascript:alert(1)" }, 400, /^link: wrong format/],
      ["POST", "/v1/runs/1/started", job.token, { link: "https://ä.example" }, 400, /^link: wrong format/],
      ["POST", "/v1/runs/1/started", job.token, { session: "a\u0000b" }, 400, /^session: wrong format/],
      ["POST", "/v1/runs/1/result", job.token, { outcome: "done", usage: { input: -1 } }, 400, /^usage.input: out of range$/],
      ["POST", "/v1/runs/1/result", job.token, { outcome: "done", usage: [] }, 400, /^usage: must be object$/],
      ["POST", "/v1/runs/1/result", job.token, { outcome: "done", later: [{ key: "k", at: "2026-02-30T09:00:00Z" }] }, 400, /^later\[0\]\.at: /],
      ["POST", "/v1/runs/1/result", job.token, { outcome: "done", later: [{ key: "k", at: "2026-03-01T09:00:00" }] }, 400, /^later\[0\]\.at: /],
      ["POST", "/v1/runs/1/result", job.token, { outcome: "done", ask: [{ title: "t", options: ["a"], recommend: 1 }] }, 400, /^ask\[0\]\.recommend: out of range$/],
      ["POST", "/v1/runs/1/result", job.token, { outcome: "done", ask: [{ title: "t", options: [] }] }, 400, /^ask\[0\]\.options: at least 1 items$/],
      ["POST", "/v1/runs/1/result", job.token, { outcome: "done", notice: [{ title: "t", fyi: "yes" }] }, 400, /^notice\[0\]\.fyi: must be boolean$/],
      ["POST", "/v1/runs/1/result", "wrong-token", { outcome: "done" }, 403, /token/],
      ["POST", "/v1/runs/77/result", job.token, { outcome: "done" }, 404, /^no such run: 77$/],
      ["POST", "/v1/runs/abc/result", job.token, { outcome: "done" }, 404, /^no such run: abc$/],
      ["POST", "/v1/runs/1/started", "wrong-token", {}, 403, /token/],
      ["POST", "/v1/runs/1/cancel", f.keys.worker, {}, 403, /owner/],
      ["POST", "/v1/runs/1/cancel", f.keys.owner, { force: true }, 400, /^force: unknown field$/],
    ];
    for (const [method, path, key, body, status, error] of bad) {
      const r = await f.call(method, path, key, body);
      assert.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}`);
      assert.match(r.body.error, error, `${method} ${path} ${JSON.stringify(body)}`);
    }
    const infinite = await f.call("POST", "/v1/runs/1/result", job.token, undefined, '{"outcome":"done","usage":{"cost":1e400}}');
    assert.equal(infinite.status, 400, "1e400 parses to Infinity: usage must be finite");
    assert.equal(infinite.body.error, "usage.cost: out of range");
    const link = await f.call("POST", "/v1/runs/1/started", job.token, { session: "s", link: "claude://resume/s" });
    assert.equal(link.status, 200, "a session link may use the agent's own scheme");
    assert.equal(f.seq(), seq + 1, "only the accepted start wrote a fact");
  });

  test("a long poll decided in the same commit group as the event it waits for still gets the job (no lost wake)", async () => {
    const hub = f.running.hub;
    // Both inputs go into one group commit: the poll is decided first (nothing yet), the event second.
    const poll = hub.poll({ kind: "work", keyHash: hashKey(f.keys.worker), claim: "same-group", running: [], capacity: 1 }, 20_000);
    void hub.submit({ kind: "event", keyHash: hashKey(f.keys.source), event: { id: "g1", type: "alert.x" } });
    const t0 = Date.now();
    const d = await poll;
    assert.equal((d.body as WorkAnswer).job?.run, 1);
    assert.ok(Date.now() - t0 < 10_000, "answered at once, not after the 20 s wait");
  });

  test("a poll still in its first decisions when a newer poll of the same claim arrives decides no more (CI: a run stayed claimed, its live token replaced, its result refused)", async () => {
    const hub = f.running.hub;
    const input = { kind: "work" as const, keyHash: hashKey(f.keys.worker), claim: "c-race", running: [], capacity: 1 };
    // In one group, in this order: the stale poll's decision (nothing yet), the event, the live poll's (the job, its
    // token). The event's wake came after the stale decision began, so the stale poll decides once more — claiming the
    // same run again with a new token, which the worker never sees — unless the newer poll of its claim stops it.
    const stale = hub.poll(input, 20_000);
    void hub.submit({ kind: "event", keyHash: hashKey(f.keys.source), event: { id: "race1", type: "alert.x" } });
    const live = hub.poll(input, 20_000);
    const [s, l] = await Promise.all([stale, live]);
    assert.equal((l.body as WorkAnswer).job?.run, 1);
    assert.equal((s.body as WorkAnswer).job, null, "the stale poll hands out nothing");
    const started = await f.call("POST", "/v1/runs/1/started", (l.body as WorkAnswer).job!.token, {});
    assert.equal(started.status, 200, "the live poll's token is the valid one");
  });

  test("a newer poll with the same claim id supersedes a held one, which then never claims (its token would replace the live one)", async () => {
    // A worker that aborted its poll asks again with the same claim id at once; the hub may not have seen the first
    // connection close yet. Were both held, the stale one could claim after the live one and invalidate its token.
    const stale = work("c-same", "&wait=20");
    await new Promise((r) => setTimeout(r, 200));
    const live = work("c-same", "&wait=20");
    const first = await Promise.race([stale, new Promise((r) => setTimeout(() => r("still held"), 3000))]);
    assert.deepEqual(first, { status: 200, body: { job: null, cancel: [] } }, "the older poll is answered, with no job");
    await new Promise((r) => setTimeout(r, 200));
    await event("e1");
    const got = await live;
    assert.equal(got.body.job.run, 1);
    const started = await f.call("POST", "/v1/runs/1/started", got.body.job.token, {});
    assert.equal(started.status, 200, "the live poll's token is the valid one");
  });
});
