/**
 * Issue 26 #11: a declarative HTTP tool's credential. Redaction replaces the credential's value where an answer echoes
 * it as it is, and cannot catch it transformed (base64, split, lower-cased, reversed, `\u`-escaped as text/plain) — so
 * the owner decides knowing: the approval card of an HTTP tool names the declared hosts and the authRef sent with each
 * request, and an agent's call of a tool whose whole url is the agent's to choose and that sends a credential is
 * denied unless an approvals entry naming the tool says `credential_any_url: true`. A real tool host and declarative
 * catalog, a local echo server on 127.0.0.1, and a real hub over HTTP deciding the calls as the tool bridge asks.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ToolHost, ToolRegistry } from "../src/tools/index.js";
import { DeclarativeCatalog } from "../src/declarative/index.js";
import { localServer, minimalManifest, writeFiles } from "./declarative-helpers.js";
import { hubFixture, tempDir, type Fixture } from "./helpers.js";
import { toolRules } from "./tool-calls-helpers.js";
import { toolArgsFields } from "../src/protocol/tool-calls.js";
import { HubClient } from "../src/protocol/client.js";
import { parseRules } from "../src/protocol/rules-file.js";
import type { Job, OwnerCard } from "../src/protocol/responses.js";
import type { ToolCallBody } from "../src/protocol/schema.js";

const cleanup: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

const token = "s3cret-Token";
/** Echoes the credential it got, transformed as the hosts did, each as text/plain. */
const transforms: Record<string, (s: string) => string> = {
  base64: (s) => Buffer.from(s).toString("base64"),
  split: (s) => s.split("").join(" "),
  lower: (s) => s.toLowerCase(),
  reversed: (s) => [...s].reverse().join(""),
  escaped: (s) => [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""),
};
const echo = await localServer((req, res) => {
  const got = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
  // Round 29, F29b-1: the credential in a redirect's target (an OAuth-style "back to the app with the token").
  const to = req.url === "/scheme" ? `myapp://cb?token=${got}` : req.url === "/host" ? `http://${got}.example.org/x` : null;
  if (to !== null) {
    res.writeHead(302, { location: to });
    res.end();
    return;
  }
  // Round 57, F57a-5: JSON's `\/` escape of a credential with a slash (PHP's json_encode), in a text/plain answer.
  const f = req.url === "/jsonslash" ? (s: string) => `{"auth":"Bearer ${s.replace(/\//g, "\\/")}"}` : transforms[req.url.slice(1)] ?? ((s: string) => s);
  res.writeHead(200, { "content-type": "text/plain" });
  res.end(f(got));
});
cleanup.push(() => echo.close());

const root = tempDir("aa-decl-cred-");
cleanup.push(() => rmSync(root, { recursive: true, force: true }));
const str = { type: "string" };
writeFiles(join(root, "web"), {
  "plugin.json": minimalManifest("web", { requires: { network: [`127.0.0.1:${echo.port}`, "api.example.com"] }, provides: { tools: ["fetch", "status", "open"] } }),
  // The agent fills in the whole url, and the credential goes with it.
  "tools/fetch.json": { name: "fetch", parameters: { type: "object", properties: { url: str }, required: ["url"] }, http: { url: "{{param.url}}", authRef: "env:WEB_TOKEN" } },
  // A fixed host and path: the credential goes where the plugin says.
  "tools/status.json": { name: "status", parameters: { type: "object" }, http: { url: `${echo.url}/plain`, authRef: "env:WEB_TOKEN" } },
  // The agent fills in the whole url, no credential.
  "tools/open.json": { name: "open", parameters: { type: "object", properties: { url: str }, required: ["url"] }, http: { url: "{{param.url}}" } },
});
const catalog = new DeclarativeCatalog({ roots: [{ dir: root, origin: "home" }], lang: "en", env: { WEB_TOKEN: token } });
assert.deepEqual((await catalog.reload()).loaded, ["web"]);
const host = new ToolHost(new ToolRegistry([], "en"), { lang: "en", data: catalog });
cleanup.push(() => host.close());

/** A hub whose rule offers `web.*` with these approvals and no hold, and a claimed run. */
async function hubWith(approvals: unknown[]): Promise<{ f: Fixture; job: Job; client: HubClient; owner: HubClient }> {
  const f = await hubFixture(toolRules(approvals, ["web.*"], 0));
  cleanup.push(() => f.close());
  await f.call("POST", "/v1/events", f.keys.source, { id: "c1", type: "alert.x", subject: "s1" });
  const job = (await f.call("GET", "/v1/work?claim=c1", f.keys.worker)).body.job as Job;
  return { f, job, client: new HubClient(f.url, null), owner: new HubClient(f.url, f.keys.owner) };
}

/** Asks the hub about an agent's call as the tool bridge does (the tool host's check first); runs it when allowed. */
async function agentCall(h: { job: Job; client: HubClient }, tool: string, args: Record<string, unknown>) {
  const c = await host.check(tool, args);
  assert.ok(c.ok, JSON.stringify(c));
  const body = { tool, ...toolArgsFields(args), manifestDigest: c.digest, builtIn: c.builtIn, disableModelInvocation: c.disableModelInvocation, kind: c.pluginType, ...(c.http ? { http: c.http } : {}) } as ToolCallBody;
  const d = await h.client.toolCall(h.job.run, h.job.token, body);
  return { d, run: d.decision === "allow" ? await host.call(tool, args, { sessionKey: d.sessionKey }) : null };
}

async function cardText(f: Fixture, id: number): Promise<string> {
  const s = await f.state();
  return ([...s.cards, ...s.recentCards].find((c) => c.id === id) as OwnerCard).text;
}

