/**
 * The feishu channel against a local fake of the Feishu endpoints the official SDK calls (tests/fake-feishu.ts):
 * run by a real hub's `serve` from config.json and secrets.env, it sends cards, patches them, relays button presses
 * that arrive over the long connection, and reports Feishu's errors. Payloads are compared whole.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import { hubFixture, baseRules, makeHome, serveFixture, until, type Fixture } from "./helpers.js";
import { cliLines } from "./tools-helpers.js";
import { startFakeFeishu, fakeAppId, fakeTenantToken, type FakeFeishu, type Recorded } from "./fake-feishu.js";
import { newKey } from "../src/host/home.js";
import { runChannel } from "../src/host/channels.js";
import { PluginLoader } from "../src/plugins/index.js";
import { feishuUuidMaxChars, parseOptions, sendUuid } from "../plugins/feishu/channel.js";
import { feishuCard, readPress } from "../plugins/feishu/card.js";
import type { Card as ChannelCardView, OwnerCard } from "../src/protocol/responses.js";

process.env.AGENT_AUTOLOOP_LANG = "en";
const secret = "s3cret-feishu-app-secret";
const rules = {
  ...baseRules,
  channels: { feishu: { name: "Feishu", answerers: ["ou_alice"] }, ch1: { name: "One" }, ch2: { name: "Two" } },
  rules: [{ ...baseRules.rules[0], channels: ["feishu"] }, { ...baseRules.rules[1], channels: ["ch2"] }],
};

let fake: FakeFeishu;
let f: Fixture;

before(async () => {
  fake = await startFakeFeishu(secret);
  f = await hubFixture(rules, {
    channels: { feishu: { use: "feishu", key: newKey(), appId: fakeAppId, receiveId: "oc_chat1", domain: fake.url } },
  }, `AGENT_AUTOLOOP_CHANNEL_SECRET_FEISHU=${secret}\n`);
  await fake.connected();
});
after(async () => {
  await f.close();
  await fake.close();
});

const plain = (content: string) => ({ tag: "plain_text", content });
const div = (content: string) => ({ tag: "div", text: plain(content) });
const card = (template: string, title: string, elements: unknown[]) => ({ config: { update_multi: true }, header: { template, title: plain(title) }, elements });
const button = (label: string, type: string, cardId: number, choice: number) => ({ tag: "button", text: plain(label), type, value: { card: cardId, choice } });

let n = 0;
/** Runs one event through the worker API with this receipt; returns the cards the run made, as the owner sees them. */
async function makeCards(receipt: Record<string, unknown>): Promise<OwnerCard[]> {
  n++;
  await f.call("POST", "/v1/events", f.keys.source, { id: `fs${n}`, type: "alert.x" });
  const job = (await f.call("GET", `/v1/work?claim=fs${n}`, f.keys.worker)).body.job;
  await f.call("POST", `/v1/runs/${job.run}/started`, job.token, { session: `sess-${n}` });
  await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ...receipt });
  const st = await f.state();
  return [...st.cards, ...st.recentCards].filter((c) => c.run === job.run).sort((a, b) => a.id - b.id);
}

async function ownerCard(id: number): Promise<OwnerCard | undefined> {
  const st = await f.state();
  return [...st.cards, ...st.recentCards].find((c) => c.id === id);
}

/** Waits until the channel reported the card's current version (delivered or failed); returns the card. */
async function settled(id: number, what = "delivered"): Promise<OwnerCard> {
  return until(async () => {
    const c = await ownerCard(id);
    const d = c?.deliveries.feishu;
    return d && (what === "delivered" ? d.ref && d.version === c.version && !d.error : d.failures > 0) ? c : null;
  }, 10_000, `card ${id} ${what}`);
}

const since = (from: number, method: string, path: string): Recorded[] => fake.requests.slice(from).filter((r) => r.method === method && r.path === path);
const creates = (from: number) => since(from, "POST", "/open-apis/im/v1/messages");

