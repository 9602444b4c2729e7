/**
 * The rules file cannot hurt the hub (issue 14): a file nested too deep, too large, not a regular file (a FIFO, a
 * directory) or unreadable is refused like a syntax error — the old rules keep running, one card says why, `check` says
 * the same — and a hub whose stored rules are now refused still starts on them. A rules version is stored once.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, closeSync, mkdirSync, openSync, ftruncateSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hubFixture, baseRules, engine, tempDir, type Fixture } from "./helpers.js";
import { startServe } from "../src/host/serve.js";
import { readRulesInput, systemTimeZone } from "../src/host/rules-file.js";
import { Store } from "../src/host/store.js";
import { readMasterKey } from "../src/host/home.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { hashKey, hashText } from "../src/kernel/credentials.js";
import type { State } from "../src/protocol/responses.js";

const bin = join(engine, "bin", "agent-autoloop.js");

/** `agent-autoloop check <file>` as a child process, killed after 20 s (a check that blocks fails, it does not hang the tests). */
function check(file: string, uid?: number): { code: number | null; err: string; out: string } {
  const r = spawnSync(process.execPath, [bin, "check", file], {
    env: { ...process.env, AGENT_AUTOLOOP_LANG: "en" }, encoding: "utf8", timeout: 20_000,
    ...(uid === undefined ? {} : { uid, gid: uid }),
  });
  return { code: r.status, err: r.stderr.trim(), out: r.stdout.trim() };
}

/** The open cards of the owner's state, as [title, text]. */
async function cards(f: Fixture): Promise<[string, string][]> {
  return (await f.call("GET", "/v1/state", f.keys.owner)).body.cards.map((c: { title: string; text: string }) => [c.title, c.text]);
}

/** The old rules still route: an event of source shop and type alert.* goes to rule "alerts". */
async function stillRoutes(f: Fixture, id: string): Promise<void> {
  const ev = await f.call("POST", "/v1/events", f.keys.source, { id, type: "alert.x" });
  assert.deepEqual(ev.body.routed, ["alerts"], "the old rules keep running");
}

const refusedTitle = "rules.json has an error; the old rules keep running";
const unreadableTitle = "rules.json cannot be read; the old rules keep running";
/** A file nested `levels` deep. About 2,500 levels (6 KB) ended the hub of the report; how deep a walk may go before
 * V8's stack ends depends on the stack it starts on, so 20,000 levels are tried too. */
const deep = (levels: number) => `{"rules": ${"[".repeat(levels)}${"]".repeat(levels)}}`;
const depthError = (file: string) => `${file}:1:${11 + 15}: JSON: more than 16 objects and arrays inside one another`;

/** Stops the fixture's hub (keeping its home) and starts another one on the same home. */
async function restart(f: Fixture): Promise<Fixture> {
  await f.running.close();
  const running = await startServe(f.home, { lang: "en", log: () => {} });
  const url = running.url;
  return {
    ...f, running, url,
    async call(method, path, key, body) {
      const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
      if (body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: await res.json() };
    },
    async close() {
      await running.close();
      rmSync(f.home.dir, { recursive: true, force: true });
    },
  };
}

test("a rules.json nested 2,500 levels deep is refused while the hub runs, and the hub starts again on the last good version", async () => {
  let f = await hubFixture();
  try {
    writeFileSync(f.home.rules, deep(20_000));
    await f.running.hub.reloadRules();
    assert.deepEqual(await cards(f), [[refusedTitle, depthError(f.home.rules)]]);
    writeFileSync(f.home.rules, deep(2_500));
    await f.running.hub.reloadRules();
    assert.deepEqual(await cards(f), [[refusedTitle, depthError(f.home.rules)]], "the same error: still one card");
    await stillRoutes(f, "1");
    writeFileSync(f.home.rules, deep(20_000));
    f = await restart(f);
    assert.equal((await f.call("GET", "/v1/state", f.keys.owner)).body.rulesVersion, 1);
    assert.deepEqual(await cards(f), [[refusedTitle, depthError(f.home.rules)]], "the same card, not a second one");
    await stillRoutes(f, "2");
    const c = check(f.home.rules);
    assert.deepEqual([c.code, c.err], [1, `agent-autoloop: ${depthError(f.home.rules)}`]);
  } finally {
    await f.close();
  }
});