test("issue 26 #11: redaction catches the credential as it is, never transformed: the limit the README states", async () => {
  for (const [path, f] of Object.entries(transforms)) {
    const o = await host.call("web.fetch", { url: `${echo.url}/${path}` }, { sessionKey: "owner:test" });
    assert.deepEqual(o.status === "ok" && o.result, f(token), path);
  }
  const plain = await host.call("web.fetch", { url: `${echo.url}/plain` }, { sessionKey: "owner:test" });
  assert.equal(plain.status === "ok" && plain.result, "[redacted]");
});

test("issue 26 round 57, F57a-5 (reported case: a credential with a slash echoed JSON-escaped as `\\/` reached the agent): redaction catches the credential as a JSON string writes it, whatever the answer's type", async () => {
  const slashed = "s3cret/To-ken";
  const other = new DeclarativeCatalog({ roots: [{ dir: root, origin: "home" }], lang: "en", env: { WEB_TOKEN: slashed } });
  assert.deepEqual((await other.reload()).loaded, ["web"]);
  const h = new ToolHost(new ToolRegistry([], "en"), { lang: "en", data: other });
  try {
    const o = await h.call("web.fetch", { url: `${echo.url}/jsonslash` }, { sessionKey: "owner:test" });
    assert.equal(o.status === "ok" && o.result, '{"auth":"Bearer [redacted]"}');
  } finally {
    await h.close();
  }
});

test("issue 26 r29 F29b-1 (reported case: a declared host redirects to myapp://cb?token=<credential>, or to http://<credential>.example.org/): the error the call returns names the target with the credential redacted", async () => {
  const scheme = await host.call("web.status", {}, { sessionKey: "owner:test" });
  assert.equal(scheme.status, "ok", "the fixed tool itself");
  const viaScheme = await host.call("web.fetch", { url: `${echo.url}/scheme` }, { sessionKey: "owner:test" });
  const viaHost = await host.call("web.fetch", { url: `${echo.url}/host` }, { sessionKey: "owner:test" });
  assert.deepEqual([viaScheme.status, "message" in viaScheme && viaScheme.message], ["error", "a redirect to something other than an http(s) URL: myapp://cb?token=[redacted]"]);
  assert.deepEqual([viaHost.status, "message" in viaHost && viaHost.message], ["error", "network not declared: [redacted].example.org"]);
});

test("issue 26 #11 (reported case): an agent's call of a whole-url tool that sends a credential is denied, for every echo encoding, unless the owner allows it by name; nothing is sent", async () => {
  const h = await hubWith([]);
  const before = echo.seen.length;
  for (const path of Object.keys(transforms)) {
    const { d } = await agentCall(h, "web.fetch", { url: `${echo.url}/${path}` });
    assert.deepEqual([d.decision, d.reason], ["deny", `web.fetch sends its credential (authRef env:WEB_TOKEN) to a URL the agent chooses (its url is one placeholder); only an approvals entry of rules.json naming this tool with "credential_any_url": true allows that`], path);
  }
  assert.equal(echo.seen.length, before, "nothing reached the echo host");
  // A whole-url tool without a credential is asked about as any HTTP tool; its card says the agent chooses the URL.
  const open = await agentCall(h, "web.open", { url: `${echo.url}/plain` });
  assert.equal(open.d.decision, "prompt");
  assert.ok((await cardText(h.f, open.d.card!)).includes(`\nSends requests only to (requires.network): 127.0.0.1:${echo.port}, api.example.com\nThe agent chooses the URL (any declared host, any path).\nNo entry`), await cardText(h.f, open.d.card!));
  // rules.json: the setting only on an entry naming the tool.
  const bad = parseRules(JSON.stringify(toolRules([{ plugin: "web", mode: "prompt", credential_any_url: true }], ["web.*"])), { timezone: "UTC" });
  assert.match(bad.ok ? "" : bad.error, /approvals\[0\]\.credential_any_url: only on an entry that names the tool \(tool\)/);
  const notBool = parseRules(JSON.stringify(toolRules([{ plugin: "web", tool: "web.fetch", mode: "prompt", credential_any_url: "yes" }], ["web.*"])), { timezone: "UTC" });
  assert.match(notBool.ok ? "" : notBool.error, /approvals\[0\]\.credential_any_url: must be true or false/);
});

test("issue 26 #11: the card of an HTTP tool that sends a credential names the hosts and the authRef and says what redaction cannot catch; with the owner's setting the whole-url tool asks", async () => {
  const h = await hubWith([{ plugin: "web", tool: "web.fetch", mode: "prompt", credential_any_url: true }]);
  const status = await agentCall(h, "web.status", {});
  assert.equal(status.d.decision, "prompt");
  const text = await cardText(h.f, status.d.card!);
  assert.ok(text.includes(`\nSends requests only to (requires.network): 127.0.0.1:${echo.port}, api.example.com\n`
    + "Sends the credential authRef env:WEB_TOKEN with each request. A declared host that echoes it back transformed (base64, split, case changed, reversed, escaped) hands it to the agent: redaction only catches the value as it is.\n"), text);
  assert.ok(!text.includes("The agent chooses the URL"), text);
  const fetch = await agentCall(h, "web.fetch", { url: `${echo.url}/base64` });
  assert.equal(fetch.d.decision, "prompt");
  const fetchText = await cardText(h.f, fetch.d.card!);
  assert.ok(fetchText.includes("The agent chooses the URL (any declared host, any path).\nSends the credential authRef env:WEB_TOKEN"), fetchText);
});