test("a question is one interactive card: heading with the rule, plain text, one button per option; sent under the card's key", async () => {
  const from = fake.requests.length;
  const [q] = await makeCards({ ask: [{ title: "Restart the shop?", text: "It is slow <at id=all></at> [x](http://y)", options: ["yes", "no"], recommend: 0, key: "q" }] });
  const c = await settled(q.id);
  const sent = creates(from);
  assert.equal(sent.length, 1);
  assert.equal(sent[0]!.auth, `Bearer ${fakeTenantToken}`);
  assert.deepEqual(sent[0]!.query, { receive_id_type: "chat_id" });
  assert.deepEqual({ ...sent[0]!.body, content: JSON.parse(sent[0]!.body.content!) }, {
    receive_id: "oc_chat1", msg_type: "interactive", uuid: `aa-${q.id}-${Date.parse(q.at).toString(36)}`,
    content: card("blue", "Restart the shop? · alerts", [
      div("It is slow <at id=all></at> [x](http://y)"),
      { tag: "action", actions: [button("yes (recommended)", "primary", q.id, 0), button("no", "default", q.id, 1)] },
    ]),
  });
  assert.equal(fake.messages.get(c.deliveries.feishu!.ref!)?.uuid, sent[0]!.body.uuid, "the reported ref is the posted message");
});

test("an fyi notice is a grey card without buttons; a notice that is not fyi has the one 已处理 button", async () => {
  const from = fake.requests.length;
  const [fyi, notice] = await makeCards({ notice: [{ title: "Deployed", text: "v2 is live", fyi: true }, { title: "Disk almost full", text: "92%" }] });
  await settled(fyi.id);
  await settled(notice.id);
  const content = (id: number) => JSON.parse(creates(from).find((r) => r.body.uuid!.startsWith(`aa-${id}-`))!.body.content!);
  assert.deepEqual(content(fyi.id), card("grey", "[FYI] Deployed · alerts", [div("v2 is live")]));
  assert.deepEqual(content(notice.id), card("blue", "Disk almost full · alerts", [div("92%"), { tag: "action", actions: [button("Handled", "primary", notice.id, 0)] }]));
  await f.call("POST", `/v1/cards/${notice.id}/resolve`, f.keys.owner, {});
});

test("a press by an answerer over the long connection answers the card; the run goes on with it; the same message is patched", async () => {
  const from = fake.requests.length;
  const [q] = await makeCards({ ask: [{ title: "Deploy?", text: "v3 is ready", options: ["yes", "no"], key: "d" }] });
  const ref = (await settled(q.id)).deliveries.feishu!.ref!;
  const pressed = await fake.press(ref, { card: q.id, choice: 1 }, { open_id: "ou_alice", user_id: "u_alice", union_id: "on_alice" });
  assert.deepEqual(pressed, { code: 200, result: { toast: { type: "success", content: "Recorded: no" } } });
  const answered = await settled(q.id);
  assert.deepEqual([answered.state, answered.choice, answered.by, answered.version], ["answered", 1, "ou_alice", 2]);
  assert.equal(answered.deliveries.feishu.ref, ref);
  const patches = () => since(from, "PATCH", `/open-apis/im/v1/messages/${ref}`);
  assert.equal(patches().length, 1);
  assert.deepEqual(JSON.parse(patches()[0]!.body.content!), card("green", "Deploy? · alerts", [div("v3 is ready"), div("Answer: no\nBy: ou_alice")]));
  // The answer wakes the lane: the next run continues the asking session with the answer in its context.
  const job = (await f.call("GET", "/v1/work?claim=after-press", f.keys.worker)).body.job;
  assert.equal(job.session, `sess-${n}`);
  assert.deepEqual({ ...job.context.answers[0], at: "A" }, { card: q.id, title: "Deploy?", options: ["yes", "no"], choice: 1, text: null, about: null, by: "ou_alice", at: "A" });
  await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done" });
  await until(async () => (await ownerCard(q.id))?.deliveries.feishu?.version === 3, 10_000, "the closed version patched");
  assert.equal(patches().length, 2);
  assert.deepEqual(JSON.parse(patches()[1]!.body.content!), card("grey", "Deploy? · alerts", [div("v3 is ready"), div("Answer: no\nBy: ou_alice\nResult: Done")]));
  assert.equal(creates(from).length, 1, "updates never post a new message");
  assert.deepEqual(fake.messages.get(ref)!.card, JSON.parse(patches()[1]!.body.content!));
});

