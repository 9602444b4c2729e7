/**
 * Tool calls through the hub (issue 16, TOOL-CALLS plan): a real hub over HTTP on 127.0.0.1, a real SQLite file. A
 * run's tool calls are decided by rules.json's approvals (exact plugin+tool, then plugin, then auto;
 * allow_session_keys; disable_model_invocation; the first call of a plugin that is not built in asks once, trusted by
 * plugin name and manifest digest), a `prompt` is an ask card whose answer decides the held call or, after the hold,
 * the next call of the tool in that session and wakes the lane; outcomes, parked async calls and their callbacks are
 * facts. Every answer is checked against its published shape (the fixture's `checkAnswer`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeHome, serveFixture, until, type Fixture, prose } from "./helpers.js";
import { args, builtinPlugins, callBody, digestA, digestB, factRows, lastCallRow, streamCalls, toolRules, whyFacts } from "./tool-calls-helpers.js";
import type { Home } from "../src/host/home.js";
import { toolArgsDigest } from "../src/protocol/tool-calls.js";
import { HubClient, HubError } from "../src/protocol/client.js";
import { timeline } from "../src/cli/why.js";
import type { Job, OwnerCard } from "../src/protocol/responses.js";
import type { ToolCallBody } from "../src/protocol/schema.js";
import { shown } from "../src/i18n/messages.js";

let claims = 0;
/** Posts an `alert.x` event with `subject` and claims its run as worker w1: the job, with its token. */
async function runOf(f: Fixture, subject: string): Promise<Job> {
  claims += 1;
  const posted = await f.call("POST", "/v1/events", f.keys.source, { id: `e${claims}-${subject}`, type: "alert.x", subject });
  assert.equal(posted.status, 200, JSON.stringify(posted.body));
  const job = (await f.call("GET", `/v1/work?claim=c${claims}`, f.keys.worker)).body.job as Job | null;
  assert.ok(job, "a job to claim");
  return job;
}

/** What a test of this file works with: the hub, a client of run tokens, the owner's client, and a run of subject s1. */
interface ToolHub { f: Fixture; client: HubClient; owner: HubClient; job: Job }

/**
 * Starts a hub on `rules` — its registry holding the built-in tool plugins `builtins` (see `builtinPlugins`), its home
 * prepared by `setup` — claims a run of subject s1, runs `body` with them, and closes the hub however it ends.
 */
/** A client whose answers read as the older tests read them: a decision's `reasonText` checked and left out (`prose`). */
function reasoned(client: HubClient): HubClient {
  return new Proxy(client, {
    get(target, name, receiver) {
      const v = Reflect.get(target, name, receiver) as unknown;
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const out = (v as (...a: unknown[]) => unknown).apply(target, args);
        return out instanceof Promise ? out.then((b) => prose(200, b)) : out;
      };
    },
  });
}

async function withToolHub(rules: unknown, body: (h: ToolHub) => Promise<void>, o: { builtins?: Parameters<typeof builtinPlugins>[0]; setup?: (home: Home) => void; clock?: () => number } = {}): Promise<void> {
  const root = builtinPlugins(o.builtins ?? {});
  const made = makeHome(rules);
  o.setup?.(made.home);
  const f = await serveFixture(made, { builtinToolRoot: root, ...(o.clock ? { clock: o.clock } : {}) });
  try {
    await body({ f, client: reasoned(new HubClient(f.url, null)), owner: reasoned(new HubClient(f.url, f.keys.owner)), job: await runOf(f, "s1") });
  } finally {
    await f.close();
    rmSync(root, { recursive: true, force: true });
  }
}