test("a rules.json that is a FIFO never blocks: the running hub, a starting hub and check refuse it at once", async () => {
  let f = await hubFixture();
  // Should a read of the FIFO block, this writer ends each wait within 5 s with "{}", and the assertions below fail.
  let writer: ReturnType<typeof spawn> | null = null;
  try {
    unlinkSync(f.home.rules);
    assert.equal(spawnSync("mkfifo", [f.home.rules]).status, 0);
    writer = spawn("sh", ["-c", `while :; do sleep 5; printf '{}' > "$0"; done`, f.home.rules], { stdio: "ignore" });
    const error = `${f.home.rules}: not a regular file (a FIFO)`;
    await f.running.hub.reloadRules();
    assert.deepEqual(await cards(f), [[unreadableTitle, error]]);
    await stillRoutes(f, "1");
    f = await restart(f);
    assert.deepEqual(await cards(f), [[unreadableTitle, error]]);
    await stillRoutes(f, "2");
    const c = check(f.home.rules);
    assert.deepEqual([c.code, c.err], [1, `agent-autoloop: ${error}`]);
  } finally {
    writer?.kill();
    await f.close();
  }
});

test("a rules.json that is a directory is refused with that reason; check says the same", async () => {
  const f = await hubFixture();
  try {
    unlinkSync(f.home.rules);
    mkdirSync(f.home.rules);
    const error = `${f.home.rules}: not a regular file (a directory)`;
    await f.running.hub.reloadRules();
    assert.deepEqual(await cards(f), [[unreadableTitle, error]]);
    await stillRoutes(f, "1");
    const c = check(f.home.rules);
    assert.deepEqual([c.code, c.err], [1, `agent-autoloop: ${error}`]);
  } finally {
    await f.close();
  }
});

test("a 60 MB rules.json is refused by its size without being read; check says the same", async () => {
  const f = await hubFixture();
  try {
    const fd = openSync(f.home.rules, "w");
    ftruncateSync(fd, 60 * 1024 * 1024); // sparse: 60 MB of NUL bytes without writing them
    closeSync(fd);
    const error = `${f.home.rules}: 62914560 bytes, larger than 4 MiB (4194304 bytes)`;
    await f.running.hub.reloadRules();
    assert.deepEqual(await cards(f), [[refusedTitle, error]]);
    await stillRoutes(f, "1");
    const c = check(f.home.rules);
    assert.deepEqual([c.code, c.err], [1, `agent-autoloop: ${error}`]);
  } finally {
    await f.close();
  }
});