test("a press by someone else, on another message or that cannot be read is refused with a toast and records nothing", async () => {
  const from = fake.requests.length;
  const [q, other] = await makeCards({ ask: [{ title: "Drop the cache?", options: ["yes", "no"], key: "c" }, { title: "Other?", options: ["a"], key: "o" }] });
  const ref = (await settled(q.id)).deliveries.feishu!.ref!;
  await settled(other.id);
  const seq = f.seq();
  const refusals = [
    [{ card: q.id, choice: 0 }, { open_id: "ou_bob" }, "Not recorded: by: ou_bob is not among this channel's answerers"],
    [{ card: other.id, choice: 0 }, { open_id: "ou_alice" }, "Not recorded: ref: does not match the delivered message"],
    [{ card: q.id, choice: 5 }, { open_id: "ou_alice" }, "Not recorded: choice: must be 0 to 1"],
    [{ card: "x", choice: 0 }, { open_id: "ou_alice" }, "This press could not be read; nothing was recorded"],
    [{ card: q.id, choice: 0 }, { user_id: "u_alice" }, "Feishu did not send your open_id; nothing was recorded (check the app's permissions)"],
  ] as const;
  for (const [value, operator, toast] of refusals) {
    assert.deepEqual(await fake.press(ref, value, operator), { code: 200, result: { toast: { type: "error", content: toast } } });
  }
  // The channel's own polls may be recorded (once a minute); nothing else is.
  assert.deepEqual(f.running.hub.store.factsAfter(seq, 1000).filter((x) => x.kind !== "heartbeat"), [], "no fact was written");
  assert.deepEqual([(await ownerCard(q.id))?.state, (await ownerCard(q.id))?.by], ["open", null]);
  assert.equal(since(from, "PATCH", `/open-apis/im/v1/messages/${ref}`).length, 0);
  for (const c of [q, other]) await f.call("POST", `/v1/cards/${c.id}/resolve`, f.keys.owner, {});
});

test("a send whose answer is lost is made again under the same uuid, and Feishu posts one message", async () => {
  const from = fake.requests.length;
  fake.failNext.create = "drop";
  const [c] = await makeCards({ notice: [{ title: "Lost answer" }] });
  const ref = (await settled(c.id)).deliveries.feishu!.ref!;
  const sent = creates(from);
  assert.equal(sent.length, 2);
  assert.equal(sent[0]!.body.uuid, `aa-${c.id}-${Date.parse(c.at).toString(36)}`);
  assert.equal(sent[1]!.body.uuid, sent[0]!.body.uuid);
  assert.deepEqual([...fake.messages].filter(([, m]) => m.uuid === sent[0]!.body.uuid).map(([id]) => id), [ref]);
  await f.call("POST", `/v1/cards/${c.id}/resolve`, f.keys.owner, {});
});