test("each approval path: exact tool, plugin, default, allow_session_keys, disable_model_invocation, not offered, first use, the owner's own calls", async () => {
  // Built in (the hub's registry says so): builtin, search, dangerous, secret (hidden from models), hello-python.
  // Not built in (unknown to the hub): outside, whatever its calls say of it.
  await withToolHub(toolRules([
    { plugin: "hello-python", tool: "hello-python.greet", mode: "prompt", allow_session_keys: ["alerts:ok-*"] },
    { plugin: "dangerous", mode: "deny" },
    { plugin: "search", mode: "auto" },
    { plugin: "outside", mode: "auto" },
    { plugin: "outside", tool: "outside.greet", mode: "prompt", allow_session_keys: ["alerts:ok-*"] },
  ], ["hello-python.greet", "search.*", "dangerous.*", "builtin.*", "secret.*", "outside.*"]), async ({ f, client, owner, job }) => {
    // A plugin the approvals deny whole (dangerous) is named so: the worker never lists its tools (issue 26 round 9);
    // a call naming it is still the hub's to refuse, with the approvals' reason.
    assert.deepEqual([job.tools, job.toolsDenied, job.sessionKey], [["hello-python.greet", "search.*", "dangerous.*", "builtin.*", "secret.*", "outside.*"], ["dangerous"], "alerts:s1"]);
    const call = (b: ToolCallBody) => client.toolCall(job.run, job.token, b);
    assert.deepEqual(await call(callBody("builtin.x")), { call: 1, decision: "allow", sessionKey: "alerts:s1" }, "no entry: auto");
    assert.deepEqual(await call(callBody("search.find")), { call: 2, decision: "allow", sessionKey: "alerts:s1" }, "the plugin's entry: auto");
    assert.deepEqual(await call(callBody("dangerous.rm")), { call: 3, decision: "deny", sessionKey: "alerts:s1", reason: "approvals[1] of rules.json denies dangerous.rm" });
    assert.deepEqual(await call(callBody("secret.wipe")), {
      call: 4, decision: "deny", sessionKey: "alerts:s1", reason: "secret.wipe is hidden from agents (disable_model_invocation = true in its manifest)",
    });
    assert.deepEqual(await call(callBody("other.tool")), { call: 5, decision: "deny", sessionKey: "alerts:s1", reason: "rule alerts does not offer other.tool (see its \"tools\" in rules.json)" });
    const exact = await call(callBody("hello-python.greet"));
    assert.deepEqual([exact.decision, exact.card], ["prompt", 1], "the tool's entry: prompt, with a card");
    const first = await call(callBody("outside.find", { builtIn: true }));
    assert.deepEqual([first.decision, first.card], ["prompt", 2], "the first call of a plugin that is not built in asks, even under auto, whatever its body says");

    // allow_session_keys: the session `alerts:ok-1` needs no approval for the built-in tool; not built in, its first use still asks.
    const ok = await runOf(f, "ok-1");
    assert.deepEqual(await client.toolCall(ok.run, ok.token, callBody("hello-python.greet")), { call: 8, decision: "allow", sessionKey: "alerts:ok-1" });
    assert.equal((await client.toolCall(ok.run, ok.token, callBody("outside.greet", { builtIn: true }))).decision, "prompt");

    // The owner: never prompted, `deny` still refuses, disable_model_invocation does not hide a tool from the owner.
    assert.deepEqual(await owner.ownerToolCall(callBody("hello-python.greet")), { call: 10, decision: "allow", sessionKey: "owner:owner" });
    assert.deepEqual(await owner.ownerToolCall(callBody("dangerous.rm")), { call: 11, decision: "deny", sessionKey: "owner:owner", reason: "approvals[1] of rules.json denies dangerous.rm" });
    assert.deepEqual(await owner.ownerToolCall(callBody("secret.wipe", { disableModelInvocation: true })), { call: 12, decision: "allow", sessionKey: "owner:owner" });

    // The calls are facts, with the session key, the caller, the digest and the decision: never the arguments.
    const row = await lastCallRow(f, job.run, 6);
    assert.deepEqual({ ...row, at: 0 }, {
      id: 6, run: job.run, caller: "agent", by: "bot", plugin: "hello-python", tool: "hello-python.greet", sessionKey: "alerts:s1",
      argsDigest: toolArgsDigest(args), manifestDigest: digestA, builtIn: true, kind: "sync", decision: "prompt", why: "tool", approval: 0, reason: null,
      card: 1, waitUntil: row.at + 60_000, status: "asking", durationMs: null, at: 0, endedAt: null, deadline: null, result: null, reported: null,
    });
    assert.equal((await streamCalls(f)).find((c) => c.id === 10)?.sessionKey, "owner:owner", "the owner's call, in no run's why: on the stream");
    const card = (await f.state()).cards.find((c: OwnerCard) => c.id === 1)!;
    assert.deepEqual([card.title, card.options, card.run, card.lane], ["Allow hello-python.greet?", ["allow once", "always allow", "deny"], job.run, "s1"]);
    assert.equal(card.text, `Run ${job.run} (session alerts:s1) wants to call tool hello-python.greet (kind sync).\nArguments (sorted keys): {"name":"Ada"}\napprovals[0] of rules.json asks you before each call.`);
    // Its words are kept as data too (issue 27 #2): a Chinese client shows them in Chinese.
    const zh = (x: { code?: unknown; params?: unknown } | undefined) => shown("zh", x ?? {}, "");
    assert.deepEqual([zh(card.texts?.title), card.texts?.options?.map(zh)], ["允许 hello-python.greet 吗？", ["允许这一次", "总是允许", "拒绝"]]);
    assert.equal(zh(card.texts?.text), `第 ${job.run} 轮（会话 alerts:s1）要调用工具 hello-python.greet（类型 sync）。\n参数（键已排序）：{"name":"Ada"}\nrules.json 的 approvals[0] 要求每次调用都先问你。`);
    const second = (await f.state()).cards.find((c: OwnerCard) => c.id === 2)!;
    assert.match(second.text, new RegExp(`This is an agent's first call of plugin outside at this version \\(files sha256 ${digestA}\\)`));

    // `why` shows the run's calls.
    const lines = timeline(job.run, (await owner.why(job.run)).facts).map((l) => l.slice(16));
    assert.deepEqual(lines.filter((l) => l.includes("tool ")), [
      "called tool builtin.x: allowed",
      "called tool search.find: allowed",
      "tool dangerous.rm refused: approvals[1] of rules.json denies dangerous.rm",
      "tool secret.wipe refused: secret.wipe is hidden from agents (disable_model_invocation = true in its manifest)",
      "tool other.tool refused: rule alerts does not offer other.tool (see its \"tools\" in rules.json)",
      "wants to call tool hello-python.greet: asks you on card #1",
      "wants to call tool outside.find: asks you on card #2",
    ]);
  }, { builtins: { builtin: {}, search: {}, dangerous: {}, secret: { hidden: true }, "hello-python": {} } });
});

