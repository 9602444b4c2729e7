/**
 * The owner console's sign-in and session (issue 17, "Security (each a test)"): the one-time sign-in link, its cookie,
 * what the cookie opens and what it never opens, the Origin check of changing requests, how a session ends (its key
 * removed or replaced, `console --end`, sign-out, its age), the console's headers, and nothing secret in the page, its
 * files or the hub's log. Socketless through `createApp(hub).request()` with the hub's clock in the test's hands; the
 * stream, the edge and the CLI over a real socket and real processes (`npm run build` first for the CLI).
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { lookup } from "node:dns/promises";
import { join } from "node:path";
import { createRequire } from "node:module";
import type { IncomingMessage } from "node:http";
import { Hub } from "../src/host/hub.js";
import { createApp } from "../src/host/http.js";
import { keyedRequest } from "../src/host/edge.js";
import { storedSessions } from "../src/host/console-session.js";
import { consoleCatalog, consoleDir, consoleHeaders, engineModules } from "../src/host/console-files.js";
import { endpoints, pathOf, type EndpointName } from "../src/protocol/endpoints.js";
import { catalogEntries } from "../src/i18n/messages.js";
import type { ConsoleSessions as ConsoleSessionsAnswer } from "../src/protocol/responses.js";
import { consoleSessionIdleMs, consoleSessionMaxMs, consoleSessionsMax, consoleSessionTouchMs, consoleSignInValidMs } from "../src/kernel/limits.js";
import { checkAnswer, engine, hubFixture, makeHome, serveProcess, until, prose } from "./helpers.js";

const cleanup: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const origin = "http://localhost";
const missingKey = "missing Authorization: Bearer <key>";
const refusedOrigin = "refused: this console request came from another page or address (its Origin does not match)";
const badLink = "this sign-in link is unknown, used or expired: run agent-autoloop console for a new one";

/** A hub on a fresh home with its clock in the test's hands, and a socketless way to call it. */
async function consoleHub(config: { publicUrl?: string } = {}) {
  const made = makeHome(undefined, config);
  let now = Date.parse("2026-03-01T10:00:00Z");
  const log: string[] = [];
  const hub = new Hub({ home: made.home, lang: "en", checkAnswer, clock: () => now, publicUrl: config.publicUrl ?? "http://127.0.0.1:8787", log: (l) => log.push(l) });
  await hub.start();
  const app = createApp(hub);
  cleanup.push(async () => {
    await hub.close();
    rmSync(made.dir, { recursive: true, force: true });
  });
  /** The page secret each signed-in cookie came with (the console page keeps it and sends it with every request). */
  const pages = new Map<string, string>();
  /**
   * One request; `cookie` is sent as the session cookie's value, with its page secret (`page`: another one, or null
   * for none, as a program that holds only the cookie sends).
   */
  const call = async (method: string, path: string, o: { key?: string; cookie?: string; cookieName?: string; page?: string | null; origin?: string | null; body?: unknown; statusOnly?: boolean } = {}) => {
    const headers: Record<string, string> = {};
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    if (o.cookie) headers.cookie = `other=1; ${o.cookieName ?? "aa_console"}=${o.cookie}`;
    const page = o.page === undefined ? (o.cookie ? pages.get(o.cookie) : undefined) : o.page;
    if (page) headers["x-aa-console"] = page;
    if (o.origin) headers.origin = o.origin;
    if (o.body !== undefined) headers["content-type"] = "application/json";
    const res = await app.request(`http://localhost${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
    if (o.statusOnly) {
      await res.body?.cancel(); // a stream never ends by itself
      return { status: res.status, body: null, headers: res.headers };
    }
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // a page or a file
    }
    // A sign-in's page secret, kept as the console page keeps it.
    const setCookie = /^(?:__Host-)?aa_console=([A-Za-z0-9_-]{43});/.exec(res.headers.get("set-cookie") ?? "");
    if (path === "/console/session" && setCookie && typeof body?.page === "string") pages.set(setCookie[1]!, body.page);
    return { status: res.status, body: prose(res.status, body), headers: res.headers };
  };
  /** A sign-in link made with `key` (the owner's by default): its token. */
  const link = async (key = made.keys.owner) => {
    const r = await call("POST", "/v1/console/sign-in", { key });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return /#sign-in=([A-Za-z0-9_-]{43})$/.exec(r.body.link)![1]!;
  };
  /** Signs in with a new link: the cookie's value. */
  const signIn = async (key = made.keys.owner) => {
    const r = await call("POST", "/console/session", { origin, body: { token: await link(key) } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const cookie = /^aa_console=([A-Za-z0-9_-]{43});/.exec(r.headers.get("set-cookie")!)![1]!;
    assert.match(r.body.page, /^[A-Za-z0-9_-]{43}$/);
    pages.set(cookie, r.body.page);
    return cookie;
  };
  return { hub, app, keys: made.keys, log, call, link, signIn, pages, advance: (ms: number) => (now += ms), now: () => now };
}

test("the sign-in link: owner key only, the hub's public address, the token in the fragment, 5 minutes", async () => {
  const h = await consoleHub();
  const r = await h.call("POST", "/v1/console/sign-in", { key: h.keys.owner });
  assert.equal(r.status, 200);
  assert.match(r.body.link, /^http:\/\/127\.0\.0\.1:8787\/console\/#sign-in=[A-Za-z0-9_-]{43}$/);
  assert.equal(r.body.expiresAt, new Date(h.now() + consoleSignInValidMs).toISOString());
  assert.equal(consoleSignInValidMs, 300_000);
  for (const key of [h.keys.worker, h.keys.channel, h.keys.source]) assert.equal((await h.call("POST", "/v1/console/sign-in", { key })).status, 403);
  assert.deepEqual((await h.call("POST", "/v1/console/sign-in")).body, { error: missingKey });
  // A cookie never makes a link (nor a key): a stolen session cannot outlive itself.
  const cookie = await h.signIn();
  assert.deepEqual(await h.call("POST", "/v1/console/sign-in", { cookie, origin }).then((x) => [x.status, x.body]), [401, { error: missingKey }]);
});

test("a sign-in token works once and for 5 minutes; it gives a HttpOnly, SameSite=Strict cookie for Path=/", async () => {
  const h = await consoleHub();
  const token = await h.link();
  const first = await h.call("POST", "/console/session", { origin, body: { token } });
  assert.equal(first.status, 200);
  assert.match(first.headers.get("set-cookie")!, /^aa_console=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=7776000$/);
  assert.match(first.body.page, /^[A-Za-z0-9_-]{43}$/);
  assert.deepEqual([first.body, first.headers.get("content-security-policy"), first.headers.get("x-content-type-options")], [{ ok: true, page: first.body.page }, csp, "nosniff"]);
  const again = await h.call("POST", "/console/session", { origin, body: { token } });
  assert.deepEqual([again.status, again.body, again.headers.get("set-cookie")], [401, { error: badLink }, null]);

  const late = await h.link();
  h.advance(consoleSignInValidMs - 1);
  const inTime = await h.link();
  h.advance(1);
  assert.deepEqual((await h.call("POST", "/console/session", { origin, body: { token: late } })).body, { error: badLink }, "at 5 minutes: expired");
  assert.equal((await h.call("POST", "/console/session", { origin, body: { token: inTime } })).status, 200);
  assert.deepEqual((await h.call("POST", "/console/session", { origin, body: { token: "x".repeat(43) } })).body, { error: badLink });
  assert.deepEqual((await h.call("POST", "/console/session", { origin, body: {} })).body, { error: "token: required" });
  assert.deepEqual((await h.call("POST", "/console/session", { origin, body: "[" })).status, 400);
});

test("signing in needs the hub's own Origin; a refused sign-in does not use the token up", async () => {
  const h = await consoleHub();
  const token = await h.link();
  for (const o of [null, "http://evil.example", "null", "http://localhost.evil.example"]) {
    assert.deepEqual((await h.call("POST", "/console/session", { origin: o, body: { token } })).body, { error: refusedOrigin }, String(o));
  }
  assert.equal((await h.call("POST", "/console/session", { origin, body: { token } })).status, 200);
});

test("the cookie stands for the owner key on the owner endpoints the console uses, and on no other endpoint", async () => {
  const h = await consoleHub();
  const cookie = await h.signIn();
  assert.equal((await h.call("GET", "/v1/state", { cookie })).status, 200);
  assert.equal((await h.call("GET", "/v1/state", { cookie: "y".repeat(43) })).status, 401, "an unknown cookie is no credential");
  const seq = h.hub.store.seq;
  const taken: string[] = [];
  for (const [name, spec] of Object.entries(endpoints) as [EndpointName, (typeof endpoints)[EndpointName]][]) {
    if (spec.auth === "none") continue;
    const path = pathOf(spec.path, { id: 1, name: "alerts", kind: "owner", source: "shop", call: 1, task: "t".repeat(16), key: "k", file: "a.txt", session: "0123456789ab" });
    const takes = "cookie" in spec && spec.cookie === true;
    const r = await h.call(spec.method, path, { cookie, origin, body: spec.method === "GET" ? undefined : {}, statusOnly: takes });
    if (takes) {
      taken.push(name);
      assert.notEqual(r.status, 401, name);
      continue;
    }
    assert.equal(r.status, 401, `${name}: ${JSON.stringify(r.body)}`);
    if (Array.isArray(spec.auth) || spec.auth === "run") assert.deepEqual(r.body, { error: missingKey }, name);
  }
  assert.deepEqual(taken.sort(), [
    "answer", "artifact", "cancel", "card", "events", "pause", "pluginEvent", "pluginSettingSet", "pluginSettings", "pluginUi", "plugins", "pluginsReload",
    "resolve", "resume", "runNow", "search", "state", "stream", "tools", "transcript", "why",
  ]);
  // Only the owner endpoints: keys, sign-in and the parts' endpoints never take it.
  for (const name of taken) assert.ok((endpoints[name as EndpointName].auth as readonly string[]).includes("owner"), name);
  assert.ok(h.hub.store.seq >= seq);
});

test("a changing request with the cookie needs the Origin its session signed in from; refused, it writes nothing", async () => {
  const h = await consoleHub();
  const cookie = await h.signIn();
  const seq = h.hub.store.seq;
  for (const o of [null, "http://evil.example", "https://localhost", "http://localhost:8787"]) {
    const r = await h.call("POST", "/v1/rules/alerts/pause", { cookie, origin: o, body: { reason: "csrf" } });
    assert.deepEqual([r.status, r.body], [403, { error: refusedOrigin }], String(o));
  }
  assert.equal(h.hub.store.seq, seq, "no refusal wrote a fact");
  const ok = await h.call("POST", "/v1/rules/alerts/pause", { cookie, origin, body: { reason: "from the console" } });
  assert.deepEqual([ok.status, ok.body.changed, ok.body.paused.by], [200, true, "owner"]);
  // A read needs no Origin (SameSite=Strict keeps other sites' pages from sending the cookie at all).
  assert.equal((await h.call("GET", "/v1/state", { cookie })).status, 200);
});

test("a session ends when its owner key is removed or replaced, and stands only for that key", async () => {
  const h = await consoleHub();
  const made = await h.call("POST", "/v1/keys/owner/laptop", { key: h.keys.owner });
  const laptop = made.body.key as string;
  const mine = await h.signIn();
  const theirs = await h.signIn(laptop);
  const pendingLink = await h.link(laptop);
  assert.equal((await h.call("GET", "/v1/state", { cookie: theirs })).status, 200);
  assert.equal((await h.call("DELETE", "/v1/keys/owner/laptop", { key: h.keys.owner })).body.changed, true);
  assert.deepEqual((await h.call("GET", "/v1/state", { cookie: theirs })).body, { error: missingKey });
  assert.deepEqual((await h.call("POST", "/console/session", { origin, body: { token: pendingLink } })).body, { error: badLink }, "its unused link died with it");
  assert.equal((await h.call("GET", "/v1/state", { cookie: mine })).status, 200, "the other owner key's session goes on");
  assert.equal(h.hub.console.size, 1);
  // The same name with a new key is another key: the old one's session ends.
  const again = (await h.call("POST", "/v1/keys/owner/laptop", { key: h.keys.owner })).body.key as string;
  const third = await h.signIn(again);
  await h.call("POST", "/v1/keys/owner/laptop", { key: h.keys.owner });
  assert.equal((await h.call("GET", "/v1/state", { cookie: third })).status, 401);
});

test("sessions end with `console --end` (DELETE /v1/console/sessions), by sign-out, 30 days unused and 90 days after sign-in", async () => {
  const h = await consoleHub();
  const a = await h.signIn();
  const b = await h.signIn();
  const unused = await h.link();
  const ended = await h.call("DELETE", "/v1/console/sessions", { key: h.keys.owner });
  assert.deepEqual([ended.status, ended.body], [200, { ended: 2 }]);
  for (const cookie of [a, b]) assert.equal((await h.call("GET", "/v1/state", { cookie })).status, 401);
  assert.deepEqual((await h.call("POST", "/console/session", { origin, body: { token: unused } })).body, { error: badLink });
  assert.deepEqual((await h.call("DELETE", "/v1/console/sessions", { key: h.keys.owner })).body, { ended: 0 });

  const c = await h.signIn();
  const out = await h.call("POST", "/console/sign-out", { cookie: c, origin });
  assert.deepEqual([out.status, out.headers.get("set-cookie")], [200, "aa_console=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"]);
  assert.equal((await h.call("GET", "/v1/state", { cookie: c })).status, 401);
  const d = await h.signIn();
  assert.equal((await h.call("POST", "/console/sign-out", { cookie: d, origin: "http://evil.example" })).status, 403, "sign-out is a change too");

  // Used every 29 days it lives to 90 days after its sign-in, not a millisecond more.
  const e = await h.signIn();
  const signedAt = h.now();
  while (h.now() + consoleSessionIdleMs - 86_400_000 < signedAt + consoleSessionMaxMs - 1) {
    h.advance(consoleSessionIdleMs - 86_400_000);
    assert.equal((await h.call("GET", "/v1/state", { cookie: e })).status, 200);
  }
  h.advance(signedAt + consoleSessionMaxMs - 1 - h.now());
  assert.equal((await h.call("GET", "/v1/state", { cookie: e })).status, 200);
  h.advance(1);
  assert.equal((await h.call("GET", "/v1/state", { cookie: e })).status, 401);
  // Unused for 30 days it ends, however young.
  const f = await h.signIn();
  h.advance(consoleSessionIdleMs - 1);
  assert.equal((await h.call("GET", "/v1/state", { cookie: f })).status, 200);
  h.advance(consoleSessionIdleMs - 1);
  assert.equal((await h.call("GET", "/v1/state", { cookie: f })).status, 200, "each use starts the 30 days again");
  h.advance(consoleSessionIdleMs);
  assert.equal((await h.call("GET", "/v1/state", { cookie: f })).status, 401);
});

test("with an https public URL the cookie is Secure and __Host- named, and the link uses that address", async () => {
  const h = await consoleHub({ publicUrl: "https://hub.example.org" });
  const r = await h.call("POST", "/v1/console/sign-in", { key: h.keys.owner });
  assert.match(r.body.link, /^https:\/\/hub\.example\.org\/console\/#sign-in=[A-Za-z0-9_-]{43}$/);
  const token = /#sign-in=(.+)$/.exec(r.body.link)![1]!;
  // Behind a TLS proxy the request reaches the hub as http on another host; the page's Origin is the public one.
  const res = await h.call("POST", "/console/session", { origin: "https://hub.example.org", body: { token } });
  assert.match(res.headers.get("set-cookie")!, /^__Host-aa_console=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=7776000; Secure$/);
  const cookie = /^__Host-aa_console=([^;]+)/.exec(res.headers.get("set-cookie")!)![1]!;
  assert.equal((await h.call("GET", "/v1/state", { cookie, cookieName: "__Host-aa_console" })).status, 200);
  assert.equal((await h.call("GET", "/v1/state", { cookie })).status, 401, "the plain name is not taken on https");
  assert.equal((await h.call("POST", "/v1/runs/1/cancel", { cookie, cookieName: "__Host-aa_console", origin: "https://hub.example.org", body: {} })).status, 404);
});

test("the console's files: a strict CSP, nosniff, no framing, only the folder's own files, both languages' texts", async () => {
  const h = await consoleHub();
  const page = await h.call("GET", "/console/");
  assert.equal(page.status, 200);
  assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(page.headers.get("cache-control"), "no-store");
  const js = await h.call("GET", "/console/app.js");
  for (const r of [page, js, await h.call("GET", "/console/catalog.json"), await h.call("GET", "/console/style.css")]) {
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-security-policy"), csp);
    assert.equal(r.headers.get("x-content-type-options"), "nosniff");
    assert.equal(r.headers.get("x-frame-options"), "DENY");
    assert.equal(r.headers.get("referrer-policy"), "no-referrer");
  }
  assert.equal(js.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.equal((await h.call("GET", "/console")).status, 301);
  for (const p of ["/console/../package.json", "/console/%2e%2e/package.json", "/console/..%2fpackage.json", "/console/nope.js", "/console/views/x.js", "/console/vendor/nope.js", "/console/vendor/..%2f..%2fpackage.json"]) {
    assert.equal((await h.call("GET", p)).status, 404, p);
  }
  // The libraries' browser files, as their packages ship them, with the same headers.
  const require = createRequire(import.meta.url);
  for (const [path, file] of [["/console/vendor/cronstrue.js", "cronstrue/dist/cronstrue.min.js"], ["/console/vendor/cronstrue-zh_CN.js", "cronstrue/locales/zh_CN.min.js"]] as const) {
    const r = await h.call("GET", path);
    assert.deepEqual([r.status, r.headers.get("content-type"), r.headers.get("content-security-policy"), r.headers.get("x-content-type-options")], [200, "text/javascript; charset=utf-8", csp, "nosniff"], path);
    assert.equal(r.body, readFileSync(require.resolve(file), "utf8"), path);
  }
  // No inline script or style in the page: every script and sheet is a file of this origin.
  assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/);
  assert.doesNotMatch(page.body, /<style|\sstyle=|\son\w+=/);
  const catalog = (await h.call("GET", "/console/catalog.json")).body;
  assert.deepEqual(catalog, consoleCatalog());
  const ids = catalogEntries().map(([id]) => id).filter((id) => id.startsWith("console."));
  assert.deepEqual(Object.keys(catalog.zh).filter((id) => id.startsWith("console.")), ids);
  assert.deepEqual(Object.keys(catalog.en).filter((id) => id.startsWith("console.")), ids);
});

test("the engine modules the console loads are the built files as they are, with the console's headers; no other is served", async () => {
  const h = await consoleHub();
  assert.deepEqual(Object.keys(engineModules), ["sdk/markdown.js", "kernel/text.js", "kernel/states.js", "kernel/timeline.js", "protocol/endpoints.js"]);
  for (const [name, built] of Object.entries(engineModules)) {
    const r = await h.call("GET", `/console/${name}`);
    assert.deepEqual([r.status, r.headers.get("content-type"), r.headers.get("cache-control")], [200, "text/javascript; charset=utf-8", "no-cache"], name);
    for (const [header, value] of Object.entries(consoleHeaders)) assert.equal(r.headers.get(header), value, `${name} ${header}`);
    assert.equal(r.headers.get("content-security-policy"), csp);
    assert.equal(r.body, readFileSync(join(engine, built), "utf8"), name);
  }
  for (const p of ["/console/sdk/index.js", "/console/sdk/markdown.ts", "/console/kernel/decide.js", "/console/dist/src/sdk/markdown.js", "/console/sdk/..%2fkernel/text.js"]) {
    assert.equal((await h.call("GET", p)).status, 404, p);
  }
});

test("nothing secret in the page, its files, or the hub's log: no key, master key, sign-in token or cookie", async () => {
  const h = await consoleHub();
  const token = await h.link();
  const r = await h.call("POST", "/console/session", { origin, body: { token } });
  const cookie = /^aa_console=([^;]+)/.exec(r.headers.get("set-cookie")!)![1]!;
  await h.call("POST", "/v1/rules/alerts/pause", { cookie, origin: "http://evil.example", body: {} });
  const master = readFileSync(h.hub.opts.home.masterKey, "utf8").trim();
  const page = r.body.page as string;
  // The page secret too, also when it is refused.
  await h.call("POST", "/v1/rules/alerts/pause", { cookie, page: page.split("").reverse().join(""), origin, body: {} });
  const secrets = [...Object.values(h.keys), master, token, cookie, page];
  const served = [...readdirSync(consoleDir).map((f) => `/console/${f}`), "/console/catalog.json", "/console/", "/console/vendor/cronstrue.js", "/console/vendor/cronstrue-zh_CN.js"];
  for (const path of served) {
    const text = JSON.stringify((await h.call("GET", path, { cookie })).body);
    for (const s of secrets) assert.ok(!text.includes(s), `${path} holds a secret`);
  }
  const log = h.log.join("\n");
  for (const s of secrets) assert.ok(!log.includes(s), "the log holds a secret");
  // The files never write to storage anything but the reader's choices (language, theme) and the session's page
  // secret (boot.js `pageSecret`, under its key: useless without the HttpOnly cookie; issue 26 round 32, F32b-1).
  for (const f of readdirSync(consoleDir).filter((n) => n.endsWith(".js"))) {
    for (const m of readFileSync(join(consoleDir, f), "utf8").matchAll(/localStorage\.setItem\(([^,]+),/g)) assert.match(m[1]!, /^(?:"aa\.lang"|"aa\.theme"|this\.key)$/, f);
  }
});

test("a console's stream ends with its session; a console's connection counts as keyed at the edge", async () => {
  const f = await hubFixture();
  cleanup.push(() => f.close());
  const { hub } = f.running;
  const token = /#sign-in=(.+)$/.exec((await f.call("POST", "/v1/console/sign-in", f.keys.owner)).body.link)![1]!;
  const signed = await fetch(`${f.url}/console/session`, { method: "POST", headers: { origin: f.url, "content-type": "application/json" }, body: JSON.stringify({ token }) });
  const cookie = signed.headers.get("set-cookie")!.split(";")[0]!;
  const keyed = keyedRequest(hub);
  const req = (headers: Record<string, string>) => ({ headers, url: "/v1/stream" }) as unknown as IncomingMessage;
  assert.equal(keyed(req({ cookie })), true);
  assert.equal(keyed(req({ cookie: "aa_console=nope" })), false);
  const res = await fetch(`${f.url}/v1/stream`, { headers: { cookie } });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  let text = "";
  await until(async () => {
    const { value } = await reader.read();
    text += new TextDecoder().decode(value);
    return text.includes("event: fact");
  }, 10_000, "the first facts");
  assert.deepEqual((await f.call("DELETE", "/v1/console/sessions", f.keys.owner)).body, { ended: 1 });
  // The stream ends at once (not at its next keep-alive): read to its end.
  for (;;) if ((await reader.read()).done) break;
  assert.equal(keyed(req({ cookie })), false);
  assert.equal((await fetch(`${f.url}/v1/stream`, { headers: { cookie } })).status, 401);
});

/** Runs the CLI on a home with a hub running on it. */
function cli(args: string[], home: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(engine, "bin", "agent-autoloop.js"), ...args], { env: { ...process.env, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "" } }, (e, stdout, stderr) => {
      resolve({ code: e ? (e as { code?: number }).code ?? 1 : 0, out: stdout + stderr });
    });
  });
}

test("`agent-autoloop console` prints a one-time link (opening nothing here); `console --end` ends the sessions", async () => {
  const made = makeHome();
  const serve = await serveProcess(made.dir);
  cleanup.push(async () => {
    await serve.stop();
    rmSync(made.dir, { recursive: true, force: true });
  });
  const printed = await cli(["console"], made.dir);
  assert.equal(printed.code, 0, printed.out);
  const m = /^Console sign-in link \(works once, until \d\d-\d\d \d\d:\d\d:\d\d\):\n {2}(http:\/\/127\.0\.0\.1:\d+\/console\/#sign-in=([A-Za-z0-9_-]{43}))\n$/.exec(printed.out);
  assert.ok(m, printed.out);
  const exchange = () => fetch(`${serve.url}/console/session`, { method: "POST", headers: { origin: serve.url, "content-type": "application/json" }, body: JSON.stringify({ token: m[2] }) });
  const res = await exchange();
  assert.equal(res.status, 200);
  assert.equal((await exchange()).status, 401, "the link works once");
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  assert.equal((await fetch(`${serve.url}/v1/state`, { headers: { cookie } })).status, 200);
  const ended = await cli(["console", "--end"], made.dir);
  assert.deepEqual(ended, { code: 0, out: "console sessions ended: 1\n" });
  assert.equal((await fetch(`${serve.url}/v1/state`, { headers: { cookie } })).status, 401);
  assert.ok(!serve.output().includes(m[2]!), "the hub's log never shows the token");
});

/** The origin of the sign-in link `agent-autoloop console` prints for a hub serving on `listen`, and the hub's port. */
async function linkOfListen(listen: string): Promise<{ link: string | undefined; port: string; out: string }> {
  const made = makeHome();
  const serve = await serveProcess(made.dir, undefined, undefined, listen);
  cleanup.push(async () => {
    await serve.stop();
    rmSync(made.dir, { recursive: true, force: true });
  });
  const printed = await cli(["console"], made.dir);
  assert.equal(printed.code, 0, printed.out);
  return { link: /(http:\/\/\S+)\/console\/#sign-in=/.exec(printed.out)?.[1], port: new URL(serve.url).port, out: printed.out };
}

test("a hub listening on every address (0.0.0.0) without publicUrl gives links on loopback, which a browser here opens", async () => {
  const { link, port, out } = await linkOfListen("0.0.0.0:0");
  assert.equal(link, `http://127.0.0.1:${port}`, out);
});

test("issue 26 r33 F33a-2 (reported case: listen localhost:<port> gave links on http://localhost:<port>, which Chromium tried on [::1] first, where a sandboxed agent listened and relayed the console, keeping its session): links name the address the hub holds", async () => {
  const { link, port, out } = await linkOfListen("localhost:0");
  const bound = (await lookup("localhost")).address;
  assert.equal(link, `http://${bound.includes(":") ? `[${bound}]` : bound}:${port}`, out);
});

test("sessions are kept in the home as hashes only (console-sessions.json, 0600): a new hub process on the home keeps them, with their expiries", async () => {
  const made = makeHome();
  cleanup.push(() => rmSync(made.dir, { recursive: true, force: true }));
  let now = Date.parse("2026-03-01T10:00:00Z");
  const log: string[] = [];
  const open = async () => {
    const hub = new Hub({ home: made.home, lang: "en", checkAnswer, clock: () => now, publicUrl: "http://127.0.0.1:8787", log: (l) => log.push(l) });
    await hub.start();
    return { hub, app: createApp(hub) };
  };
  const state = async (app: ReturnType<typeof createApp>, cookie: string) => (await app.request("http://localhost/v1/state", { headers: { cookie: `aa_console=${cookie}` } })).status;
  let { hub, app } = await open();
  const signIn = async () => {
    const l = await app.request("http://localhost/v1/console/sign-in", { method: "POST", headers: { authorization: `Bearer ${made.keys.owner}` } });
    const token = /#sign-in=(.+)$/.exec(((await l.json()) as { link: string }).link)![1]!;
    const r = await app.request("http://localhost/console/session", { method: "POST", headers: { origin, "content-type": "application/json" }, body: JSON.stringify({ token }) });
    return /^aa_console=([A-Za-z0-9_-]{43});/.exec(r.headers.get("set-cookie")!)![1]!;
  };
  const a = await signIn();
  const b = await signIn();
  const file = made.home.consoleSessions;
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const stored = readFileSync(file, "utf8");
  for (const cookie of [a, b]) {
    assert.ok(!stored.includes(cookie), "no cookie in the file");
    assert.ok(stored.includes(createHash("sha256").update(cookie).digest("hex")), "its hash is");
  }
  assert.ok(!stored.includes(made.keys.owner), "no owner key in the file");
  const listed = (await (await app.request("http://localhost/v1/console/sessions", { headers: { authorization: `Bearer ${made.keys.owner}` } })).json()) as ConsoleSessionsAnswer;
  assert.deepEqual(listed.sessions.map((s) => [s.origin, s.signedIn, s.lastUsed, s.idleUntil, s.expiresAt]), [0, 1].map(() => [
    origin, "2026-03-01T10:00:00.000Z", "2026-03-01T10:00:00.000Z", new Date(now + consoleSessionIdleMs).toISOString(), new Date(now + consoleSessionMaxMs).toISOString(),
  ]));
  assert.equal(new Set(listed.sessions.map((s) => s.session)).size, 2);
  assert.match(listed.sessions[0]!.session, /^[0-9a-f]{12}$/);

  // A use is written at most once an hour: polling does not rewrite the file.
  const mtime = statSync(file).mtimeMs;
  now += consoleSessionTouchMs - 1;
  assert.equal(await state(app, a), 200);
  assert.equal(statSync(file).mtimeMs, mtime);
  now += 1;
  assert.equal(await state(app, a), 200);
  assert.notEqual(readFileSync(file, "utf8"), stored, "an hour later the use is written");

  // The hub stops and starts again: both consoles are still signed in, and the idle clock kept a's last use.
  await hub.close();
  ({ hub, app } = await open());
  cleanup.push(() => hub.close());
  assert.deepEqual([await state(app, a), await state(app, b)], [200, 200]);
  // One ended by its name; the other ends when its key is replaced, in this process and the next.
  const ended = await app.request(`http://localhost/v1/console/sessions/${listed.sessions[0]!.session}`, { method: "DELETE", headers: { authorization: `Bearer ${made.keys.owner}` } });
  assert.deepEqual(await ended.json(), { ended: 1 });
  const again = await app.request(`http://localhost/v1/console/sessions/${listed.sessions[0]!.session}`, { method: "DELETE", headers: { authorization: `Bearer ${made.keys.owner}` } });
  assert.deepEqual(await again.json(), { ended: 0 });
  const survivor = listed.sessions[0]!.session === (await (await app.request("http://localhost/v1/console/sessions", { headers: { authorization: `Bearer ${made.keys.owner}` } })).json() as ConsoleSessionsAnswer).sessions[0]?.session ? a : null;
  assert.equal(survivor, null, "the ended one is no longer listed");
  const alive = [await state(app, a), await state(app, b)];
  assert.deepEqual(alive.sort(), [200, 401]);
  assert.deepEqual(log.filter((l) => l.includes("console sessions file")), []);
});

test("a damaged console-sessions.json signs nobody in and stops nothing: the hub says so, starts with no session, and the next sign-in writes it anew", async () => {
  const made = makeHome();
  cleanup.push(() => rmSync(made.dir, { recursive: true, force: true }));
  const forged = { v: 1, sessions: [{ id: createHash("sha256").update("x".repeat(43)).digest("hex"), ref: "0123456789ab", keyHash: "k", origin, createdAt: 0, usedAt: Date.now(), expiresAt: Date.now() + 1e9 }] };
  for (const [content, logged] of [["{not json", true], [JSON.stringify({ v: 2, sessions: forged.sessions }), false], [JSON.stringify(forged), false], [JSON.stringify({ v: 1, sessions: Array(consoleSessionsMax * 4).fill({ id: 5 }) }), false]] as const) {
    writeFileSync(made.home.consoleSessions, content);
    const log: string[] = [];
    const hub = new Hub({ home: made.home, lang: "en", checkAnswer, log: (l) => log.push(l) });
    await hub.start();
    const app = createApp(hub);
    // The forged one names no owner key's hash: it is dropped at load, and its cookie opens nothing.
    assert.equal((await app.request("http://localhost/v1/state", { headers: { cookie: `aa_console=${"x".repeat(43)}` } })).status, 401, content.slice(0, 20));
    assert.deepEqual(((await (await app.request("http://localhost/v1/console/sessions", { headers: { authorization: `Bearer ${made.keys.owner}` } })).json()) as ConsoleSessionsAnswer).sessions, []);
    assert.equal(log.some((l) => /^console sessions file .*console-sessions\.json could not be read or written \(.*\): sessions live in memory only and end when the hub restarts$/.test(l)), logged, log.join("\n"));
    await hub.close();
  }
});

test("`console --sessions` lists the sessions and `console --end <name>` ends one; a hub restart keeps the cookie reading /v1/state (issue 30, pinned)", async () => {
  const made = makeHome();
  let serve = await serveProcess(made.dir);
  cleanup.push(async () => {
    await serve.stop();
    rmSync(made.dir, { recursive: true, force: true });
  });
  const signIn = async () => {
    const token = /#sign-in=([A-Za-z0-9_-]{43})/.exec((await cli(["console", "--no-open"], made.dir)).out)![1]!;
    const res = await fetch(`${serve.url}/console/session`, { method: "POST", headers: { origin: serve.url, "content-type": "application/json" }, body: JSON.stringify({ token }) });
    return res.headers.get("set-cookie")!.split(";")[0]!;
  };
  const cookie = await signIn();
  await serve.stop();
  serve = await serveProcess(made.dir);
  assert.equal((await fetch(`${serve.url}/v1/state`, { headers: { cookie } })).status, 200, "still signed in after the restart");
  const listed = await cli(["console", "--sessions"], made.dir);
  const m = /^([0-9a-f]{12}) {2}http:\/\/127\.0\.0\.1:\d+ {2}signed in \d\d-\d\d \d\d:\d\d:\d\d, last used \d\d-\d\d \d\d:\d\d:\d\d, ends if unused until \d\d-\d\d \d\d:\d\d:\d\d, at the latest \d\d-\d\d \d\d:\d\d:\d\d\n$/.exec(listed.out);
  assert.ok(m, listed.out);
  assert.deepEqual(await cli(["console", "--end", "0000deadbeef"], made.dir), { code: 1, out: "agent-autoloop: no console session named 0000deadbeef: agent-autoloop console --sessions lists them\n" });
  assert.deepEqual(await cli(["console", "--end", m[1]!], made.dir), { code: 0, out: `console session ${m[1]} ended\n` });
  assert.equal((await fetch(`${serve.url}/v1/state`, { headers: { cookie } })).status, 401);
  assert.deepEqual(await cli(["console", "--sessions"], made.dir), { code: 0, out: "no console sessions\n" });
});

test("issue 26 r32 F32b-1 (reported case: an agent listening on another port of 127.0.0.1 received the console's cookie and replayed it with an Origin of its own, answering its card \"always allow\"): no change is taken on the cookie without the page secret the console page keeps in its origin's storage", async () => {
  const h = await consoleHub();
  const cookie = await h.signIn();
  const page = h.pages.get(cookie)!;
  const second = await h.signIn();
  const pause = (o: { page?: string | null; origin?: string }) => h.call("POST", "/v1/rules/alerts/pause", { cookie, origin, ...o, body: { reason: "replayed" } });
  const refused = { error: "refused: this console request lacks the console page's session secret (it carries only the cookie); sign in again with agent-autoloop console" };
  // The cookie alone, another value, a cut one, another session's: refused, naming the secret, and nothing written.
  const before = h.hub.store.factsAfter(0, 100_000).length;
  for (const other of [null, "", "z".repeat(43), page.slice(0, 42), h.pages.get(second)!]) {
    assert.deepEqual(await pause({ page: other }).then((r) => [r.status, r.body]), [403, refused], String(other));
  }
  // Every changing endpoint the cookie stands for, the same.
  const changing = (Object.entries(endpoints) as [EndpointName, (typeof endpoints)[EndpointName]][]).filter(([, spec]) => "cookie" in spec && spec.cookie === true && spec.method !== "GET");
  assert.equal(changing.length, 9, changing.map(([n]) => n).join());
  for (const [name, spec] of changing) {
    const path = pathOf(spec.path, { id: 1, name: "alerts", kind: "owner", source: "shop", call: 1, task: "t".repeat(16), key: "k", file: "a.txt", session: "0123456789ab" });
    const r = await h.call(spec.method, path, { cookie, page: null, origin, body: {} });
    assert.deepEqual([r.status, r.body], [403, refused], name);
  }
  // The Origin is still checked first (a browser page of another site is told that).
  assert.equal((await pause({ origin: "http://evil.example" })).status, 403);
  assert.equal(h.hub.store.factsAfter(0, 100_000).length, before, "nothing written");
  // Reads take the cookie alone (issue 30's pinned contract: the cookie reads /v1/state).
  assert.equal((await h.call("GET", "/v1/state", { cookie, page: null })).status, 200);
  // With its own secret, the change is taken.
  assert.equal((await pause({})).status, 200);
  // Ending the session needs the cookie and its Origin only: a page that lost its secret can still sign out.
  assert.equal((await h.call("POST", "/console/sign-out", { cookie, page: null, origin })).status, 200);
  assert.equal((await h.call("GET", "/v1/state", { cookie, page: null })).status, 401);
});

test("console-sessions.json of version 1 (sessions without a page secret) signs its consoles out at the update; a session without its page secret is not kept", () => {
  const row = { id: "a".repeat(64), ref: "0123456789ab", keyHash: "k", origin: "http://127.0.0.1:8787", createdAt: 1, usedAt: 2, expiresAt: 3 };
  assert.deepEqual(storedSessions({ v: 1, sessions: [row] }), []);
  assert.deepEqual(storedSessions({ v: 2, sessions: [{ ...row, pageHash: "b".repeat(64) }] }), [{ ...row, pageHash: "b".repeat(64) }]);
  for (const bad of [undefined, "", "B".repeat(64), "b".repeat(63), 7, null]) assert.deepEqual(storedSessions({ v: 2, sessions: [{ ...row, pageHash: bad }] }), [], String(bad));
});