test("closing a card patches its message; an ended card Feishu will not patch is sent again under a key with its version", async () => {
  const from = fake.requests.length;
  const [a, b] = await makeCards({ ask: [{ title: "Scale up?", options: ["yes"], key: "s" }, { title: "Scale down?", options: ["yes"], key: "t" }] });
  const refA = (await settled(a.id)).deliveries.feishu!.ref!;
  const refB = (await settled(b.id)).deliveries.feishu!.ref!;
  await f.call("POST", `/v1/cards/${a.id}/resolve`, f.keys.owner, { reason: "load is normal" });
  assert.equal((await settled(a.id)).deliveries.feishu.ref, refA);
  const patchesA = since(from, "PATCH", `/open-apis/im/v1/messages/${refA}`);
  assert.equal(patchesA.length, 1);
  assert.deepEqual(JSON.parse(patchesA[0]!.body.content!), card("grey", "Scale up? · alerts", [div("By: owner\nResult: No longer needed: load is normal")]));

  fake.failNext.patch = { status: 400, body: { code: 230099, msg: "this card can no longer be edited" } };
  await f.call("POST", `/v1/cards/${b.id}/resolve`, f.keys.owner, {});
  const closed = await settled(b.id);
  assert.notEqual(closed.deliveries.feishu.ref, refB);
  const resent = creates(from).filter((r) => r.body.uuid!.startsWith(`aa-${b.id}-`));
  assert.deepEqual(resent.map((r) => r.body.uuid), [sendUuid(b), sendUuid(b, 2)]);
  assert.equal(sendUuid(b, 2), `aa-${b.id}-${Date.parse(b.at).toString(36)}-v2`);
  assert.deepEqual(JSON.parse(resent[1]!.body.content!), card("grey", "Scale down? · alerts", [div("By: owner\nResult: No longer needed")]));
  assert.equal(fake.messages.get(closed.deliveries.feishu!.ref!)!.uuid, sendUuid(b, 2));
});

test("a Feishu error is reported failed with its code and message, and the channel goes on with the next card", async () => {
  fake.failNext.create = { status: 400, body: { code: 230002, msg: "Bot/User can NOT be out of the chat." } };
  const [x] = await makeCards({ notice: [{ title: "Not sent" }] });
  const failed = await settled(x.id, "failed");
  assert.deepEqual([failed.deliveries.feishu.error, failed.deliveries.feishu.ref], ["Feishu send: code 230002: Bot/User can NOT be out of the chat.", null]);
  fake.failNext.create = { status: 200, body: { code: 11232, msg: "frequency limited" } };
  const [y] = await makeCards({ notice: [{ title: "Also not sent" }] });
  assert.equal((await settled(y.id, "failed")).deliveries.feishu.error, "Feishu send: code 11232: frequency limited");
  fake.failNext.create = { status: 502, body: "<html>bad gateway</html>" };
  const [g] = await makeCards({ notice: [{ title: "Behind a proxy" }] });
  assert.equal((await settled(g.id, "failed")).deliveries.feishu.error, "Feishu send: HTTP 502");
  fake.failNext.create = { status: 200, body: { ok: true } };
  const [h] = await makeCards({ notice: [{ title: "Not Feishu" }] });
  assert.equal((await settled(h.id, "failed")).deliveries.feishu.error, 'Feishu send: not a Feishu answer: {"ok":true}');
  const [z] = await makeCards({ notice: [{ title: "Sent" }] });
  assert.match((await settled(z.id)).deliveries.feishu!.ref!, /^om_/);
  for (const c of [x, y, g, h, z]) await f.call("POST", `/v1/cards/${c.id}/resolve`, f.keys.owner, {});
});

