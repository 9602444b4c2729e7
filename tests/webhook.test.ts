/**
 * The webhook channel against a local HTTP server that checks each platform's exact payload and answers like the
 * platform, including its errors; driven by a real hub over the channel protocol.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { hubFixture, baseRules, until, type Fixture } from "./helpers.js";
import { channelHub } from "../src/host/channels.js";
import { PluginLoader } from "../src/plugins/index.js";
import type { ChannelPlugin } from "../src/sdk/index.js";

let f: Fixture;
let server: Server;
let base = "";
/** What the fake platforms received, and what they answer next. */
/** A webhook's JSON body as a channel posted it (DingTalk, WeCom, Slack, Discord, a custom template): the fields read here. */
interface Posted { msgtype?: string; markdown?: { content: string }; content?: string; allowed_mentions?: unknown; [field: string]: unknown }
const got: { path: string; body: Posted }[] = [];
let answer: { status: number; body: string } | null = null;

before(async () => {
  f = await hubFixture({ ...baseRules, channels: { ch1: { name: "One" } } });
  server = createServer((req, res) => {
    let data = "";
    req.on("data", (d) => (data += d));
    req.on("end", () => {
      got.push({ path: req.url!, body: JSON.parse(data) as Posted });
      const a = answer ?? ({ "/dingtalk": { status: 200, body: '{"errcode":0,"errmsg":"ok"}' }, "/wecom": { status: 200, body: '{"errcode":0,"errmsg":"ok"}' }, "/slack": { status: 200, body: "ok" }, "/discord": { status: 204, body: "" } } as Record<string, { status: number; body: string }>)[req.url!] ?? { status: 200, body: "{}" };
      res.writeHead(a.status, { "content-type": "application/json" }).end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.close();
  await f.close();
});

let n = 0;
/** Makes one card through the worker API and delivers it with the webhook channel; returns the card as the hub has it. */
async function send(options: Record<string, unknown>, receipt: Record<string, unknown>) {
  n++;
  got.length = 0;
  await f.call("POST", "/v1/events", f.keys.source, { id: `w${n}`, type: "alert.x" });
  const job = (await f.call("GET", `/v1/work?claim=w${n}`, f.keys.worker)).body.job;
  await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ...JSON.parse(JSON.stringify(receipt).split("KEY").join(String(n))) });
  const ac = new AbortController();
  const plugin = await new PluginLoader(null).load<ChannelPlugin>("channel", "webhook");
  const running = plugin({ hub: channelHub(f.url, f.keys.channel, ac.signal), options: { name: "ch1", ...options }, log: () => {}, signal: ac.signal, secret: null }).catch(() => {});
  const card = await until(async () => {
    const st = await f.state();
    const c = [...st.cards, ...st.recentCards].find((x) => x.run === job.run);
    return c && (c.deliveries.ch1?.ref || c.deliveries.ch1?.failures) ? c : null;
  }, 10_000, "the delivery report");
  ac.abort();
  await running;
  // close it, so no retry of a failed send reaches a later test
  await f.call("POST", `/v1/cards/${card.id}/resolve`, f.keys.owner, {});
  return card;
}

const ask = { ask: [{ title: "Restart <the> [shop](http://x)?", text: "It is slow @everyone", options: ["yes", "no"], recommend: 0, key: "KEY" }] };

test("DingTalk: a text message; errcode 0 is success", async () => {
  const card = await send({ url: `${base}/dingtalk`, platform: "dingtalk" }, ask);
  assert.equal(card.deliveries.ch1.ref, `webhook-${card.id}`);
  assert.deepEqual(got[0], { path: "/dingtalk", body: { msgtype: "text", text: { content: `Restart <the> [shop](http://x)? · alerts\nIt is slow @everyone\n0. yes (recommended)\n1. no\nAnswer: agent-autoloop answer ${card.id} <0-1>` } } });
});

test("WeCom: markdown with the rule after the title, link markup and angle brackets shown literally", async () => {
  const card = await send({ url: `${base}/wecom`, platform: "wecom" }, ask);
  assert.equal(card.deliveries.ch1.ref, `webhook-${card.id}`);
  assert.equal(got[0]!.body.msgtype, "markdown");
  assert.equal(got[0]!.body.markdown!.content, `**Restart ＜the＞ ［shop］（[Open link](http://x)）? · alerts**\nIt is slow @everyone\n0. yes (recommended)\n1. no\nAnswer: agent-autoloop answer ${card.id} ＜0-1＞`);
});

test("WeCom: a card over 2048 bytes is reported failed, not truncated or sent", async () => {
  const card = await send({ url: `${base}/wecom`, platform: "wecom" }, { notice: [{ title: "big", text: "字".repeat(700) }] });
  assert.equal(got.length, 0);
  assert.match(card.deliveries.ch1!.error!, /^the card is \d+ bytes; WeCom takes at most 2048$/);
});

test("Slack: {text}; an answer other than ok is a failure", async () => {
  const ok = await send({ url: `${base}/slack`, platform: "slack" }, { notice: [{ title: "Deployed", text: "v2" }] });
  assert.deepEqual(got[0]!.body, { text: `Deployed · alerts\nv2\nAnswer: agent-autoloop answer ${ok.id} 0` });
  answer = { status: 403, body: "invalid_token" };
  const bad = await send({ url: `${base}/slack`, platform: "slack" }, { notice: [{ title: "Again" }] });
  answer = null;
  assert.equal(bad.deliveries.ch1.error, "HTTP 403: invalid_token");
});

test("Slack: card text cannot mention @channel or users; a redirecting webhook is a failure, not a delivery", async () => {
  const card = await send({ url: `${base}/slack`, platform: "slack" }, { notice: [{ title: "hi <!channel>", text: "<@U123> & co" }] });
  assert.deepEqual(got[0]!.body, { text: `hi &lt;!channel&gt; · alerts\n&lt;@U123&gt; &amp; co\nAnswer: agent-autoloop answer ${card.id} 0` });
  answer = { status: 302, body: "" };
  const moved = await send({ url: `${base}/slack`, platform: "slack" }, { notice: [{ title: "moved" }] });
  answer = null;
  assert.match(moved.deliveries.ch1!.error!, /^HTTP 302: the webhook redirects/);
  assert.equal(moved.deliveries.ch1.ref, null);
});

test("issue 26 r25 F25b-3 (reported case): on Discord card text cannot make a masked link, a heading or a spoiler; a bare URL stays a link; the card's own answer link is left as it is", async () => {
  const { discordLiteral } = await import("../plugins/webhook/channel.js");
  assert.equal(discordLiteral("[https://hub.example/c/7/answer](https://evil.example/x) # big ||hidden|| **b** `c` <t:1:R> \\ see https://a.example/p_q(1)"),
    "\\[https://hub.example/c/7/answer\\]\\(https://evil.example/x\\) \\# big \\|\\|hidden\\|\\| \\*\\*b\\*\\* \\`c\\` \\<t:1:R\\> \\\\ see https://a.example/p_q\\(1\\)");
  await send({ url: `${base}/discord`, platform: "discord" }, { notice: [{ title: "Deploy [here](https://evil.example)", text: "**now**" }] });
  assert.match(got.at(-1)!.body.content!, /Deploy \\\[here\\\]\\\(https:\/\/evil\.example\\\)/);
  assert.match(got.at(-1)!.body.content!, /\\\*\\\*now\\\*\\\*/);
});

test("Discord: mentions cannot fire; over 2000 characters is a failure", async () => {
  await send({ url: `${base}/discord`, platform: "discord" }, ask);
  assert.deepEqual(got[0]!.body.allowed_mentions, { parse: [] });
  assert.match(got[0]!.body.content!, /@everyone/);
  const big = await send({ url: `${base}/discord`, platform: "discord" }, { notice: [{ title: "big", text: "x".repeat(2001) }] });
  assert.match(big.deliveries.ch1!.error!, /Discord takes at most 2000/);
});

test("DingTalk errcode other than 0 is a failure; a custom body template gets {text}", async () => {
  answer = { status: 200, body: '{"errcode":310000,"errmsg":"keywords not in content"}' };
  const bad = await send({ url: `${base}/dingtalk`, platform: "dingtalk" }, { notice: [{ title: "x" }] });
  answer = null;
  assert.equal(bad.deliveries.ch1.error, "errcode 310000: keywords not in content");
  const custom = await send({ url: `${base}/custom`, body: { msg: { content: "[bot] {text}" }, n: 1 } }, { notice: [{ title: "Hello \"quoted\"" }] });
  assert.equal(custom.deliveries.ch1.ref, `webhook-${custom.id}`);
  assert.deepEqual(got[0]!.body, { msg: { content: `[bot] Hello "quoted" · alerts\nAnswer: agent-autoloop answer ${custom.id} 0` }, n: 1 });
});

test("a webhook that fails with control characters in its answer: the card shows its status and body, those characters removed, not the hub's refusal of them", async () => {
  answer = { status: 500, body: "boom \u001b[31mred\u001b[0m \u009b2J \u202eevil\u2066" };
  const bad = await send({ url: `${base}/slack`, platform: "slack" }, { notice: [{ title: "x" }] });
  answer = null;
  assert.equal(bad.deliveries.ch1.error, "HTTP 500: boom [31mred[0m 2J evil");
});