test("trust by plugin and manifest digest: an \"always allow\" answered while the call is held lets it run and later calls through; a changed manifest asks again", async () => {
  await withToolHub(toolRules([], ["search.*"], 30), async ({ f, client, owner, job }) => {
    const first = await client.toolCall(job.run, job.token, callBody("search.find"));
    assert.deepEqual([first.decision, first.card], ["prompt", 1]);
    // The agent's call is held; the owner answers "always allow" meanwhile: the held GET answers allow.
    const held = client.toolCallWait(job.run, job.token, first.call, 20);
    const answered = await owner.answer(1, { choice: 1 });
    assert.deepEqual([answered.card.state, answered.card.choice, answered.card.result], ["closed", 1, "allowed; plugin search is trusted at this manifest"]);
    assert.deepEqual(await held, { call: first.call, decision: "allow", sessionKey: "alerts:s1", card: 1 });
    assert.equal((await f.state()).runs.length, 1, "an answer the held call took wakes no lane");
    // Later calls of the plugin at the same manifest, even of another tool: allowed without asking.
    assert.deepEqual(await client.toolCall(job.run, job.token, callBody("search.other")), { call: 2, decision: "allow", sessionKey: "alerts:s1" });
    // A changed manifest (another digest) asks again.
    const changed = await client.toolCall(job.run, job.token, callBody("search.find", { manifestDigest: digestB }));
    assert.deepEqual([changed.decision, changed.card], ["prompt", 2]);
    // The trust entry is a fact of the run's why (the answer on its card), keyed by plugin and digest.
    const facts = await whyFacts(f, job.run);
    assert.deepEqual({ ...factRows(facts, "trust").get(`search\u0000${digestA}`)!, at: 0 }, { plugin: "search", digest: digestA, card: 1, by: "owner", at: 0 });
    const lines = timeline(job.run, facts).map((l) => l.slice(16));
    assert.ok(lines.includes(`plugin search trusted at files sha256 ${digestA} ("always allow" by you)`), lines.join("\n"));
  });
});

/** Writes declarative plugin `id` with one HTTP tool `tool` into a home's plugins (the hub loads it at its start). */
function httpPlugin(home: Home, id: string, tool: string): void {
  mkdirSync(join(home.plugins, id, "tools"), { recursive: true });
  writeFileSync(join(home.plugins, id, "plugin.json"), JSON.stringify({ id, name: id, version: "0.1.0", apiVersion: "1.0", requires: { network: ["127.0.0.1"] }, provides: { tools: [tool] } }));
  writeFileSync(join(home.plugins, id, "tools", `${tool}.json`), JSON.stringify({ name: tool, description: "d", parameters: { type: "object" }, http: { url: "http://127.0.0.1:9/x" } }));
}

test("kind http (issue 18): with no approvals entry an agent's call of a declarative HTTP tool asks, the card names the kind; always allow after the hold trusts it and leaves no grant; an entry or the owner's own call is not asked", async () => {
  await withToolHub(toolRules([{ plugin: "feeds", mode: "deny" }], ["weather.*", "feeds.*", "clock.*"], 0), async ({ f, client, owner, job }) => {
    // What the call's body says of the plugin (built in, kind sync) is not what the hub decides by: its catalog's.
    const lying = (tool: string, o: Partial<ToolCallBody> = {}) => callBody(tool, { kind: "sync", builtIn: true, ...o });
    const first = await client.toolCall(job.run, job.token, lying("weather.now"));
    assert.deepEqual([first.decision, first.card], ["prompt", 1]);
    const row = await lastCallRow(f, job.run, first.call);
    assert.deepEqual([row.kind, row.builtIn, row.why], ["http", false, "default"]);
    const card = (await f.state()).cards.find((c: OwnerCard) => c.id === 1)!;
    // Where it sends is said as the hub's catalog holds it, though the body said nothing of it.
    assert.equal(card.text, `Run ${job.run} (session alerts:s1) wants to call tool weather.now (kind http).\nArguments (sorted keys): {"name":"Ada"}\n`
      + `Sends requests only to (requires.network): 127.0.0.1\n`
      + `No entry of rules.json's approvals names plugin weather: tools of kind http ask you first by default. "Always allow" trusts it (sha256 ${digestA}) until its definitions change.`);
    // A built-in plugin of another kind, no entry: runs at once.
    assert.equal((await client.toolCall(job.run, job.token, callBody("clock.now", { kind: "http" }))).decision, "allow");
    // An entry decides an http tool as any other; the owner is not asked about their own call.
    assert.deepEqual(await client.toolCall(job.run, job.token, lying("feeds.read")), { call: 3, decision: "deny", sessionKey: "alerts:s1", reason: "approvals[0] of rules.json denies feeds.read" });
    assert.equal((await owner.ownerToolCall(lying("weather.now"))).decision, "allow");
    // Answered after the hold (0 s): "always allow" trusts the plugin at this digest, and no one-use grant is kept.
    await owner.answer(1, { choice: 1 });
    assert.equal(factRows(await whyFacts(f, job.run), "grants").get(`alerts:s1\u0000weather.now\u0000${digestA}\u0000${toolArgsDigest(args)}`), undefined, "the answer on the run's card wrote no grant");
    const next = await client.toolCall(job.run, job.token, lying("weather.now"));
    assert.deepEqual([next.decision, next.card, (await lastCallRow(f, job.run, next.call)).why], ["allow", undefined, "default"]);
    // Another digest asks again.
    assert.equal((await client.toolCall(job.run, job.token, lying("weather.now", { manifestDigest: digestB }))).decision, "prompt");
  }, { builtins: { clock: {} }, setup: (home) => httpPlugin(home, "weather", "now") });
});