test("a wrong app secret: the long connection failure is logged with its retry time, the send fails naming the token, no log line holds a secret", async () => {
  const lines: string[] = [];
  const ac = new AbortController();
  const wrong = "wrong-secret-value";
  const done = runChannel("ch2", { use: "feishu", key: f.keys.channel2, appId: fakeAppId, receiveId: "oc_chat1", domain: fake.url },
    f.url, new PluginLoader(f.home.plugins), ac.signal, (l) => lines.push(l), 50, { AGENT_AUTOLOOP_CHANNEL_SECRET_CH2: wrong, AGENT_AUTOLOOP_CHANNEL_SECRET_FEISHU: secret });
  try {
    await until(() => lines.length > 0, 10_000, "a log line");
    assert.deepEqual(lines, ["channel ch2: long connection failed: pullConnectConfig failed: code=514, msg=auth failed; trying again in 30 s"]);
    assert.equal(fake.requests.filter((r) => r.body?.AppSecret === wrong).length, 1, "not retried at once");
    const endpointAsked = fake.requests.filter((r) => r.path === "/callback/ws/endpoint").at(-1)!;
    assert.deepEqual(endpointAsked.body, { AppID: fakeAppId, AppSecret: wrong }, "the channel got its own secret from secrets.env");
    // A card for this channel: the tenant token is refused, so the send is reported failed, naming the token.
    await f.call("POST", "/v1/events", f.keys.source2, { id: "wrong-1", type: "ticket.x", subject: "t1" });
    const job = (await f.call("GET", "/v1/work?claim=wrong-1", f.keys.worker2)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", notice: [{ title: "Never shown" }] });
    const c = await until(async () => {
      const st = await f.state();
      return st.cards.find((x) => x.run === job.run && (x.deliveries.ch2?.failures ?? 0) > 0);
    }, 10_000, "the failed send");
    assert.equal(c.deliveries.ch2.error, "Feishu send (tenant token): code 10014: app secret invalid");
    assert.equal(lines.at(-1), `channel ch2: card ${c.id} v1: Feishu send (tenant token): code 10014: app secret invalid`);
    await f.call("POST", `/v1/cards/${c.id}/resolve`, f.keys.owner, {});
  } finally {
    ac.abort();
    await done;
  }
  assert.ok(lines.every((l) => !l.includes(wrong) && !l.includes(secret)));
});

test("a Feishu channel started without its secret takes it from secrets.env at its next restart; its log, doctor and status say the same (issue 26, finding 17)", async () => {
  // The reported case: the hub said "put it in secrets.env … restarting in N s", but its restarts never read
  // secrets.env again; status said "restart serve" right after a restart; doctor said nothing. Varied: a second
  // channel with appSecret in config.json is fine; secrets.env written while serve runs (the case), before any start.
  const own = await startFakeFeishu(secret);
  const lateRules = { ...baseRules, channels: { late: { name: "Late", answerers: ["ou_alice"] }, inline: { name: "Inline", answerers: ["ou_alice"] } }, rules: [{ ...baseRules.rules[0], channels: ["late"] }, baseRules.rules[1]] };
  const channel = (extra: Record<string, unknown>) => ({ use: "feishu", key: newKey(), appId: fakeAppId, receiveId: "oc_chat1", domain: own.url, ...extra });
  const made = makeHome(lateRules, { channels: { late: channel({}), inline: channel({ appSecret: secret }) } }, "# no channel secret yet\n");
  const lines: string[] = [];
  const g = await serveFixture(made, { log: (l) => lines.push(l) });
  const problem = "feishu channel: no app secret: put AGENT_AUTOLOOP_CHANNEL_SECRET_LATE=… in secrets.env (serve reads it again each time it restarts the channel), or appSecret in config.json (read when serve starts)";
  try {
    await until(() => lines.some((l) => l.startsWith("channel late: ")), 10_000, "the channel's first failed start");
    assert.equal(lines.find((l) => l.startsWith("channel late: ")), `channel late: Error: ${problem}; restarting in 1 s`);
    const doctor = await cliLines(["doctor"], made.dir);
    assert.deepEqual(doctor.out.filter((l) => l.includes("channel ")), [`FIX  channel late: ${problem}`]);
    const status = await cliLines(["status"], made.dir);
    const at = status.out.findIndex((l) => l.startsWith("  late · "));
    assert.deepEqual(status.out.slice(at, at + 2), ["  late · never polled · cards waiting: 0", `      not running: ${problem}`], status.out.join("\n"));
    assert.ok(!status.out.some((l) => l.includes("restart serve")), status.out.join("\n"));
    // Written while serve runs: the channel's next restart reads it, connects and polls.
    appendFileSync(made.home.secrets, `AGENT_AUTOLOOP_CHANNEL_SECRET_LATE=${secret}\n`);
    await until(async () => (await g.state()).channels.find((c) => c.id === "late")?.seenAt, 30_000, "the channel to poll with its secret");
    await until(() => own.requests.some((r) => r.path === "/callback/ws/endpoint" && r.body.AppSecret === secret), 10_000, "the long connection with the secret");
    const fine = await cliLines(["doctor"], made.dir);
    assert.deepEqual(fine.out.filter((l) => l.includes("channel ")), []);
    const polled = await cliLines(["status"], made.dir);
    assert.ok(!polled.out.some((l) => l.includes("not running")), polled.out.join("\n"));
  } finally {
    await g.close();
    await own.close();
  }
});

test("options: what is missing, unknown or malformed is named; answerers belong in rules.json; the secret file wins", () => {
  const ok = { name: "ch1", appId: fakeAppId, receiveId: "ou_owner" };
  assert.deepEqual(parseOptions({ ...ok, appSecret: "from-config" }, "from-secrets", "en"),
    { appId: fakeAppId, appSecret: "from-secrets", receiveId: "ou_owner", receiveIdType: "open_id", answererIdType: "open_id", domain: 0 });
  assert.equal(parseOptions({ ...ok, receiveId: "on_x", domain: "lark", answererIdType: "user_id" }, "s", "en").domain, 1);
  assert.equal(parseOptions({ ...ok, receiveId: "me@example.com", domain: "http://127.0.0.1:9/" }, "s", "en").domain, "http://127.0.0.1:9");
  assert.equal(parseOptions({ ...ok, receiveId: "u_1", receiveIdType: "user_id" }, "s", "en").receiveIdType, "user_id");
  const refused: [Record<string, unknown>, string | null, string][] = [
    [{ ...ok, appId: undefined }, "s", "feishu channel: appId is required in config.json"],
    [{ ...ok, appId: "cli_123" }, "s", "feishu channel: appId must be cli_ + 16 hex digits"],
    [{ ...ok, recieveIdType: "chat_id" }, "s", "feishu channel: unknown option recieveIdType"],
    [{ ...ok, answerers: ["ou_alice"] }, "s", "feishu channel: answerers belong in rules.json (channels.ch1.answerers), not in config.json"],
    [ok, null, "feishu channel: no app secret: put AGENT_AUTOLOOP_CHANNEL_SECRET_CH1=… in secrets.env (serve reads it again each time it restarts the channel), or appSecret in config.json (read when serve starts)"],
    [{ ...ok, receiveId: "u_1" }, "s", "feishu channel: receiveIdType is required in config.json"],
    [{ ...ok, receiveIdType: "group" }, "s", "feishu channel: receiveIdType must be chat_id | open_id | union_id | user_id | email"],
    [{ ...ok, receiveId: 7 }, "s", "feishu channel: receiveId must be string"],
    [{ ...ok, domain: "ftp://x" }, "s", "feishu channel: domain must be feishu | lark | http(s)://host[:port]"],
  ];
  for (const [options, s, error] of refused) assert.throws(() => parseOptions(options, s, "en"), { message: error });
});

test("in Chinese: 仅告知 before an fyi title, the 已处理 button, 推荐 on the recommended option; odd presses never throw", () => {
  const view: ChannelCardView = {
    id: 9, version: 1, ref: null, kind: "notice", fyi: true, state: "closed", title: "已上线", text: "", options: [], recommend: null,
    choice: null, answer: null, by: null, result: null, link: null, rule: "发布", at: "2026-11-30T00:00:00.000Z",
  };
  assert.deepEqual(feishuCard(view, "zh"), card("grey", "[仅告知] 已上线 · 发布", []));
  assert.deepEqual(feishuCard({ ...view, state: "open" }, "zh"), card("grey", "[仅告知] 已上线 · 发布", []), "fyi: never a button");
  assert.deepEqual(feishuCard({ ...view, fyi: false, state: "open", link: "http://h/c/9/t" }, "zh"),
    card("blue", "已上线 · 发布", [{ tag: "action", actions: [button("已处理", "primary", 9, 0), { tag: "button", text: plain("点击处理"), type: "default", url: "http://h/c/9/t" }] }]));
  assert.deepEqual(feishuCard({ ...view, kind: "ask", fyi: false, state: "open", options: ["是", "否"], recommend: 1 }, "zh").elements,
    [{ tag: "action", actions: [button("是", "default", 9, 0), button("否 (推荐)", "primary", 9, 1)] }]);
  for (const odd of [null, undefined, 7, "x", [], {}, { action: null }, { action: { value: { card: -1, choice: 0 } }, context: { open_message_id: "om_1" } },
    { action: { value: { card: 1, choice: 1.5 } }, context: { open_message_id: "om_1" } }, { action: { value: { card: 1, choice: 0 } }, context: { open_message_id: "" } }]) {
    assert.deepEqual(readPress(odd, "open_id"), { problem: "feishu.badPress" });
  }
  assert.deepEqual(readPress({ action: { value: { card: "3", choice: "0" } }, open_message_id: "om_1", operator: { user_id: "u1" } }, "user_id"), { card: 3, choice: 0, by: "u1", ref: "om_1" });
  assert.equal(sendUuid({ id: 2 ** 53 - 1, at: "2026-11-30T00:00:00.000Z" }, 2 ** 53 - 1).length <= feishuUuidMaxChars, true);
  assert.equal(sendUuid({ id: 4, at: "not a time" }), "aa-4-0");
});

test("a card with a card template: its nodes as Feishu elements after the text (fields for kv, text for the rest), the link page for its buttons and forms", () => {
  const view: ChannelCardView = {
    id: 12, version: 1, ref: null, kind: "ask", fyi: false, state: "open", title: "Ship 1.2?", text: "Tests pass.", options: ["yes"], recommend: null,
    choice: null, answer: null, by: null, result: null, link: "http://h/c/12/t", rule: "release", at: "2026-12-02T00:00:00.000Z",
    template: "example/release",
    templateUi: { title: "Release", data: [
      { type: "markdown", markdown: "## Notes <at id=all></at>\n- see [plan](https://p.example/x) or [that](file:///etc)" },
      { type: "section", title: "Status", children: [
        { type: "kv", title: "Build", kv: [["version", "1.2"], ["a long key that goes on", "and a value"]] },
        { type: "list", title: "Left", items: ["docs", "tag"] },
      ] },
      { type: "doc-ref", docId: "art_1" },
      { type: "chart-lite", chart: { kind: "line", labels: ["mon", "tue"], series: [3, 5] } },
      { type: "form", id: "why", fields: [{ name: "reason", label: "Reason" }] },
      { type: "actions", actions: [{ id: "ok", label: "Ship it" }] },
    ] },
  };
  const link = { tag: "button", text: plain("Answer here"), type: "default", url: "http://h/c/12/t" };
  assert.deepEqual(feishuCard(view, "en"), card("blue", "Ship 1.2? · release", [
    div("Tests pass."),
    { tag: "hr" },
    div("Release"),
    div("Notes <at id=all></at>\n• see plan (https://p.example/x) or that"),
    div("Status"),
    div("Build"),
    { tag: "div", fields: [{ is_short: true, text: plain("version\n1.2") }, { is_short: false, text: plain("a long key that goes on\nand a value") }] },
    div("Left\n• docs\n• tag"),
    div("Document: art_1"),
    div("mon 3 · tue 5"),
    div("Form: why (Reason)"),
    div("[Ship it]"),
    div("This card's buttons and forms work in the owner's console (Needs you); a link or a chat message answers the card's own options only"),
    { tag: "action", actions: [button("yes", "default", 12, 0), link] },
  ]));
  // Answered, the link page still shows the template's buttons and forms; a template not loaded is said so.
  assert.deepEqual(feishuCard({ ...view, state: "answered", choice: 0, by: "ou_alice" }, "en").elements.at(-1), { tag: "action", actions: [link] });
  assert.deepEqual(feishuCard({ ...view, templateUi: undefined, link: null }, "en").elements,
    [div("Tests pass."), div("Card template example/release is not loaded"), { tag: "action", actions: [button("yes", "default", 12, 0)] }]);
});
