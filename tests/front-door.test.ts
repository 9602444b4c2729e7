/**
 * What a person or a program finds at the hub's address without a key: `GET /v1/health` says it is up and which
 * release it runs, nothing secret; a browser opening `/` gets a short page that says what this is and where to look.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { engine, hubFixture } from "./helpers.js";

const f = await hubFixture();
after(() => f.close());

/** The release tag `agent-autoloop --version` reports (`unreleased` when this commit has none), without the commit. */
function cliReleaseTag(): string {
  const r = spawnSync(process.execPath, [join(engine, "bin", "agent-autoloop.js"), "--version"], { encoding: "utf8", env: { ...process.env, AGENT_AUTOLOOP_LANG: "en" } });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().replace(/ \([0-9a-f]+\)$/, "");
}

test("GET /v1/health needs no key and answers {ok, version}: the release tag --version reports, or unreleased; nothing secret", async () => {
  const res = await fetch(`${f.url}/v1/health`);
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.deepEqual(JSON.parse(text), { ok: true, version: cliReleaseTag() });
  const secrets = [f.keys.owner, f.keys.worker, f.keys.channel, f.keys.source, readFileSync(f.home.masterKey, "utf8").trim(), f.home.dir];
  for (const s of secrets) assert.equal(text.includes(s), false, "no key, no master key, no home path");
  // The same answer again (the version is looked up once).
  assert.deepEqual(await (await fetch(`${f.url}/v1/health`)).json(), JSON.parse(text));
});

test("a browser opening the hub's root gets a short page saying what this is and where to look, not a JSON 404", async () => {
  const res = await fetch(`${f.url}/`, { headers: { accept: "text/html" } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/html; charset=UTF-8");
  assert.equal(res.headers.get("content-security-policy"), "default-src 'none'; style-src 'unsafe-inline'");
  const html = await res.text();
  assert.match(html, /^<!doctype html>/);
  assert.match(html, /<title>agent-autoloop hub<\/title>/);
  assert.match(html, /This is an agent-autoloop hub: it turns events into coding-agent runs/);
  assert.match(html, /<code>agent-autoloop status<\/code>/);
  assert.match(html, /README/);
  assert.match(html, /<a href="\/v1\/health">\/v1\/health<\/a>/);
  // It points to the owner console and how to sign in to it (issue 17).
  assert.match(html, /The owner console: <a href="\/console\/">\/console\/<\/a> \(sign in with the link <code>agent-autoloop console<\/code> prints\)\./);
  assert.equal(/<script|<form|<img/i.test(html), false, "a plain page");
  for (const s of [f.keys.owner, f.home.dir]) assert.equal(html.includes(s), false, "nothing secret");
  const head = await fetch(`${f.url}/`, { method: "HEAD" });
  assert.equal(head.status, 200);
  // Only the root: any other path outside /v1 is still the JSON 404.
  const other = await f.call("GET", "/index.html", null);
  assert.deepEqual([other.status, other.body], [404, { error: "no such endpoint: GET /index.html" }]);
});