test("the hub decides by its own registry, never by the builtIn, kind or disableModelInvocation a run token's holder sends (issue 26, finding 8)", async () => {
  // The reported case: a body saying builtIn: true made an agent's first call of a plugin of the home `allow` (the
  // tool host would have asked). Varied: a hidden tool said not hidden, a declarative HTTP tool said built in and of
  // kind sync, a plugin the hub does not know said built in (it may be a worker's elsewhere: not built in then, but
  // hidden when its caller says so), and a built-in plugin said to be none of that.
  const tools = (home: Home) => {
    for (const [name, extra] of [["mine", ""], ["secret", "[capabilities]\ndisable_model_invocation = true\n"]]) {
      mkdirSync(join(home.plugins, name), { recursive: true });
      writeFileSync(join(home.plugins, name, "manifest.toml"), `name = "${name}"\nversion = "0.1.0"\nplugin_type = "sync"\n\n[entry_point]\ncommand = "true"\n\n${extra}`);
    }
    httpPlugin(home, "web", "get");
    // An HTTP tool that sends its credential to a URL the agent chooses: denied by the hub's catalog, whatever the
    // body says of its reach (here: nothing).
    const creds = join(home.plugins, "creds");
    mkdirSync(join(creds, "tools"), { recursive: true });
    writeFileSync(join(creds, "plugin.json"), JSON.stringify({ id: "creds", name: "creds", version: "0.1.0", apiVersion: "1.0", requires: { network: ["127.0.0.1"] }, provides: { tools: ["fetch"], settings: ["token"] } }));
    writeFileSync(join(creds, "settings.json"), JSON.stringify([{ key: "token", label: "Token", type: "secret" }]));
    writeFileSync(join(creds, "tools", "fetch.json"), JSON.stringify({ name: "fetch", description: "d", parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] }, http: { url: "{{param.url}}", authRef: "token" } }));
  };
  await withToolHub(toolRules([], ["mine.*", "secret.*", "web.*", "elsewhere.*", "core.*", "creds.*"], 30), async ({ f, client, job }) => {
    const claim = { builtIn: true, kind: "sync", disableModelInvocation: false } as const;
    const decided = async (tool: string, o: Partial<ToolCallBody> = claim) => {
      const d = await client.toolCall(job.run, job.token, callBody(tool, o));
      const row = await lastCallRow(f, job.run, d.call);
      return [d.decision, row.why, row.builtIn, row.kind, row.status];
    };
    assert.deepEqual(await decided("mine.greet"), ["prompt", "firstUse", false, "sync", "asking"]);
    assert.deepEqual(await decided("secret.wipe"), ["deny", "hidden", false, "sync", "denied"]);
    assert.deepEqual(await decided("web.get"), ["prompt", "default", false, "http", "asking"]);
    assert.deepEqual(await decided("elsewhere.run"), ["prompt", "firstUse", false, "sync", "asking"]);
    assert.deepEqual(await decided("elsewhere.run", { ...claim, disableModelInvocation: true }), ["deny", "hidden", false, "sync", "denied"]);
    assert.deepEqual(await decided("core.tick", { builtIn: false, kind: "http", disableModelInvocation: false }), ["allow", "default", true, "sync", "allowed"]);
    assert.deepEqual(await decided("creds.fetch"), ["deny", "credentialAnyUrl", false, "http", "denied"]);
    assert.deepEqual(await decided("creds.fetch", { ...claim, http: { network: ["127.0.0.1"], authRef: null, anyUrl: false } }), ["deny", "credentialAnyUrl", false, "http", "denied"]);
    // The cards say what the hub knows: the HTTP tool's kind, not the one its caller gave.
    const texts = (await f.state()).cards.map((c: OwnerCard) => c.text.split("\n")[0]);
    assert.deepEqual(texts, [
      `Run ${job.run} (session alerts:s1) wants to call tool mine.greet (kind sync).`,
      `Run ${job.run} (session alerts:s1) wants to call tool web.get (kind http).`,
      `Run ${job.run} (session alerts:s1) wants to call tool elsewhere.run (kind sync).`,
    ]);
  }, { builtins: { core: {} }, setup: tools });
});

test("answers after the hold: allow once leaves a one-use grant, also for a first use; always allow of a first use trusts instead, of an approvals prompt leaves a grant; a deny entry's allow_session_keys let nothing through", async () => {
  const approvals = [{ plugin: "files", tool: "files.write", mode: "prompt" }, { plugin: "blocked", mode: "deny", allow_session_keys: ["alerts:*"] }];
  await withToolHub(toolRules(approvals, ["files.*", "search.*", "maps.*", "blocked.*"], 0), async ({ f, client, owner, job }) => {
    // A grant is written by the answer on a card of the run: its why carries the grant's row (null once spent).
    const grant = async (tool: string) => factRows(await whyFacts(f, job.run), "grants").get(`alerts:s1\u0000${tool}\u0000${digestA}\u0000${toolArgsDigest(args)}`);
    const answeredAfter = async (body: ToolCallBody, choice: number) => {
      const d = await client.toolCall(job.run, job.token, body);
      assert.equal(d.decision, "prompt", body.tool);
      await owner.answer(d.card!, { choice });
      return d.card!;
    };
    assert.equal((await client.toolCall(job.run, job.token, callBody("blocked.rm", { builtIn: true }))).decision, "deny");
    // Allow once of a first use: a grant; the next call passes on it, the one after asks again.
    const once = await answeredAfter(callBody("search.find"), 0);
    assert.deepEqual((await grant("search.find"))?.decision, "allow");
    const next = await client.toolCall(job.run, job.token, callBody("search.find"));
    assert.deepEqual([next.decision, next.card, (await lastCallRow(f, job.run, next.call)).why], ["allow", once, "grant"]);
    assert.equal((await client.toolCall(job.run, job.token, callBody("search.find"))).decision, "prompt");
    // Always allow of a first use: trust, no grant.
    await answeredAfter(callBody("maps.route"), 1);
    assert.equal(await grant("maps.route"), undefined);
    assert.equal((await lastCallRow(f, job.run, (await client.toolCall(job.run, job.token, callBody("maps.route"))).call)).why, "default");
    // Always allow of an approvals entry's prompt: the entry asks every call, so the answer is a one-use grant.
    const always = await answeredAfter(callBody("files.write", { builtIn: true }), 1);
    assert.deepEqual((await grant("files.write"))?.decision, "allow");
    const write = await client.toolCall(job.run, job.token, callBody("files.write", { builtIn: true }));
    assert.deepEqual([write.decision, write.card], ["allow", always]);
  });
});