test("check names a rules file it may not read (permission denied)", () => {
  const dir = tempDir();
  try {
    chmodSync(dir, 0o755);
    const file = join(dir, "rules.json");
    writeFileSync(file, "{}");
    chmodSync(file, 0o000);
    // root reads any file: run check as nobody then.
    const c = check(file, process.getuid?.() === 0 ? 65534 : undefined);
    assert.deepEqual([c.code, c.err], [1, `agent-autoloop: ${file}: permission denied (EACCES)`]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a hub whose stored rules are over a limit today still starts on them, with a card naming the limit", async () => {
  const dir = tempDir();
  const home = (await import("../src/host/home.js")).homePaths(dir);
  try {
    // 1,001 rules: what a hub before the limit accepted and stored.
    const file = { ...baseRules, rules: Array.from({ length: 1001 }, (_, i) => ({ ...baseRules.rules[0], name: `r${i}` })) };
    const under = parseRules(JSON.stringify({ ...file, rules: file.rules.slice(1) }), { timezone: "UTC" });
    assert.ok(under.ok);
    const stored = { ...under.rules, rules: [{ ...under.rules.rules[0]!, name: "r0", group: "r0" }, ...under.rules.rules] };
    const master = readMasterKey(home, true);
    const store = new Store({ path: home.database, master });
    store.commit([{ input: { kind: "rules", rules: stored, hash: hashText(JSON.stringify(stored)) }, now: Date.now() }], { master, lang: "en", publicUrl: null });
    store.close();
    writeFileSync(home.rules, JSON.stringify(file));
    writeFileSync(home.config, JSON.stringify({ listen: "127.0.0.1:0", publicUrl: null, owner: "o".repeat(43), worker: null, channels: {} }));
    const running = await startServe(home, { lang: "en", log: () => {} });
    try {
      // The owner's state over HTTP (an owner key made locally, as `key new` makes it).
      await running.hub.submit({ kind: "keyNew", keyHash: null, local: true, keyKind: "owner", name: "me", newHash: hashKey("owner-key") });
      const res = await fetch(`${running.url}/v1/state`, { headers: { authorization: "Bearer owner-key" } });
      const state = (await res.json()) as State;
      assert.deepEqual([res.status, state.rulesVersion, state.lines.length], [200, 1, 1001]);
      const at = JSON.stringify(file).indexOf('{"name":"r1000"') + 1;
      assert.deepEqual(state.cards.map((c) => [c.title, c.text]), [[refusedTitle, `${home.rules}:1:${at}: rules: at most 1000 rules`]]);
    } finally {
      await running.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// The store's own test: where a rules version is kept (it reads the log and the projection).
test("a rules version is stored once: in the log; the projection keeps its version, hash and where the log has it", async () => {
  const f = await hubFixture();
  try {
    const db = f.running.hub.store.db;
    const row = JSON.parse((db.prepare("SELECT data FROM v_meta WHERE key = 'rules'").get() as { data: string }).data);
    assert.deepEqual(Object.keys(row), ["version", "hash", "at", "seq"]);
    const body = (db.prepare("SELECT body FROM facts WHERE seq = ?").get(row.seq) as { body: string }).body;
    const inLog = (JSON.parse(body) as [string, string, { rules?: unknown }][]).find(([t, k]) => t === "meta" && k === "rules")![2].rules;
    assert.deepEqual(f.running.hub.store.view.rules()!.rules, inLog);
    const bodies = db.prepare("SELECT COUNT(*) AS n FROM facts WHERE body LIKE '%handle it%'").get() as { n: number };
    assert.equal(bodies.n, 1, "the rule's prompt is in one fact");
    const elsewhere = db.prepare("SELECT COUNT(*) AS n FROM v_meta WHERE data LIKE '%handle it%'").get() as { n: number };
    assert.equal(elsewhere.n, 0, "and nowhere in the projection");
    // A new version points at its own fact; a rebuild of the projection from the log gives the same rules.
    f.writeRules({ ...baseRules, askFirst: ["spend money"] });
    await f.running.hub.reloadRules();
    const v2 = f.running.hub.store.view.rules()!;
    assert.deepEqual([v2.version, v2.rules.askFirst], [2, ["spend money"]]);
    await f.running.close();
    const master = readMasterKey(f.home);
    const rebuilt = new Store({ path: f.home.database, master, fingerprint: "another format" });
    try {
      assert.equal(rebuilt.opened.rebuilt, true);
      assert.deepEqual(rebuilt.view.rules(), v2);
    } finally {
      rebuilt.close();
    }
  } finally {
    await f.running.close();
    rmSync(f.home.dir, { recursive: true, force: true });
  }
});

test("rules of other sources do not take part in routing an event; the routed rules keep the order of the file", async () => {
  const rules = {
    ...baseRules,
    rules: [
      { name: "b", when: { source: "shop", types: ["x.*"] }, to: "bot" },
      { name: "other", when: { source: "crm", types: ["*"] }, to: "bot" },
      { name: "a", when: { source: "shop", types: ["*.y"] }, to: "bot" },
      { name: "never", when: { source: "shop", types: ["z"] }, to: "bot" },
    ],
  };
  const f = await hubFixture(rules);
  try {
    const ev = await f.call("POST", "/v1/events", f.keys.source, { id: "1", type: "x.y" });
    assert.deepEqual(ev.body.routed, ["b", "a"]);
  } finally {
    await f.close();
  }
});

test("a rules file without a time zone takes the system's, one that names one keeps it (the system's is asked only when needed)", () => {
  const dir = tempDir("aa-rules-tz-");
  try {
    const file = join(dir, "rules.json");
    const { timezone: _, ...without } = baseRules as Record<string, unknown>;
    writeFileSync(file, JSON.stringify(without));
    const plain = readRulesInput(file, "en");
    assert.equal(plain.kind, "rules");
    assert.equal(plain.kind === "rules" && plain.rules.timezone, systemTimeZone());
    writeFileSync(file, JSON.stringify({ ...without, timezone: "Asia/Shanghai" }));
    const named = readRulesInput(file, "en");
    assert.equal(named.kind === "rules" && named.rules.timezone, "Asia/Shanghai");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
