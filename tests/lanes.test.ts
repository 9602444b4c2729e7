/**
 * Events into lanes into runs (protocol.md 规则, 来源, 事项) to the letter: which rules take an event, what a new
 * event and a new run record, ids of internal events, and what joining a queued or retry-waiting run changes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K, written } from "./clock.js";
import { baseRules } from "./helpers.js";
import { hashKey } from "../src/kernel/credentials.js";
import { rulesOf } from "../src/kernel/lanes.js";
import { foldCase, intentHit } from "../src/kernel/intents.js";

const rules = { ...baseRules, rules: [...baseRules.rules, { name: "hourly", when: { cron: "0 * * * *" }, to: "bot" }] };
const crm = hashKey("crm-key");

function clock(): Clock {
  const k = new Clock(rules, "2026-11-02T08:10:00Z");
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "crm", newHash: crm });
  // "schedule" gets no key any more (see the reserved names below); a home may still hold one made before that.
  k.appendRaw("keyNew", [["keys", hashKey("sched"), { kind: "source", name: "schedule", at: k.now }]]);
  return k;
}

test("a rule takes only events of its own source and types; a cron rule takes none; routed and unrouted are counted", () => {
  const k = clock();
  const other = k.commit({ kind: "event", keyHash: crm, event: { id: "x1", type: "alert.cpu" } });
  assert.deepEqual(other.body, { event: 1, duplicate: false, routed: [], paused: [] }, "crm's alert is not for the shop rule");
  const sched = k.commit({ kind: "event", keyHash: hashKey("sched"), event: { id: "x2", type: "schedule.cron" } });
  assert.deepEqual(sched.body, { event: 2, duplicate: false, routed: [], paused: [] }, "a cron rule takes no posted event, even from a source named schedule");
  const taken = k.event("x3");
  assert.deepEqual(taken.body, { event: 3, duplicate: false, routed: ["alerts"], paused: [] });
  const s = k.state();
  assert.deepEqual(s.unrouted.map((e) => [e.eventId, e.routed]), [["x2", []], ["x1", []]]);
  assert.deepEqual([s.totals.events, s.totals.unrouted, s.totals.runs], [3, 2, 1]);
  assert.deepEqual(k.claim("c1").job!.context.events.map((e) => e.id), ["x3"], "the routed event is not unrouted: it is the run's");
  k.close();
});

test("routing reads the rules of the event's source from an index built once per rules version, in the order of the file", () => {
  const k = clock();
  const loaded = k.rules;
  const shop = rulesOf(loaded, "shop");
  assert.deepEqual(shop.map((r) => r.name), ["alerts"]);
  assert.equal(rulesOf(loaded, "shop"), shop, "the same list, not built again");
  assert.deepEqual(rulesOf(loaded, "schedule").map((r) => r.name), ["hourly"]);
  assert.deepEqual(rulesOf(loaded, "nobody"), []);
  const two = { ...loaded, rules: [loaded.rules[1]!, { ...loaded.rules[0]!, name: "b" }, loaded.rules[0]!] };
  assert.deepEqual(rulesOf(two, "shop").map((r) => r.name), ["b", "alerts"], "another rules object has its own index");
  k.close();
});

test("the sources the hub uses for its own events, schedule and elsewhere, get no key; other kinds may use the names", () => {
  const k = clock();
  for (const name of ["schedule", "elsewhere"]) {
    const r = k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name, newHash: hashKey(`new-${name}`) });
    assert.deepEqual([r.status, r.body, r.facts], [400, { error: `"${name}" is a source name the hub uses for its own events (schedule: cron rules; elsewhere: elsewhere tasks); it gets no key` }, []]);
  }
  assert.equal(k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "worker", name: "schedule", newHash: hashKey("w-schedule") }).status, 200);
  assert.equal(k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "channel", name: "elsewhere", newHash: hashKey("c-elsewhere") }).status, 200);
  assert.deepEqual(k.commit({ kind: "keyRemove", keyHash: null, local: true, keyKind: "source", name: "schedule" }).body, { ok: true, changed: true }, "an old one can be removed");
  k.close();
});

test("a new run is not manual; a parallel rule's event without subject goes to the lane \"\"", () => {
  const k = clock();
  k.commit({ kind: "event", keyHash: crm, event: { id: "t1", type: "ticket.new" } });
  k.event("a1");
  const runs = k.state().runs.reverse();
  assert.deepEqual(runs.map((r) => [r.rule, r.lane, r.manual, r.state, r.attempt]), [["per-subject", "", false, "queued", 0], ["alerts", "", false, "queued", 0]]);
  k.close();
});

test("a receipt's events are told apart within one result; the same id twice is recorded once", () => {
  const k = clock();
  k.event("a1");
  const job = k.claim("c1").job!;
  const r = k.result(job.run, { outcome: "done", events: [{ id: "f1", type: "followup.a" }, { id: "f2", type: "followup.b" }, { id: "f1", type: "followup.c" }] });
  assert.deepEqual(r.body, { rejected: [] });
  assert.deepEqual(written(r, "events").map((e) => [e!.sid, e!.type, e!.hops, e!.internal]), [["receipt:f1", "followup.a", 1, "receipt"], ["receipt:f2", "followup.b", 1, "receipt"]]);
  assert.deepEqual(k.state().unrouted.map((e) => [e.eventId, e.type]), [["receipt:f2", "followup.b"], ["receipt:f1", "followup.a"]]);
  k.close();
});

test("issue 26 r27 F27a-3 (reported case: a run emitted the id of the source's next real event, which then came back a duplicate and was never taken): a run's events have ids of their own in the source", () => {
  const k = new Clock({ ...baseRules, rules: [{ ...baseRules.rules[0], emits: { source: "shop", types: ["followup.*"] } }] }, "2026-11-02T08:00:00Z");
  k.event("a1");
  const job = k.claim("c1").job!;
  assert.deepEqual(k.result(job.run, { outcome: "done", events: [{ id: "alert-777", type: "followup.note" }] }).body, { rejected: [] });
  // The source's own event with that id, posted after: recorded and routed, not a duplicate.
  assert.deepEqual(k.event("alert-777").body, { event: 3, duplicate: false, routed: ["alerts"], paused: [] });
  // The run's event sent again by another run is still the same one: nothing new is written.
  k.event("a2");
  const again = k.claim("c2").job!;
  assert.deepEqual(written(k.result(again.run, { outcome: "done", events: [{ id: "alert-777", type: "followup.note" }] }), "events"), []);
  k.close();
});

test("an answer's event gets the next free id when a source already used it, and is not unrouted", () => {
  const k = clock();
  k.event("card:1:answer");
  k.event("card:1:answer#2");
  const job = k.claim("c1").job!;
  k.result(job.run, { outcome: "done", ask: [{ title: "Go?", options: ["yes", "no"] }] });
  const card = k.state().cards[0];
  const answered = k.commit({ kind: "answer", keyHash: K.owner, card: card.id, choice: 0, text: null, by: null, ref: null });
  assert.deepEqual(written(answered, "events").map((e) => [e!.sid, e!.internal, e!.unrouted, e!.routed]), [["card:1:answer#3", "answer", false, ["alerts"]]]);
  assert.deepEqual(k.state().unrouted, []);
  k.close();
});

test("an event joining a retry-waiting run keeps its wait; a manual run ends the wait and its deadline", () => {
  const k = clock();
  k.event("a1");
  const job = k.claim("c1").job!;
  k.result(job.run, { outcome: "failed", error: "boom" });
  const waiting = k.run(job.run);
  assert.equal(waiting.state, "waiting");
  k.event("a2");
  const joined = k.run(job.run);
  assert.deepEqual([joined.state, joined.readyAt, joined.manual, joined.events], ["waiting", waiting.readyAt, false, 2]);
  assert.deepEqual(k.dueKeys(Date.parse(joined.readyAt)), [`retry:${job.run}`], "its retry comes due at its time");
  k.now += 1000;
  k.commit({ kind: "runNow", keyHash: K.owner, rule: "alerts", subject: null, reason: null });
  const now = k.run(job.run);
  assert.deepEqual([now.state, now.readyAt, now.manual], ["queued", k.iso(), true]);
  assert.deepEqual(k.dueKeys(Date.parse(joined.readyAt)), [], "the retry deadline is gone");
  k.close();
});

test("a manual run joining a queued run leaves its time in the queue as it was", () => {
  const k = clock();
  k.event("a1");
  k.claim("c1");
  k.now += 1000;
  k.event("a2"); // queued behind the running run
  const queued = k.state().active.find((r) => r.state === "queued")!;
  k.now += 5000;
  k.commit({ kind: "runNow", keyHash: K.owner, rule: "alerts", subject: null, reason: null });
  const after = k.run(queued.id);
  assert.deepEqual([after.state, after.readyAt, after.manual, after.events], ["queued", queued.readyAt, true, 2]);
  k.close();
});

test("a rule with when.intent takes only events whose summary or detail hits that intent of the table handed in; its job names the rule's assets", () => {
  const k = new Clock({
    ...baseRules,
    rules: [
      { name: "asks", when: { source: "shop", types: ["alert.*"], intent: "p/ask" }, to: "bot", use: "workflow", workflow: "p/flow", promptRef: "p/writer" },
      { name: "other", when: { source: "shop", types: ["note"], intent: "p/gone" }, to: "bot" },
    ],
  }, "2026-11-02T08:10:00Z");
  const intents = { "p/ask": ["Example Report", "示例报告"], "q/x": ["anything"] };
  const post = (id: string, event: Record<string, unknown>, table: Record<string, string[]> = intents) =>
    k.commit({ kind: "event", keyHash: K.source, event: { id, type: "alert.x", ...event } as never, intents: table }).body as { routed: string[] };
  assert.deepEqual(post("e1", { summary: "an EXAMPLE REPORT please" }).routed, ["asks"]);
  assert.deepEqual(post("e2", { summary: "hi", detail: "要一份示例报告" }).routed, ["asks"], "the detail counts too");
  assert.deepEqual(post("e3", { summary: "example" }).routed, [], "a part of a phrase is not the phrase");
  assert.deepEqual(post("e4", { summary: "example report" }, {}).routed, [], "an intent not handed in matches nothing");
  assert.deepEqual(post("e5", { type: "other", summary: "example report" }).routed, [], "the types still apply");
  assert.deepEqual(post("e6", { type: "note", summary: "anything" }).routed, [], "an intent of no plugin loaded matches nothing");
  assert.deepEqual((k.commit({ kind: "event", keyHash: K.source, event: { id: "e7", type: "alert.x", summary: "example report" } }).body as { routed: string[] }).routed, [], "no table: none");
  const job = k.claim("c1").job!;
  assert.deepEqual(job.rule, { name: "asks", cwd: null, skill: null, prompt: null, promptRef: "p/writer", workflow: "p/flow", intent: "p/ask" });
});

test("a rule whose when names only an intent takes events of every source that hit it, in the order of the file; its types still narrow", () => {
  const [alerts, perSubject] = baseRules.rules;
  const k = new Clock({
    ...baseRules,
    rules: [
      alerts,
      { name: "asks", when: { intent: "p/ask" }, to: "bot", parallel: 2 },
      perSubject,
      { name: "chats", when: { intent: "p/ask", types: ["chat.*"] }, to: "bot2" },
      { name: "gone", when: { intent: "p/gone" }, to: "bot" },
    ],
  }, "2026-11-02T08:10:00Z");
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "crm", newHash: crm });
  const intents = { "p/ask": ["Example Report"] };
  const routed = (keyHash: string, id: string, type: string, summary: string, table: Record<string, string[]> = intents) =>
    (k.commit({ kind: "event", keyHash, event: { id, type, summary }, intents: table }).body as { routed: string[] }).routed;
  assert.deepEqual(routed(K.source, "e1", "alert.x", "an EXAMPLE REPORT"), ["alerts", "asks"], "its source's rules and the intent's, in file order");
  assert.deepEqual(routed(crm, "e2", "chat.message", "example report, please"), ["asks", "chats"], "another source, and the types that match");
  assert.deepEqual(routed(crm, "e3", "ticket.new", "example report"), ["asks", "per-subject"]);
  assert.deepEqual(routed(crm, "e4", "chat.message", "an example"), [], "no hit: only the rules of a source would take it");
  assert.deepEqual(routed(crm, "e5", "chat.message", "example report", {}), [], "an intent not handed in matches nothing");
  const plugin = k.commit({ kind: "pluginEvent", keyHash: K.owner, plugin: "p", event: { id: "f1", type: "form.go", summary: "example report" }, intents });
  assert.deepEqual((plugin.body as { routed: string[] }).routed, ["asks"], "a plugin's event too");
  assert.deepEqual(k.state().unrouted.map((e) => e.eventId), ["e5", "e4"]);
  // The index: a source's rules merged with the rules of any source in the order of the file; a source no rule names gets those alone.
  const shop = rulesOf(k.rules, "shop");
  assert.deepEqual(shop.map((r) => r.name), ["alerts", "asks", "chats", "gone"]);
  assert.equal(rulesOf(k.rules, "shop"), shop, "the same list, not built again");
  assert.deepEqual(rulesOf(k.rules, "crm").map((r) => r.name), ["asks", "per-subject", "chats", "gone"]);
  assert.deepEqual(rulesOf(k.rules, "plugin:p").map((r) => r.name), ["asks", "chats", "gone"]);
  assert.equal(rulesOf(k.rules, "plugin:p"), rulesOf(k.rules, "nobody"));
  k.close();
});

test("issue 26 round 52, F52-1 (reported case: an agent's receipt event hit an intent rule of any source, whose workflow called an always-allowed HTTP tool the agent's own rule was not offered, with the agent's text): a run's event is taken only by rules that name its source", () => {
  const [alerts] = baseRules.rules;
  const k = new Clock({
    ...baseRules,
    rules: [
      { ...alerts, emits: { source: "shop", types: ["chat.*"] } },
      { name: "asks", when: { intent: "p/ask" }, to: "bot", use: "workflow", workflow: "p/flow" },
      { name: "named", when: { source: "shop", types: ["chat.*"], intent: "p/ask" }, to: "bot2" },
    ],
  }, "2026-11-02T08:10:00Z");
  const intents = { "p/ask": ["fetch please"] };
  k.event("a1");
  const job = k.claim("c1").job!;
  const r = k.commit({ kind: "result", run: job.run, token: k.token(job.run), result: { outcome: "done", events: [{ id: "x1", type: "chat.msg", summary: "fetch please INJECTED" }] } as never, hash: "h1", intents });
  assert.deepEqual(written(r, "events").map((e) => [e!.sid, e!.internal, e!.routed]), [["receipt:x1", "receipt", ["named"]]]);
  // The same text posted by the source itself is taken by the rule of any source, as before.
  const posted = k.commit({ kind: "event", keyHash: K.source, event: { id: "x2", type: "chat.msg", summary: "fetch please" }, intents });
  assert.deepEqual((posted.body as { routed: string[] }).routed, ["asks", "named"]);
  k.close();
});

test("issue 26 round 52, F52-1 (the kind: an event a run's tool call posted to its own hub, as a declarative HTTP tool does): taken only by rules that name its source, as a receipt's", () => {
  const [alerts] = baseRules.rules;
  const k = new Clock({
    ...baseRules,
    approvals: [{ plugin: "jobs", mode: "auto" }],
    rules: [{ ...alerts, tools: ["jobs.*"] }, { name: "asks", when: { intent: "p/ask" }, to: "bot2" }],
  }, "2026-11-02T08:10:00Z");
  const intents = { "p/ask": ["fetch please"] };
  k.event("a1");
  const job = k.claim("c1").job!;
  const body = { tool: "jobs.run", argsDigest: "0".repeat(64), preview: "{}", manifestDigest: "a".repeat(64), builtIn: true, disableModelInvocation: false, kind: "sync" };
  const call = (k.commit({ kind: "toolCall", run: job.run, token: k.token(job.run), body, plugin: { builtIn: true, kind: "sync", disableModelInvocation: false, http: null } } as never).body as { call: number }).call;
  const post = (id: string, via?: number) => (k.commit({ kind: "event", keyHash: K.source, event: { id, type: "chat.msg", summary: "fetch please" }, intents, ...(via === undefined ? {} : { viaCall: via }) }).body as { routed: string[] }).routed;
  assert.deepEqual([post("v1", call), post("v2")], [[], ["asks"]], "through the run's call: not the rule of any source; the source's own: taken");
  k.close();
});

test("a rule of any source has cards, answers, timers and manual runs as a rule with a source has: all of source intent:<plugin>/<id>, in the event's lane", () => {
  const k = new Clock({ ...baseRules, rules: [{ name: "asks", when: { intent: "p/ask" }, to: "bot", parallel: 2 }] }, "2026-11-02T08:10:00Z");
  const intents = { "p/ask": ["example report"] };
  k.commit({ kind: "event", keyHash: K.source, event: { id: "e1", type: "chat.message", subject: "s1", summary: "an example report" }, intents });
  const job = k.claim("c1").job!;
  assert.deepEqual([job.rule.name, job.rule.intent, job.context.events.map((e) => [e.source, e.id])], ["asks", "p/ask", [["shop", "e1"]]]);
  k.started(job.run, "sess-1");
  const asked = k.result(job.run, {
    outcome: "done", ask: [{ title: "Fill in", options: ["Submit"], about: "slots" }], notice: [{ title: "Heads up", text: "read me" }],
  });
  const cards = written(asked, "cards").map((c) => [c!.kind, c!.source, c!.rule, c!.lane, c!.group]);
  assert.deepEqual(cards, [["ask", "intent:p/ask", "asks", "s1", "asks"], ["notice", "intent:p/ask", "asks", "s1", "asks"]]);
  const [ask, notice] = k.cards().sort((a, b) => a.id - b.id);
  const answered = k.commit({ kind: "answer", keyHash: K.owner, card: ask!.id, choice: null, text: "topic: db", by: null, ref: null });
  assert.deepEqual(written(answered, "events").map((e) => [e!.source, e!.sid, e!.type, e!.subject, e!.internal, e!.routed]), [["intent:p/ask", `card:${ask!.id}:answer`, "card.answer", "s1", "answer", ["asks"]]]);
  const next = k.claim("c2").job!;
  assert.deepEqual([next.session, next.context.answers.map((a) => [a.card, a.text, a.about]), next.context.open.map((o) => o.card)], ["sess-1", [[ask!.id, "topic: db", "slots"]], [notice!.id]]);
  k.started(next.run, "sess-1");
  const later = new Date(k.now + 60_000).toISOString();
  const resolved = k.result(next.run, { outcome: "done", resolve: [{ card: notice!.id }], later: [{ key: "again", at: later }] });
  assert.deepEqual(resolved.body, { rejected: [] }, "a later run of the rule resolves the rule's card");
  assert.equal(k.card(notice!.id).state, "closed");
  k.minutes(1);
  const timer = k.claim("c3").job!;
  assert.deepEqual([timer.session, timer.context.timers.map((t) => t.key), timer.run === next.run], ["sess-1", ["again"], false]);
  k.result(timer.run, { outcome: "done" });
  const manual = k.commit({ kind: "runNow", keyHash: K.owner, rule: "asks", subject: "s2", reason: null });
  assert.deepEqual(written(manual, "events").map((e) => [e!.source, e!.subject, e!.internal, e!.routed]), [["intent:p/ask", "s2", "manual", ["asks"]]]);
  const events = k.stream().flatMap((f) => f.changes).filter((c) => c[0] === "events").map((c) => c[2] as { source: string; internal: string | null }).filter(Boolean);
  assert.deepEqual(events.map((e) => [e.source, e.internal]).filter(([, i]) => i === "timer"), [["intent:p/ask", "timer"]]);
  assert.deepEqual(k.state().unrouted, []);
  k.close();
});

test("a receipt's events are routed with the intents handed in with the result, as posted events are (by a rule that names their source: round 52, F52-1)", () => {
  const k = new Clock({
    ...baseRules,
    rules: [baseRules.rules[0], { name: "asks", when: { source: "shop", types: ["followup.*"], intent: "p/ask" }, to: "bot2" }],
  }, "2026-11-02T08:10:00Z");
  k.event("e1");
  const job = k.claim("c1").job!;
  const intents = { "p/ask": ["example report"] };
  const events = [{ id: "f1", type: "followup.x", summary: "an Example Report" }, { id: "f2", type: "followup.y", summary: "nothing" }];
  const r = k.commit({ kind: "result", run: job.run, token: k.token(job.run), result: { outcome: "done", events }, hash: "h1", intents });
  assert.deepEqual(r.body, { rejected: [] });
  assert.deepEqual(written(r, "events").map((e) => [e!.sid, e!.internal, e!.routed]), [["receipt:f1", "receipt", ["asks"]], ["receipt:f2", "receipt", []]]);
  k.close();
});

test("intents compare without case in the Unicode sense: NFKC, full case folding, one sigma; empty phrases and texts match nothing", () => {
  assert.equal(foldCase("STRASSE"), "strasse");
  assert.equal(foldCase("straße"), "strasse");
  assert.equal(foldCase("ẞ"), "ss");
  assert.equal(foldCase("ΟΔΟΣ"), "οδοσ");
  assert.equal(foldCase("οδος"), "οδοσ");
  assert.equal(foldCase("ＡＢＣ ﬁ"), "abc fi");
  assert.equal(intentHit(["示例"], "这是示例", null), true);
  assert.equal(intentHit(["示例"], null, "这是示例"), true);
  assert.equal(intentHit(["Straße"], "the STRASSE", null), true);
  assert.equal(intentHit(["nope", "ΟΔΟΣ"], "οδος", "x"), true, "any phrase");
  assert.equal(intentHit(["x"], null, null), false);
  assert.equal(intentHit(["x"], "", ""), false);
  assert.equal(intentHit([""], "anything", null), false);
  assert.equal(intentHit([], "anything", null), false);
});

test("issue 26 r29 F29a-5 (reported case: a source posted receipt:deploy-1, and a run's deploy-1 was then dropped in silence): a source's event may not take an id of the receipts' space; a run's event is recorded", () => {
  const k = clock();
  const posted = k.commit({ kind: "event", keyHash: K.source, event: { id: "receipt:deploy-1", type: "followup.a" } });
  assert.deepEqual([posted.status, posted.body, posted.facts], [400, { error: "id: an event's id may not start with receipt: — the hub keeps those for the events runs report in their receipts" }, []]);
  k.event("a1");
  const job = k.claim("c1").job!;
  const r = k.result(job.run, { outcome: "done", events: [{ id: "deploy-1", type: "followup.a" }] });
  assert.deepEqual(r.body, { rejected: [] });
  assert.deepEqual(written(r, "events").map((e) => [e!.sid, e!.internal]), [["receipt:deploy-1", "receipt"]]);
  k.close();
});