test("a prompt answered after the hold: the agent was told to end its turn, the answer wakes the lane and the next call passes once (allow once) or is denied once", async () => {
  await withToolHub(toolRules([{ plugin: "files", tool: "files.write", mode: "prompt" }], ["files.*"], 0), async ({ f, client, owner, job }) => {
    const body = callBody("files.write", { builtIn: true });
    const first = await client.toolCall(job.run, job.token, body);
    assert.equal(first.decision, "prompt");
    assert.deepEqual(await client.toolCallWait(job.run, job.token, first.call, 5), first, "no hold: the call is awaiting approval at once");
    assert.equal((await lastCallRow(f, job.run, first.call)).status, "awaiting_approval");
    // The agent ends its turn; the owner answers "allow once": the lane gets a run that continues the session.
    assert.equal((await client.result(job.run, job.token, { outcome: "done", session: "sess-1" })).rejected.length, 0);
    await owner.answer(first.card!, { choice: 0 });
    const next = (await f.call("GET", "/v1/work?claim=next1", f.keys.worker)).body.job as Job;
    assert.deepEqual([next.session, next.context.answers.map((a) => [a.card, a.choice])], ["sess-1", [[first.card, 0]]]);
    assert.deepEqual(await client.toolCall(next.run, next.token, body), { call: 2, decision: "allow", sessionKey: "alerts:s1", card: first.card }, "the repeated call passes");
    const again = await client.toolCall(next.run, next.token, body);
    assert.deepEqual([again.decision, again.card], ["prompt", 2], "allow once is spent by one call");
    // Denied after the hold: the next call is denied once, then asked again.
    await client.result(next.run, next.token, { outcome: "done" });
    await owner.answer(again.card!, { choice: 2 });
    const third = (await f.call("GET", "/v1/work?claim=next2", f.keys.worker)).body.job as Job;
    assert.deepEqual(await client.toolCall(third.run, third.token, body), { call: 4, decision: "deny", sessionKey: "alerts:s1", card: 2, reason: "the owner denied files.write on card 2" });
    assert.equal((await client.toolCall(third.run, third.token, body)).decision, "prompt");
    // A text answer is refused: the card takes its options only.
    const text = await f.call("POST", `/v1/cards/3/answer`, f.keys.owner, { text: "sure" });
    assert.deepEqual([text.status, text.body], [400, { error: "this card takes one of its options: 0 allow once, 1 always allow, 2 deny" }]);
  });
});

test("a held call whose hold runs out is awaiting approval (the timer's deadline); a denied answer while held denies it", async () => {
  await withToolHub(toolRules([{ plugin: "files", mode: "prompt" }], ["files.*"], 1), async ({ f, client, owner, job }) => {
    const body = callBody("files.write", { builtIn: true });
    const first = await client.toolCall(job.run, job.token, body);
    // Asked to wait longer than the hold: answered at the hold's end, still a prompt.
    assert.deepEqual(await client.toolCallWait(job.run, job.token, first.call, 30), first);
    await until(async () => (await lastCallRow(f, job.run, first.call)).status === "awaiting_approval");
    const second = await client.toolCall(job.run, job.token, body);
    const held = client.toolCallWait(job.run, job.token, second.call, 30);
    await owner.answer(second.card!, { choice: 2 });
    assert.deepEqual(await held, { call: second.call, decision: "deny", sessionKey: "alerts:s1", card: second.card, reason: `the owner denied files.write on card ${second.card}` });
    assert.equal((await lastCallRow(f, job.run, second.call)).status, "denied");
  });
});

