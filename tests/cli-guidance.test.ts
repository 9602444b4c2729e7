/**
 * What the CLI says when a first step goes wrong: an address already taken names it and how to pick another, `doctor`
 * says whether this home's hub is up, `check` names a file it cannot read and why in words, and `key new` warns when
 * rules.json does not name what the key is for.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:net";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { engine, makeHome, tempDir } from "./helpers.js";
import { startServe } from "../src/host/serve.js";

const made = makeHome();
after(() => rmSync(made.dir, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(engine, "bin", "agent-autoloop.js"), ...args], {
      env: { ...process.env, AGENT_AUTOLOOP_HOME: made.dir, AGENT_AUTOLOOP_LANG: "en", AGENT_AUTOLOOP_URL: "http://127.0.0.1:1", DISPLAY: "", WAYLAND_DISPLAY: "", ...env },
      encoding: "utf8",
    }, (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout.trim(), err: stderr.trim() }));
  });
}

/** A TCP server on 127.0.0.1 holding a port, as another program would. */
async function occupied(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, port: (server.address() as { port: number }).port };
}

test("serve on an address already in use names it and how to pick another; the home is left free", async () => {
  const { server, port } = await occupied();
  try {
    const howTo = `Pick another address with --listen HOST:PORT (port 0 picks a free port), or change "listen" in ${made.home.config}`;
    const r = await cli(["serve", "--listen", `127.0.0.1:${port}`]);
    assert.deepEqual([r.code, r.err], [1, `agent-autoloop: cannot listen on 127.0.0.1:${port}: another program already uses this address (EADDRINUSE). ${howTo}`]);
    // In one process: the failed start leaves the home's lock free, so the next start works.
    await assert.rejects(startServe(made.home, { lang: "en", log: () => {}, listen: `127.0.0.1:${port}` }), { message: `cannot listen on 127.0.0.1:${port}: another program already uses this address (EADDRINUSE). ${howTo}` });
    // An address this computer does not have (TEST-NET-1, RFC 5737): the same kind of fault, said the same way.
    await assert.rejects(startServe(made.home, { lang: "en", log: () => {}, listen: "192.0.2.1:0" }), { message: `cannot listen on 192.0.2.1:0: this computer has no such address (EADDRNOTAVAIL). ${howTo}` });
    const running = await startServe(made.home, { lang: "en", log: () => {}, listen: "127.0.0.1:0" });
    await running.close();
  } finally {
    server.close();
  }
});

test("doctor says whether this home's hub is up", async () => {
  const down = await cli(["doctor"]);
  assert.equal(down.code, 0, "a hub not running is nothing to fix: doctor is often run before serve");
  assert.match(down.out, /^ok {3}hub: not running \(cannot reach the hub at http:\/\/127\.0\.0\.1:1: [^)]+\); start it with agent-autoloop serve$/m);
  const running = await startServe(made.home, { lang: "en", log: () => {}, listen: "127.0.0.1:0" });
  try {
    const up = await cli(["doctor"], { AGENT_AUTOLOOP_URL: running.url });
    assert.ok(up.out.split("\n").includes(`ok   hub: up at ${running.url}`), up.out);
  } finally {
    await running.close();
  }
  // A server of another home on the address is not this home's hub: something to fix.
  const other = makeHome();
  const theirs = await startServe(other.home, { lang: "en", log: () => {}, listen: "127.0.0.1:0" });
  try {
    const stranger = await cli(["doctor"], { AGENT_AUTOLOOP_URL: theirs.url });
    assert.equal(stranger.code, 1);
    assert.match(stranger.out, new RegExp(`^FIX  hub: the hub at ${theirs.url.replace(/[.]/g, "\\.")} serves another home`, "m"));
  } finally {
    await theirs.close();
    rmSync(other.dir, { recursive: true, force: true });
  }
});

test("check on a file it cannot read names the file and says why in words", async () => {
  const missing = join(made.dir, "nope.json");
  const r = await cli(["check", missing]);
  assert.deepEqual([r.code, r.err], [1, `agent-autoloop: ${missing}: no such file (ENOENT)`]);
  // With no file named and no home yet: the default file, and how to make it.
  const empty = tempDir("aa-nohome-");
  try {
    const none = await cli(["check"], { AGENT_AUTOLOOP_HOME: empty });
    assert.deepEqual([none.code, none.err], [1, `agent-autoloop: ${join(empty, "rules.json")}: no such file (ENOENT). Run agent-autoloop init first, or name a file: agent-autoloop check <file>`]);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

test("key new warns when rules.json does not name what the key is for; the key is made all the same", async () => {
  const cases: [string, string, string | null][] = [
    ["source", "shop", null],
    ["source", "shopp", 'note: rules.json declares no source "shopp" (its sources: crm, shop): its events are recorded but no rule takes them until it does'],
    ["worker", "w1", null],
    ["worker", "w3", 'note: no agent in rules.json runs on worker "w3" (its workers: w1, w2): it gets no runs until one does'],
    ["channel", "ch2", null],
    ["channel", "slack", 'note: rules.json declares no channel "slack" (its channels: ch1, ch2): no card goes to it until it does'],
    ["owner", "someone", null],
  ];
  for (const [kind, name, warning] of cases) {
    const r = await cli(["key", "new", kind, name]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^[A-Za-z0-9_-]{43}$/, "the key is printed alone on stdout");
    assert.equal(r.err, warning ?? "", `${kind} ${name}`);
  }
});
