/**
 * Declarative HTTP tools called through the tool host (issue 18; spec declarative-plugins.md §3.1), against local HTTP
 * servers on 127.0.0.1 port 0: arguments checked against `parameters` first; every templating rule (whole-url,
 * path/query percent-encoding, JSON body, headers without CR/LF, no re-substitution) with the injection attempts of the
 * issue (CRLF, `{{`, `../`, `@evil.host`, percent-encoded slashes, a redirect to an undeclared host); only declared
 * hosts, before a byte is sent; authRef as Bearer or where `{{auth}}` says, never returned; resultPath; the timeout;
 * the response size limit; non-2xx as a tool error; unload in the middle of a call and after it.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ToolHost, ToolRegistry, type ToolOutcome } from "../src/tools/index.js";
import { DeclarativeCatalog, declarativeLimits } from "../src/declarative/index.js";
import { localServer, minimalManifest, sendJson, writeFiles, type LocalServer } from "./declarative-helpers.js";
import { tempDir, until } from "./helpers.js";
import { toolResultDepthMax } from "../src/kernel/limits.js";

const cleanup: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

const str = { type: "string" };
/** The answers of the main server, by path. */
const main = await localServer((req, res) => {
  const path = req.url.split("?")[0]!;
  if (path === "/items/1") return sendJson(res, 200, { data: { items: [{ name: "first" }, { name: "second" }] } });
  if (path === "/empty") return sendJson(res, 200, { data: { items: [] } });
  if (path === "/echo") return sendJson(res, 200, { method: req.method, url: req.url, headers: req.headers, body: req.body });
  if (path === "/missing") {
    res.writeHead(404, { "content-type": "text/plain" });
    return res.end(`not here ${"x".repeat(2000)}`);
  }
  if (path === "/text") {
    res.writeHead(200, { "content-type": "text/plain" });
    return res.end("plain words");
  }
  if (path === "/big") {
    res.writeHead(200, { "content-type": "application/octet-stream" });
    return res.end(Buffer.alloc(declarativeLimits.httpResponseMaxBytes + 1, 97));
  }
  if (path === "/hang") return; // never answers
  if (path === "/refuse-escaped") {
    // Echoes the credential in an error answer as many JSON writers do with non-ASCII (Python's ensure_ascii): escaped.
    res.writeHead(401, { "content-type": "application/json" });
    return res.end(JSON.stringify({ error: "bad token", got: req.headers.authorization }).replace(/[a-z]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`));
  }
  if (path === "/deep") {
    // Nested far deeper than any stack: JSON.parse copes, every recursive reader (JSON.stringify, redaction) throws.
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(`${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`);
  }
  if (path === "/deep-ok") return sendJson(res, 200, JSON.parse(`${"[".repeat(64)}1${"]".repeat(64)}`));
  if (path === "/to-undeclared") {
    res.writeHead(302, { location: `http://localhost:${main.port}/landed` });
    return res.end();
  }
  if (path === "/to-other") {
    res.writeHead(307, { location: `${other.url}/echo` });
    return res.end();
  }
  if (path === "/to-self") {
    res.writeHead(303, { location: "/echo" });
    return res.end();
  }
  if (path === "/loop") {
    res.writeHead(302, { location: "/loop" });
    return res.end();
  }
  sendJson(res, 200, { path });
});
/** A second declared server (another origin). */
const other = await localServer((req, res) => sendJson(res, 200, { headers: req.headers, method: req.method, body: req.body }));
cleanup.push(() => main.close(), () => other.close());

const root = tempDir("aa-decl-tools-");
cleanup.push(() => rmSync(root, { recursive: true, force: true }));
const tools: Record<string, { parameters: Record<string, unknown>; http: Record<string, unknown> }> = {
  get: {
    parameters: { type: "object", properties: { id: str, q: str, page: { type: "integer" }, trace: str }, required: ["id"] },
    http: { url: `${main.url}/items/{{param.id}}?q={{param.q}}`, query: { page: "{{param.page}}" }, headers: { "X-Trace": "{{param.trace}}" }, resultPath: "data.items[1].name" },
  },
  raw: { parameters: { type: "object", properties: { id: str } }, http: { url: `${main.url}/raw/{{param.id}}/end#{{param.id}}` } },
  fetch: { parameters: { type: "object", properties: { url: str }, required: ["url"] }, http: { url: "{{param.url}}" } },
  post: {
    parameters: { type: "object", properties: { text: str, n: { type: "number" }, tags: { type: "array" }, missing: str } },
    http: {
      method: "POST", url: `${main.url}/echo`, resultPath: "body",
      body: { text: "{{param.text}}", n: "{{param.n}}", tags: "{{param.tags}}", mixed: "a {{param.text}} b {{param.n}}", list: ["{{param.n}}", "{{param.missing}}"], absent: "{{param.missing}}", literal: "{{ not a placeholder" },
    },
  },
  refuseEscaped: { parameters: { type: "object" }, http: { url: `${main.url}/refuse-escaped`, authRef: "env:WEB_TOKEN" } },
  bearer: { parameters: { type: "object" }, http: { url: `${main.url}/echo`, authRef: "env:WEB_TOKEN", resultPath: "headers" } },
  keyed: { parameters: { type: "object" }, http: { url: `${main.url}/echo`, authRef: "env:WEB_TOKEN", headers: { "X-Api-Key": "key {{auth}}" }, resultPath: "headers" } },
  unset: { parameters: { type: "object" }, http: { url: `${main.url}/echo`, authRef: "env:WEB_UNSET" } },
  empty: { parameters: { type: "object" }, http: { url: `${main.url}/empty`, resultPath: "data.items[0].name" } },
  text: { parameters: { type: "object" }, http: { url: `${main.url}/text` } },
  textPath: { parameters: { type: "object" }, http: { url: `${main.url}/text`, resultPath: "x" } },
  missing: { parameters: { type: "object" }, http: { url: `${main.url}/missing` } },
  big: { parameters: { type: "object" }, http: { url: `${main.url}/big` } },
  hang: { parameters: { type: "object" }, http: { url: `${main.url}/hang`, timeoutMs: 300 } },
  deep: { parameters: { type: "object" }, http: { url: `${main.url}/deep` } },
  deepAuth: { parameters: { type: "object" }, http: { url: `${main.url}/deep`, authRef: "env:WEB_TOKEN" } },
  deepOk: { parameters: { type: "object" }, http: { url: `${main.url}/deep-ok`, authRef: "env:WEB_TOKEN" } },
  wait: { parameters: { type: "object" }, http: { url: `${main.url}/hang`, timeoutMs: 60_000 } },
  toUndeclared: { parameters: { type: "object" }, http: { url: `${main.url}/to-undeclared` } },
  toOther: { parameters: { type: "object" }, http: { method: "POST", url: `${main.url}/to-other`, authRef: "env:WEB_TOKEN", body: { a: 1 }, resultPath: "" } },
  toSelf: { parameters: { type: "object" }, http: { method: "POST", url: `${main.url}/to-self`, body: { a: 1 }, resultPath: "method" } },
  loop: { parameters: { type: "object" }, http: { url: `${main.url}/loop` } },
};
writeFiles(join(root, "web"), {
  "plugin.json": minimalManifest("web", { requires: { network: [`127.0.0.1:${main.port}`, `127.0.0.1:${other.port}`] }, provides: { tools: Object.keys(tools) } }),
  ...Object.fromEntries(Object.entries(tools).map(([name, def]) => [`tools/${name}.json`, { name, description: name, ...def }])),
});
writeFiles(join(root, "bystander"), {
  "plugin.json": minimalManifest("bystander", { requires: { network: [`127.0.0.1:${main.port}`] }, provides: { tools: ["ping"] } }),
  "tools/ping.json": { name: "ping", parameters: { type: "object" }, http: { url: `${main.url}/ping`, resultPath: "path" } },
});
const catalog = new DeclarativeCatalog({ roots: [{ dir: root, origin: "home" }], lang: "en", env: { WEB_TOKEN: "s3cret-token" } });
assert.deepEqual(await catalog.reload(), { loaded: ["bystander", "web"], replaced: [], unloaded: [], rejected: [] });
const host = new ToolHost(new ToolRegistry([], "en"), { lang: "en", data: catalog });
cleanup.push(() => host.close());

/** Calls `web.<tool>` and answers its outcome without the duration. */
async function call(tool: string, args: unknown, plugin = "web"): Promise<ToolOutcome> {
  const { durationMs, ...rest } = await host.call(`${plugin}.${tool}`, args, { sessionKey: "test" });
  assert.equal(typeof durationMs, "number");
  return rest as ToolOutcome;
}

/** The result of an outcome that must be `ok`. */
function okResult<T>(o: ToolOutcome): T {
  if (o.status !== "ok") assert.fail(JSON.stringify(o));
  return o.result as T;
}

/** What the main server saw from the calls `f` makes. */
async function seenBy(f: () => Promise<unknown>, server: LocalServer = main): Promise<LocalServer["seen"]> {
  const before = server.seen.length;
  await f();
  return server.seen.slice(before);
}

test("the HTTP tools are offered through the tool host with kind http", async () => {
  const listed = await host.allTools();
  assert.deepEqual(listed.problems, []);
  assert.deepEqual(listed.tools.map((x) => [x.qualifiedName, x.pluginType, x.disableModelInvocation]), [
    ["bystander.ping", "http", false], ...Object.keys(tools).map((n) => [`web.${n}`, "http", false]),
  ]);
  assert.deepEqual((await host.tools("web")).ok, true);
});

test("arguments are checked against parameters before anything is sent", async () => {
  const seen = await seenBy(async () => {
    assert.deepEqual(await call("get", { q: "x" }), { status: "refused", code: "tools.invalid_arguments", message: "wrong arguments for web.get: id: required" });
    assert.deepEqual(await call("get", { id: 7 }), { status: "refused", code: "tools.invalid_arguments", message: "wrong arguments for web.get: id: must be string" });
    assert.deepEqual(await call("get", [1]), { status: "refused", code: "tools.invalid_arguments", message: "wrong arguments for web.get: arguments: must be object" });
    assert.deepEqual(await call("nope", {}), { status: "refused", code: "tools.unknown_tool", message: "plugin web has no tool nope" });
  });
  assert.deepEqual(seen, []);
});

test("placeholders in the path and query are percent-encoded, query values encoded, the header as given; resultPath picks", async () => {
  const seen = await seenBy(async () => {
    assert.deepEqual(await call("get", { id: "1", q: "a b&c=d#e", page: 2, trace: "t-1" }), { status: "ok", result: "second" });
  });
  assert.deepEqual(seen.map((s) => [s.method, s.url, s.headers["x-trace"]]), [["GET", "/items/1?q=a%20b%26c%3Dd%23e&page=2", "t-1"]]);
  // An optional argument that is absent leaves its query parameter out and its header empty.
  const again = await seenBy(() => call("get", { id: "1" }));
  assert.deepEqual(again.map((s) => [s.url, s.headers["x-trace"]]), [["/items/1?q=", ""]]);
});

test("injection attempts in values stay values: ../, percent-encoded slashes, @evil.host, {{ (no re-substitution)", async () => {
  const seen = await seenBy(async () => {
    for (const id of ["../admin", "a%2Fb", "@evil.host", "{{param.q}}", "a/b?c#d", "%2e%2e", "..."]) await call("raw", { id });
  });
  assert.deepEqual(seen.map((s) => s.url), [
    "/raw/..%2Fadmin/end", "/raw/a%252Fb/end", "/raw/%40evil.host/end", "/raw/%7B%7Bparam.q%7D%7D/end", "/raw/a%2Fb%3Fc%23d/end", "/raw/%252e%252e/end", "/raw/.../end",
  ]);
  // A value that would be a whole `.` or `..` segment (URL parsers climb with it) is refused, nothing sent.
  const none = await seenBy(async () => {
    for (const id of ["..", "."]) {
      assert.deepEqual(await call("raw", { id }), { status: "refused", code: "tools.invalid_arguments", message: "wrong arguments for web.raw: a parameter would make a . or .. path segment: refused" });
    }
  });
  assert.deepEqual(none, []);
});

test("a header value with CR or LF is refused before anything is sent", async () => {
  const seen = await seenBy(async () => {
    for (const trace of ["a\r\nX-Evil: 1", "a\nb", "a\rb", "a\u0000b"]) {
      assert.deepEqual(await call("get", { id: "1", trace }), {
        status: "refused", code: "tools.invalid_arguments", message: "wrong arguments for web.get: header X-Trace: the value holds CR or LF (or another control character): refused",
      });
    }
  });
  assert.deepEqual(seen, []);
});

test("a header value with characters a header cannot carry (beyond U+00FF) is refused before anything is sent, naming the header", async () => {
  const seen = await seenBy(async () => {
    for (const trace of ["日志", "a\u2028b", "😀"]) {
      assert.deepEqual(await call("get", { id: "1", trace }), {
        status: "refused", code: "tools.invalid_arguments", message: "wrong arguments for web.get: header X-Trace: the value holds characters beyond U+00FF, which a header cannot carry: refused",
      });
    }
  });
  assert.deepEqual(seen, []);
  // Latin-1 is sent as it is.
  assert.equal((await call("get", { id: "1", trace: "café" })).status, "ok");
});

test("the JSON body: a lone placeholder is the JSON value, one inside text its text; absent ones are left out; no re-substitution", async () => {
  const r = await call("post", { text: 'he said "{{param.n}}"\n', n: 4.5, tags: ["x", { y: 1 }] });
  assert.deepEqual(JSON.parse(okResult<string>(r)), {
    text: 'he said "{{param.n}}"\n', n: 4.5, tags: ["x", { y: 1 }], mixed: 'a he said "{{param.n}}"\n b 4.5', list: [4.5, null], literal: "{{ not a placeholder",
  });
  assert.equal(main.seen.at(-1)!.headers["content-type"], "application/json");
});

test("a whole-url placeholder must give an absolute http(s) URL of a declared host, with no user name", async () => {
  assert.deepEqual(await call("fetch", { url: `${main.url}/items/1` }), { status: "ok", result: { data: { items: [{ name: "first" }, { name: "second" }] } } });
  const seen = await seenBy(async () => {
    const refused = (message: string, code = "tools.invalid_arguments") => ({ status: "refused", code, message });
    const bad = (m: string) => refused(`wrong arguments for web.fetch: ${m}`);
    assert.deepEqual(await call("fetch", { url: "/items/1" }), bad("{{param.url}} gave no absolute http:// or https:// URL"));
    assert.deepEqual(await call("fetch", { url: "file:///etc/passwd" }), bad("{{param.url}} gave no absolute http:// or https:// URL"));
    assert.deepEqual(await call("fetch", { url: "javascript:alert(1)" }), bad("{{param.url}} gave no absolute http:// or https:// URL"));
    assert.deepEqual(await call("fetch", { url: `http://u:p@127.0.0.1:${main.port}/` }), bad("{{param.url}} gave a URL with a user name or password: refused"));
    // `@evil.host` after a declared host makes that host the URL's user name: refused as such.
    assert.deepEqual(await call("fetch", { url: `http://127.0.0.1:${main.port}@evil.host/` }), bad("{{param.url}} gave a URL with a user name or password: refused"));
    assert.deepEqual(await call("fetch", { url: "http://evil.host/x" }), refused("network not declared: evil.host", "tools.network_not_declared"));
    assert.deepEqual(await call("fetch", { url: `http://127.0.0.1.evil.host:${main.port}/` }), refused(`network not declared: 127.0.0.1.evil.host:${main.port}`, "tools.network_not_declared"));
    assert.deepEqual(await call("fetch", { url: `http://localhost:${main.port}/` }), refused(`network not declared: localhost:${main.port}`, "tools.network_not_declared"));
    assert.deepEqual(await call("fetch", { url: "http://127.0.0.1:1/" }), refused("network not declared: 127.0.0.1:1", "tools.network_not_declared"));
    assert.deepEqual(await call("fetch", { url: "https://127.0.0.1/" }), refused("network not declared: 127.0.0.1", "tools.network_not_declared"));
  });
  assert.deepEqual(seen, [], "nothing reached the server");
});

test("redirects: followed to declared hosts only, the credential dropped on another origin, 303 becomes GET, bounded", async () => {
  const undeclared = await seenBy(async () => {
    assert.deepEqual(await call("toUndeclared", {}), { status: "error", code: "tools.network_not_declared", message: `network not declared: localhost:${main.port}` });
  });
  assert.deepEqual(undeclared.map((s) => s.url), ["/to-undeclared"], "the redirect's target was never asked");
  const echoed = okResult<{ headers: Record<string, string>; method: string; body: string }>(await call("toOther", {}));
  assert.deepEqual([echoed.method, echoed.body, echoed.headers.authorization], ["POST", '{"a":1}', undefined], "307 keeps method and body; no credential to another origin");
  assert.equal(main.seen.find((s) => s.url === "/to-other")!.headers.authorization, "Bearer s3cret-token");
  assert.deepEqual(await call("toSelf", {}), { status: "ok", result: "GET" });
  assert.deepEqual(await call("loop", {}), { status: "error", code: "tools.http_redirects", message: `more than ${declarativeLimits.httpRedirectsMax} redirects` });
});

test("authRef: Bearer by default, where {{auth}} says otherwise; never returned; a missing one refused", async () => {
  assert.deepEqual(okResult<Record<string, string>>(await call("bearer", {})).authorization, "Bearer [redacted]");
  assert.equal(main.seen.at(-1)!.headers.authorization, "Bearer s3cret-token");
  const keyed = okResult<Record<string, string>>(await call("keyed", {}));
  assert.deepEqual([keyed["x-api-key"], keyed.authorization], ["key [redacted]", undefined]);
  assert.equal(main.seen.at(-1)!.headers["x-api-key"], "key s3cret-token");
  // An error answer echoing it JSON-escaped (\u0073…) is read as the JSON it is: the excerpt never shows it either.
  const refused = await call("refuseEscaped", {});
  assert.deepEqual(refused, { status: "error", code: "tools.http_status", message: 'HTTP 401: {"error":"bad token","got":"Bearer [redacted]"}' });
  assert.equal(main.seen.at(-1)!.headers.authorization, "Bearer s3cret-token");
  assert.deepEqual(await call("unset", {}), { status: "refused", code: "tools.auth_missing", message: "authRef env:WEB_UNSET: not set in the tool host's environment" });
});

test("answers: resultPath absent is an error naming it; text bodies; non-2xx with a bounded excerpt; the size limit; the timeout", async () => {
  assert.deepEqual(await call("empty", {}), { status: "error", code: "tools.result_path", message: "resultPath data.items[0].name: the answer has no data.items[0]" });
  assert.deepEqual(await call("text", {}), { status: "ok", result: "plain words" });
  assert.deepEqual(await call("textPath", {}), { status: "error", code: "tools.result_path", message: "resultPath x: the answer is not JSON" });
  assert.deepEqual(await call("missing", {}), {
    status: "error", code: "tools.http_status", message: `HTTP 404: not here ${"x".repeat(declarativeLimits.httpErrorExcerptMaxChars - 10)}…`,
  });
  assert.deepEqual(await call("big", {}), { status: "error", code: "tools.http_too_large", message: `the answer is larger than ${declarativeLimits.httpResponseMaxBytes} bytes; it was cut off` });
  assert.deepEqual(await call("hang", {}), { status: "timeout", message: "no answer within 300 ms; the request was ended" });
});

test("an answer nested deeper than toolResultDepthMax is a tool error, not a result nobody can serialise", async () => {
  const tooDeep = { status: "error", code: "tools.result_too_deep", message: `result: nested deeper than ${toolResultDepthMax} levels` };
  assert.deepEqual(await call("deep", {}), tooDeep);
  // With a credential to redact (a recursive walk) it is the same error, not the answer's raw text.
  assert.deepEqual(await call("deepAuth", {}), tooDeep);
  let v = okResult<unknown>(await call("deepOk", {}));
  for (let i = 0; i < toolResultDepthMax; i++) v = (v as unknown[])[0];
  assert.equal(v, 1);
});

test("unload: a call in flight ends with 'definition missing', later calls too; other plugins are untouched", async () => {
  const pending = host.call("web.wait", {}, { sessionKey: "test" });
  await until(() => main.seen.some((s) => s.url === "/hang" && s.method === "GET"), 10_000, "the call to reach the server");
  const away = tempDir("aa-decl-away-");
  cleanup.push(() => rmSync(away, { recursive: true, force: true }));
  const { renameSync } = await import("node:fs");
  renameSync(join(root, "web"), join(away, "web"));
  assert.deepEqual(await catalog.reload(), { loaded: [], replaced: [], unloaded: ["web"], rejected: [] });
  const { durationMs: _, ...ended } = await pending;
  assert.deepEqual(ended, { status: "error", code: "tools.definition_missing", message: "definition missing: web.wait" });
  assert.deepEqual(await call("get", { id: "1" }), { status: "refused", code: "tools.definition_missing", message: "definition missing: web.get" });
  assert.deepEqual(await call("ping", {}, "bystander"), { status: "ok", result: "/ping" });
  assert.deepEqual((await host.allTools()).tools.map((x) => x.qualifiedName), ["bystander.ping"]);
  assert.deepEqual(await call("x", {}, "never"), { status: "refused", code: "tools.unknown_plugin", message: "no such tool plugin: never" });
  // Back again: offered and called as before.
  renameSync(join(away, "web"), join(root, "web"));
  assert.deepEqual((await catalog.reload()).loaded, ["web"]);
  assert.deepEqual(await call("get", { id: "1" }), { status: "ok", result: "second" });
});

test("a request to the hub itself names the agent's call (agent-autoloop-tool-call), so its event is one hop deeper; no other host gets it (issue 26, finding 12)", async () => {
  // The hub as its caller reached it (callbackUrl) is main; other is another origin. Varied: the hub by another
  // loopback name, a redirect from the hub to another origin, the owner's own call (no call id), and a template that
  // would set the header itself (refused when loaded: the host sets it).
  const ctx = (hub: string | null, toolCall?: number) => ({ sessionKey: "alerts:s1", ...(hub ? { callbackUrl: `${hub}/v1/plugins/callback/` } : {}), ...(toolCall !== undefined ? { toolCall } : {}) });
  const headerOf = async (tool: string, c: ReturnType<typeof ctx>, server: LocalServer = main) => {
    const seen = await seenBy(() => host.call(`web.${tool}`, {}, c), server);
    return seen.map((s) => s.headers["agent-autoloop-tool-call"] ?? null);
  };
  assert.deepEqual(await headerOf("bearer", ctx(main.url, 42)), ["42"], "to the hub: the call's id");
  assert.deepEqual(await headerOf("bearer", ctx(`http://localhost:${main.port}`, 43)), ["43"], "the hub by another loopback name");
  assert.deepEqual(await headerOf("bearer", ctx(other.url, 44)), [null], "another origin than the hub's");
  assert.deepEqual(await headerOf("bearer", ctx(main.url)), [null], "no call id (the owner's own call)");
  const redirected = await seenBy(() => host.call("web.toOther", {}, ctx(main.url, 45)), other);
  assert.deepEqual([main.seen.at(-1)!.headers["agent-autoloop-tool-call"], redirected.map((s) => s.headers["agent-autoloop-tool-call"] ?? null)], ["45", [null]],
    "sent to the hub, dropped on the redirect to another origin");
  const forged = tempDir("aa-decl-forged-");
  cleanup.push(() => rmSync(forged, { recursive: true, force: true }));
  writeFiles(join(forged, "forge"), {
    "plugin.json": minimalManifest("forge", { requires: { network: [`127.0.0.1:${main.port}`] }, provides: { tools: ["post"] } }),
    "tools/post.json": { name: "post", parameters: { type: "object" }, http: { url: `${main.url}/echo`, headers: { "Agent-Autoloop-Tool-Call": "1" } } },
  });
  const report = await new DeclarativeCatalog({ roots: [{ dir: forged, origin: "home" }], lang: "en" }).reload();
  assert.deepEqual(report.rejected.map((r) => r.errors.map((e) => e.split(`${forged}/`).join(""))), [
    ["forge/tools/post.json#/http/headers/Agent-Autoloop-Tool-Call: header Agent-Autoloop-Tool-Call is set by the host"],
  ]);
});

test("issue 26 r24 F24-1 (reported cases: the hub as 0.0.0.0:<port> and by the machine's hostname): whether a request may reach the hub is decided by where it can land, not by the host's spelling", async () => {
  const { toHub } = await import("../src/declarative/http.js");
  const { networkInterfaces } = await import("node:os");
  const hub = ["http://127.0.0.1:38765/v1/plugins/callback/", null, "https://hub.example.com"];
  const at = (u: string) => toHub(new URL(u), hub);
  const own = Object.values(networkInterfaces()).flat().map((a) => a!).find((a) => a.family === "IPv4" && !a.internal)?.address;
  for (const u of ["http://127.0.0.1:38765/v1/events", "http://0.0.0.0:38765/v1/events", "http://vm:38765/v1/events", "http://localhost:38765/",
    "http://[::1]:38765/", "http://[::]:38765/", "http://[::ffff:127.0.0.1]:38765/", "http://127.1:38765/", "http://2130706433:38765/", "http://127.9.9.9:38765/",
    "http://a.example.org:38765/", "https://hub.example.com/v1/events", ...(own ? [`http://${own}:38765/`] : [])]) {
    assert.equal(at(u), true, u);
  }
  for (const u of ["http://127.0.0.1:38766/", "https://127.0.0.1:38765/", "http://203.0.113.9:38765/", "http://[2001:db8::1]:38765/", "https://other.example.com/", "http://hub.example.com/"]) {
    assert.equal(at(u), false, u);
  }
});