test("a call read past its deadline (a parked task's, a hold's) answers only once the timer recorded it (CI of a205e44: `plugins invoke` said timeout, `status` read just after did not count it)", async () => {
  // The hub's clock jumps past both deadlines while its timer still sleeps (armed for 60 s): the read itself has the
  // due round run, so what the caller is told is already recorded when it acts on it.
  let skewMs = 0;
  await withToolHub(toolRules([{ plugin: "jobs", mode: "auto" }, { plugin: "asks", mode: "prompt" }], ["jobs.*", "asks.*"], 30), async ({ f, client, job }) => {
    const parked = (await client.toolCall(job.run, job.token, callBody("jobs.run"))).call;
    await client.toolCallOutcome(job.run, job.token, parked, { status: "parked", durationMs: 1, taskId: "clock-task-000000001", timeoutMs: 60_000 });
    assert.deepEqual(await client.toolCallResult(job.run, job.token, parked, 0), { status: "pending" });
    const asking = await client.toolCall(job.run, job.token, callBody("asks.run"));
    assert.equal((await lastCallRow(f, job.run, asking.call)).status, "asking");
    skewMs = 31_000; // past the hold (30 s), not the task's deadline
    assert.deepEqual(await client.toolCallWait(job.run, job.token, asking.call, 0), asking);
    assert.deepEqual([(await lastCallRow(f, job.run, asking.call)).status, (await lastCallRow(f, job.run, parked)).status], ["awaiting_approval", "parked"]);
    skewMs = 61_000;
    assert.deepEqual(await client.toolCallResult(job.run, job.token, parked, 0), { status: "timeout" });
    assert.equal((await lastCallRow(f, job.run, parked)).status, "timeout");
    assert.deepEqual((await f.state()).toolCalls.filter((c) => c.plugin === "jobs"), [{ plugin: "jobs", status: "timeout", count: 1 }]);
  }, { builtins: { jobs: {}, asks: {} }, clock: () => Date.now() + skewMs });
});

test("outcomes, parked async calls and their callbacks: 200, then 404; unknown 404; past the deadline 410 and a timeout; the legacy path; replays", async () => {
  // the plugin jobs calls back on the legacy path (no key): it opts in (hostile round 37, F37b-3)
  await withToolHub(toolRules([{ plugin: "jobs", mode: "auto", legacy_callbacks: true }], ["jobs.*"]), async ({ f, client, owner, job }) => {
    const call = async () => (await client.toolCall(job.run, job.token, callBody("jobs.run"))).call;
    const status = async (id: number) => (await lastCallRow(f, job.run, id)).status;
    const refusal = (e: unknown) => e instanceof HubError ? [e.status, e.error] : e;

    const sync = await call();
    assert.deepEqual(await client.toolCallOutcome(job.run, job.token, sync, { status: "ok", durationMs: 12 }), { ok: true });
    assert.deepEqual(await client.toolCallOutcome(job.run, job.token, sync, { status: "ok", durationMs: 12 }), { ok: true }, "the same report again");
    assert.deepEqual(await client.toolCallOutcome(job.run, job.token, sync, { status: "error", durationMs: 3 }).catch(refusal), [409, `tool call ${sync} already ended as ok`]);
    assert.deepEqual(await client.toolCallResult(job.run, job.token, sync, 0).catch(refusal), [409, `tool call ${sync} was never parked: it has no result to wait for`]);

    // Parked: the hub keeps the HMAC of the task id; the callback completes it and the waiting caller gets the result.
    const task = "task_0123456789abcdef";
    const parked = await call();
    assert.deepEqual(await client.toolCallOutcome(job.run, job.token, parked, { status: "parked", durationMs: 40, taskId: task, timeoutMs: 60_000 }), { ok: true });
    assert.deepEqual(await client.toolCallResult(job.run, job.token, parked, 0), { status: "pending" });
    const waiting = client.toolCallResult(job.run, job.token, parked, 30);
    assert.deepEqual(await client.pluginCallback(task, { status: "success", result: { content: "done" } }), { ok: true });
    assert.deepEqual(await waiting, { status: "ok", result: { content: "done" } });
    assert.deepEqual([await client.pluginCallback(task, { status: "success", result: {} }).catch(refusal)], [[410, "this task has already ended (ok): a callback cannot change it"]], "completed: 410 (issue 34)");
    assert.deepEqual(await client.pluginCallback("task_unknown_0000000", { status: "success" }).catch(refusal), [404, "no such task"]);
    assert.deepEqual((await f.call("POST", "/v1/plugins/callback/a%20b", null, { status: "success" })).status, 404, "not even a task id");

    // The legacy path, an error result.
    const legacy = await call();
    await client.toolCallOutcome(job.run, job.token, legacy, { status: "parked", durationMs: 5, taskId: "legacy-task-000000001" });
    assert.deepEqual((await f.call("POST", "/plugin-callback/legacy-task-000000001", null, { status: "error", error: { code: -32000, message: "disk full" } })).body, { ok: true });
    assert.deepEqual(await client.toolCallResult(job.run, job.token, legacy, 0), { status: "error", error: { code: -32000, message: "disk full" } });

    // Past its deadline: 410, and the call has failed with a timeout (the timer's deadline).
    const late = await call();
    await client.toolCallOutcome(job.run, job.token, late, { status: "parked", durationMs: 5, taskId: "late-task-00000000001", timeoutMs: 1 });
    await until(async () => (await status(late)) === "timeout");
    assert.deepEqual(await client.pluginCallback("late-task-00000000001", { status: "success" }).catch(refusal), [410, "this task's deadline has passed: the call already failed with a timeout"]);
    assert.deepEqual(await client.toolCallResult(job.run, job.token, late, 5), { status: "timeout" });

    // Refused reports: a parked call without a task id, a task id without parking, a task id used twice, a call of
    // another run, a call that was not allowed.
    const more = await call();
    assert.deepEqual(await client.toolCallOutcome(job.run, job.token, more, { status: "parked", durationMs: 1 }).catch(refusal), [400, "taskId: required when status is parked"]);
    assert.deepEqual(await client.toolCallOutcome(job.run, job.token, more, { status: "ok", durationMs: 1, taskId: task }).catch(refusal), [400, "taskId: only with status parked"]);
    // A task id a parked call holds cannot be reached by another call without its own callback key (issue 34 #3: once
    // that task ends, the id is free again).
    const holder = await call();
    await client.toolCallOutcome(job.run, job.token, holder, { status: "parked", durationMs: 1, taskId: "held-task-000000001", timeoutMs: 600_000 });
    assert.deepEqual(await client.toolCallOutcome(job.run, job.token, more, { status: "parked", durationMs: 1, taskId: "held-task-000000001" }).catch(refusal), [409, "this task id is already in use: each async task needs its own"]);
    assert.deepEqual((await f.call("POST", `/v1/runs/${job.run}/tools/calls/${more}/outcome`, job.token, { status: "parked", durationMs: 1, taskId: "a/b" })).body, { error: `taskId: wrong format, expected 1 to 200 of A-Z a-z 0-9 . _ ~ -` });
    const other = await runOf(f, "s2");
    assert.deepEqual(await client.toolCallOutcome(other.run, other.token, more, { status: "ok", durationMs: 1 }).catch(refusal), [404, `no tool call ${more}`]);
    assert.deepEqual(await owner.ownerToolCallOutcome(more, { status: "ok", durationMs: 1 }).catch(refusal), [404, `no tool call ${more}`], "an agent's call is not the owner's");
    const denied = (await client.toolCall(job.run, job.token, callBody("nope.x"))).call;
    assert.deepEqual(await client.toolCallOutcome(job.run, job.token, denied, { status: "ok", durationMs: 1 }).catch(refusal), [409, `tool call ${denied} was not allowed (denied): it has no outcome to report`]);

    // Ended calls are counted by plugin and status for today.
    await client.toolCallOutcome(job.run, job.token, more, { status: "oom", durationMs: 1 });
    const s = await f.state();
    assert.deepEqual(s.toolCalls, [{ plugin: "jobs", status: "error", count: 1 }, { plugin: "jobs", status: "ok", count: 2 }, { plugin: "jobs", status: "oom", count: 1 }, { plugin: "jobs", status: "timeout", count: 1 }, { plugin: "nope", status: "denied", count: 1 }]);
    // A run that ended takes no more calls.
    await client.result(job.run, job.token, { outcome: "done" });
    assert.deepEqual(await call().catch(refusal), [409, `run ${job.run} has ended: its tool calls are not accepted`]);
  }, { builtins: { jobs: {} } });
});

test("hostile callback bodies are refused naming the field and change nothing: huge, deep, wrong types", async () => {
  await withToolHub(toolRules([{ plugin: "jobs", mode: "auto", legacy_callbacks: true }], ["jobs.*"]), async ({ f, client, job }) => {
    const id = (await client.toolCall(job.run, job.token, callBody("jobs.run"))).call;
    const task = "hostile-task-0000001";
    await client.toolCallOutcome(job.run, job.token, id, { status: "parked", durationMs: 1, taskId: task, timeoutMs: 600_000 });
    const seq = (await f.state()).seq;
    const post = (raw: string) => f.call("POST", `/v1/plugins/callback/${task}`, null, undefined, raw);
    const deep = (n: number) => `{"status":"success","result":${"[".repeat(n)}${"]".repeat(n)}}`;
    const cases: [string, number, unknown][] = [
      [deep(65), 400, { error: "result: nested deeper than 64 levels" }],
      [deep(400_000), 400, { error: "result: nested deeper than 64 levels" }],
      [`{"status":"success","result":"${"x".repeat(262_144)}"}`, 400, { error: "result: larger than 262144 bytes" }],
      [`{"status":"success","result":"${"x".repeat(1024 * 1024)}"}`, 413, { error: "the request body is larger than 1048576 bytes" }],
      ['{"status":"error","error":{"code":{"a":1},"message":"m"}}', 400, { error: "error.code: must be integer,string" }],
      ['{"status":"error","error":{"code":1,"message":["m"]}}', 400, { error: "error.message: must be string" }],
      ['{"status":"error","error":{"code":1,"message":"\\u001b[2Jgone"}}', 400, { error: "error.message: wrong format, expected no control characters except line breaks and tabs" }],
      [`["${"x".repeat(262_144)}"]`, 400, { error: "result: larger than 262144 bytes" }],
      [`${"[".repeat(65)}${"]".repeat(65)}`, 400, { error: "result: nested deeper than 64 levels" }],
      ['{"status":"success"', 400, { error: "the request body is not valid JSON" }],
    ];
    for (const [raw, status, body] of cases) assert.deepEqual([(await post(raw)).status, (await post(raw)).body], [status, body], raw.slice(0, 60));
    assert.equal((await f.state()).seq, seq, "no refusal wrote a fact");
    // A deep result within the limit, and fields a plugin adds beyond the contract, are taken.
    assert.deepEqual((await post(`{"status":"success","task_id":"${task}","result":${deep(63).slice(29, -1)}}`)).body, { ok: true });
    assert.deepEqual(await client.toolCallResult(job.run, job.token, id, 0), { status: "ok", result: JSON.parse(deep(63).slice(29, -1)) });
    // `{"status":"error"}` without `error` is taken, as corlinman takes any body (issue 34 #4): an error without details
    const second = (await client.toolCall(job.run, job.token, callBody("jobs.run"))).call;
    await client.toolCallOutcome(job.run, job.token, second, { status: "parked", durationMs: 1, taskId: "hostile-task-0000002", timeoutMs: 600_000 });
    assert.deepEqual((await f.call("POST", "/v1/plugins/callback/hostile-task-0000002", null, undefined, '{"status":"error"}')).body, { ok: true });
    assert.deepEqual(await client.toolCallResult(job.run, job.token, second, 0), { status: "error", error: { code: "error", message: "the plugin's callback said error without saying what went wrong" } });
  }, { builtins: { jobs: {} } });
});


test("calls refused by the caller's tool host before the hub decided (unknown plugin or tool, bad arguments, not offered) are recorded denied with their reason, for agent and owner; bad refusal bodies change nothing", async () => {
  await withToolHub(toolRules([{ plugin: "nope", mode: "auto" }], ["hello-python.greet"]), async ({ f, client, owner, job }) => {
    const refusal = (tool: string, code: string, reason: string): ToolCallBody => ({ tool, argsDigest: toolArgsDigest(args), preview: '{"name":"Ada"}', refused: { code, reason } });
    assert.deepEqual(await client.toolCall(job.run, job.token, refusal("nope.x", "tools.not_offered", "nope.x is not one of the tools this run is offered")), {
      call: 1, decision: "deny", sessionKey: "alerts:s1", reason: "tools.not_offered: nope.x is not one of the tools this run is offered",
    }, "an auto approval does not let a refused call through");
    assert.deepEqual(await owner.ownerToolCall(refusal("nope.greet", "tools.unknown_plugin", "no plugin nope")), {
      call: 2, decision: "deny", sessionKey: "owner:owner", reason: "tools.unknown_plugin: no plugin nope",
    });
    // The owner's call is in no run's why: the stream carries its row.
    const row = (await streamCalls(f)).find((c) => c.id === 2)!;
    assert.deepEqual({ ...row, at: 0, endedAt: 0 }, {
      id: 2, run: null, caller: "owner", by: "owner", plugin: "nope", tool: "nope.greet", sessionKey: "owner:owner", argsDigest: toolArgsDigest(args),
      manifestDigest: "", builtIn: false, decision: "deny", why: "refused", approval: null, reason: "tools.unknown_plugin: no plugin nope",
      card: null, waitUntil: null, status: "denied", durationMs: null, at: 0, endedAt: 0, deadline: null, result: null, reported: null,
    });
    assert.deepEqual((await f.state()).toolCalls, [{ plugin: "nope", status: "denied", count: 2 }]);
    const lines = timeline(job.run, (await owner.why(job.run)).facts).map((l) => l.slice(16));
    assert.deepEqual(lines.filter((l) => l.includes("tool ")), ["tool nope.x refused: this run is not offered that tool"]);

    // Bad bodies: refused, naming the field; nothing written.
    const seq = (await f.state()).seq;
    const bad = async (b: unknown) => {
      const r = await f.call("POST", "/v1/tools/calls", f.keys.owner, b);
      return [r.status, r.body];
    };
    const { manifestDigest: _m, ...noDigest } = callBody("nope.greet");
    assert.deepEqual(await bad(noDigest), [400, { error: "manifestDigest: required" }]);
    assert.deepEqual(await bad({ ...refusal("nope.greet", "c", "r"), refused: { code: "c" } }), [400, { error: "refused.reason: required" }]);
    assert.deepEqual((await bad({ ...refusal("nope.greet", "c", "r"), refused: { code: "c", reason: "r", more: 1 } }))[0], 400);
    assert.deepEqual((await bad(refusal("nope.greet", "bad code", "r")))[0], 400);
    assert.deepEqual((await bad(refusal("nope.greet", "c", "")))[0], 400);
    assert.deepEqual((await bad(refusal("nope.greet", "c", "\u001b[2J")))[0], 400);
    assert.equal((await f.state()).seq, seq, "no refusal wrote a fact");
  });
});

test("issue 26 round 5, F2: a receipt's ask keyed like the hub's own approval cards (toolCall:<n>) does not take the key of the next approval in its lane; the hub's cards live in a namespace receipts cannot write", async () => {
  await withToolHub(toolRules([{ plugin: "hello-python", tool: "hello-python.greet", mode: "prompt" }], ["hello-python.greet"]), async ({ f, client, job }) => {
    // The planting run of lane s1 asks with the keys the hub gives the approval cards of calls 1 to 3.
    const plant = { outcome: "done", ask: [1, 2, 3].map((n) => ({ title: `placeholder ${n}`, options: ["a"], key: `toolCall:${n}` })) };
    const ended = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, plant);
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    const next = await runOf(f, "s1");
    assert.equal(next.sessionKey, "alerts:s1", "the same lane");
    const asked = await client.toolCall(next.run, next.token, callBody("hello-python.greet"));
    assert.deepEqual([asked.call, asked.decision, asked.card], [1, "prompt", 4], "the approval gets its card (no 500 invariant tool-card-created)");
    const cards = (await f.state()).cards.filter((c: OwnerCard) => c.lane === "s1").map((c: OwnerCard) => [c.id, c.title]);
    assert.deepEqual(cards, [[1, "placeholder 1"], [2, "placeholder 2"], [3, "placeholder 3"], [4, "Allow hello-python.greet?"]]);
    // The other way round: the open approval card does not swallow an agent's ask with its key (the agent's own card
    // of that key closed first).
    assert.equal((await f.call("POST", "/v1/cards/1/resolve", f.keys.owner, {})).status, 200);
    const again = await f.call("POST", `/v1/runs/${next.run}/result`, next.token, { outcome: "done", ask: [{ title: "mine", options: ["a"], key: "toolCall:1" }] });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.ok((await f.state()).cards.some((c: OwnerCard) => c.title === "mine"), "the agent's own card was made");
  }, { builtins: { "hello-python": {} } });
});
