/**
 * Issue 26, round 5, F3: a program on this computer (a sandboxed agent shares its network) learns the home id from
 * the keyless `/v1/health` header, takes the hub's address while the hub is down, and answers with that id. The CLI
 * must send no key to it: before any keyed request, a hub found here proves it holds this home's master key (an
 * HMAC of the client's random challenge). Every command that finds the hub is tried against impostors of several
 * kinds (no proof, a made-up proof, the challenge echoed, a proof for another challenge), then against the real hub.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createHmac, hkdfSync } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliBin, cliEnv, cliHomes, runCli } from "./cli-homes.js";
import { serveProcess, freePort } from "./helpers.js";

const bin = cliBin;
const homes = cliHomes("aa-hub-proof-");
const { root, children } = homes;

const envFor = cliEnv;

const cli = runCli;

const newHome = homes.newHome;

type Forge = "none" | "garbage" | "echo" | "stale";

/** The F3 agent: answers every request as this home's hub would (its home id), with a proof forged as `forge` says. */
async function impostor(homeId: string, forge: Forge, port = 0): Promise<{ url: string; auth: string[]; close(): Promise<void> }> {
  const auth: string[] = [];
  // A proof that is right for some challenge, but not the one asked now (seen from the real hub once).
  const stale = "Xy3Y1oA9o0b3d1mZ0b9m0s6r7cV8p0zQb1n2Lk3wD5s";
  const server: Server = createServer((req: IncomingMessage, res) => {
    if (req.headers.authorization) auth.push(req.headers.authorization);
    req.resume();
    const headers: Record<string, string> = { "content-type": "application/json", "x-agent-autoloop-home": homeId };
    const challenge = String(req.headers["x-agent-autoloop-challenge"] ?? "");
    if (forge === "garbage") headers["x-agent-autoloop-proof"] = "A".repeat(43);
    if (forge === "echo") headers["x-agent-autoloop-proof"] = challenge;
    if (forge === "stale") headers["x-agent-autoloop-proof"] = stale;
    if (req.url?.startsWith("/v1/health")) res.writeHead(200, headers).end('{"ok":true,"version":"unreleased"}');
    else res.writeHead(503, headers).end('{"error":"busy, try again"}');
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    auth,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

type ToolResult = { isError?: boolean; content: { text: string }[] };

/** Starts `agent-autoloop mcp` on `home`. @returns `status()`: one `tools/call status`, its result; `end()`. */
function mcpSession(home: string): { status(): Promise<ToolResult>; end(): void } {
  const mcp = spawn(process.execPath, [bin, "mcp"], { env: envFor(home), stdio: ["pipe", "pipe", "pipe"] });
  children.push(mcp);
  let buf = "";
  const answers: any[] = [];
  mcp.stdout!.on("data", (d) => {
    buf += d;
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      answers.push(JSON.parse(buf.slice(0, i)));
      buf = buf.slice(i + 1);
    }
  });
  const send = (m: unknown) => mcp.stdin!.write(JSON.stringify(m) + "\n");
  send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  let id = 1;
  return {
    async status() {
      const mine = ++id;
      send({ jsonrpc: "2.0", id: mine, method: "tools/call", params: { name: "status", arguments: {} } });
      const deadline = Date.now() + 20_000;
      while (!answers.some((a) => a.id === mine) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const answer = answers.find((a) => a.id === mine);
      assert.ok(answer, "mcp answered tools/call");
      return answer.result;
    },
    end: () => void mcp.stdin!.end(),
  };
}

/** Asks `tools/call status` of a new `agent-autoloop mcp` once. @returns the tool result. */
async function mcpStatus(home: string): Promise<ToolResult> {
  const session = mcpSession(home);
  try {
    return await session.status();
  } finally {
    session.end();
  }
}

const homeIdOf = (home: string) => readFileSync(join(home, "home.id"), "utf8").trim();

test("F3: a server on the hub's address with this home's id but no proof of the master key gets no key from any command; doctor calls it a possible impostor", async () => {
  for (const forge of ["none", "garbage", "echo", "stale"] as const) {
    const home = newHome("127.0.0.1:1");
    const fake = await impostor(homeIdOf(home), forge);
    try {
      // The address serve uses (config.json listen), as in the report, and the same server named by AGENT_AUTOLOOP_URL.
      const config = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
      writeFileSync(join(home, "config.json"), JSON.stringify({ ...config, listen: fake.url.replace("http://", "") }));
      const reason = `the server at ${fake.url} answers with this home's id (${homeIdOf(home)}) but cannot prove it holds this home's master key: it may be an impostor holding the hub's address (another program, an agent), or a hub of an older version; nothing was sent to it. Stop what listens there (agent-autoloop serve cannot start while it does), then start agent-autoloop serve`;
      for (const args of [["status"], ["answer", "1", "0"], ["stop", "1"], ["why", "1"], ["console", "--no-open"]]) {
        const r = await cli(home, args);
        assert.deepEqual([r.code, r.err], [1, `agent-autoloop: ${reason}`], `${forge}: ${args.join(" ")}`);
      }
      // plugins list reads the home itself when no hub of it answers: it asks the impostor nothing with a key.
      assert.equal((await cli(home, ["plugins", "list"])).code, 0, `${forge}: plugins list`);
      const viaEnv = await cli(home, ["status"], { AGENT_AUTOLOOP_URL: fake.url });
      assert.deepEqual([viaEnv.code, viaEnv.err], [1, `agent-autoloop: ${reason}`], `${forge}: AGENT_AUTOLOOP_URL`);
      const doctor = await cli(home, ["doctor"]);
      const hubLine = doctor.out.split("\n").find((l) => l.includes("hub:"));
      assert.equal(hubLine, `FIX  hub: ${reason}`, `${forge}: doctor`);
      const mcp = await mcpStatus(home);
      assert.deepEqual([mcp.isError, mcp.content[0]!.text], [true, reason], `${forge}: mcp`);
      assert.deepEqual(fake.auth, [], `${forge}: no request carried a key`);
    } finally {
      await fake.close();
    }
  }
});

test("F3: the real hub answers a challenge with HMAC-SHA256 (of the challenge and the address it was reached at: F11) under a key derived from the master key (HKDF), and the CLI finds it; a malformed challenge gets no proof", async () => {
  const home = newHome("127.0.0.1:1");
  const hub = await serveProcess(home, undefined, envFor(home));
  children.push(hub.child);
  try {
    const master = Buffer.from(readFileSync(join(home, "master.key"), "utf8").trim(), "hex");
    const key = Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), "agent-autoloop hub proof v2", 32));
    const challenge = "c".repeat(43);
    const res = await fetch(`${hub.url}/v1/health`, { headers: { "x-agent-autoloop-challenge": challenge } });
    assert.equal(res.status, 200);
    const at = `127.0.0.1 ${new URL(hub.url).port}`;
    assert.equal(res.headers.get("x-agent-autoloop-proof"), createHmac("sha256", key).update(`${challenge}\n${at}`).digest("base64url"));
    for (const bad of ["short", "c".repeat(200), "c".repeat(42) + "!"]) {
      const r = await fetch(`${hub.url}/v1/health`, { headers: { "x-agent-autoloop-challenge": bad } });
      assert.deepEqual([r.status, r.headers.get("x-agent-autoloop-proof")], [200, null], bad);
    }
    assert.equal((await fetch(`${hub.url}/v1/health`)).headers.get("x-agent-autoloop-proof"), null, "no challenge, no proof");

    const status = await cli(home, ["status"]);
    assert.equal(status.code, 0, status.err);
    const doctor = await cli(home, ["doctor"]);
    assert.ok(doctor.out.split("\n").includes(`ok   hub: up at ${hub.url}`), doctor.out);
    const mcp = await mcpStatus(home);
    assert.equal(mcp.isError, undefined, mcp.content[0]!.text);
  } finally {
    await hub.stop();
  }
});

test("F3: a home without master.key (a CLI given a remote hub's URL and keys) checks the home id only, as before", async () => {
  const home = newHome("127.0.0.1:1");
  const hub = await serveProcess(home, undefined, envFor(home));
  children.push(hub.child);
  try {
    // A copy of the home without its master key and without the running hub's record: a client elsewhere.
    const remote = join(root, "remote-copy");
    spawnSync("cp", ["-r", home, remote]);
    rmSync(join(remote, "master.key"));
    rmSync(join(remote, "hub.json"));
    rmSync(join(remote, "hub.pid"));
    const status = await cli(remote, ["status"], { AGENT_AUTOLOOP_URL: hub.url });
    assert.equal(status.code, 0, status.err);
  } finally {
    await hub.stop();
  }
});

test("F3: agent-autoloop mcp proves the hub again before each call: a hub that stopped between two calls left its address to an impostor, which gets no key", async () => {
  const port = await freePort();
  const home = newHome(`127.0.0.1:${port}`);
  const hub = await serveProcess(home, undefined, envFor(home), `127.0.0.1:${port}`);
  children.push(hub.child);
  const session = mcpSession(home);
  try {
    const first = await session.status();
    assert.equal(first.isError, undefined, first.content[0]!.text);
    await hub.stop();
    const fake = await impostor(homeIdOf(home), "none", port);
    try {
      const second = await session.status();
      assert.equal(second.isError, true);
      assert.match(second.content[0]!.text, /cannot prove it holds this home's master key/);
      assert.deepEqual(fake.auth, [], "no key reached the impostor");
    } finally {
      await fake.close();
    }
  } finally {
    session.end();
    await hub.stop();
  }
});

/**
 * A relay: answers on its own address by passing every request on to the real hub at `real` (the challenge
 * included, so the real hub's proof comes back), keeping each key it is sent. Listens on `host`, port `port` (0: any).
 */
async function relay(real: string, host = "127.0.0.1", port = 0): Promise<{ url: string; auth: string[]; seen: string[]; close(): Promise<void> }> {
  const auth: string[] = [];
  const seen: string[] = [];
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    seen.push(req.url ?? "");
    if (req.headers.authorization) auth.push(req.headers.authorization);
    req.resume();
    const headers: Record<string, string> = {};
    for (const name of ["x-agent-autoloop-challenge", "authorization"]) if (typeof req.headers[name] === "string") headers[name] = req.headers[name] as string;
    const r = await fetch(real + req.url, { headers }).catch(() => null);
    if (!r) return void res.writeHead(502).end();
    const back: Record<string, string> = { "content-type": r.headers.get("content-type") ?? "application/json" };
    for (const [k, v] of r.headers) if (k.startsWith("x-agent-autoloop")) back[k] = v;
    res.writeHead(r.status, back).end(Buffer.from(await r.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(port, host, r));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    auth, seen,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

test("issue 26 round 11, F11: while the home's running hub recorded its address and does not answer (an agent stalled it), the CLI tries no other address — config.json's, where a relay waits — and sends nothing", async () => {
  const home = newHome("127.0.0.1:1");
  const hub = await serveProcess(home, undefined, envFor(home));
  children.push(hub.child);
  const fake = await relay(hub.url);
  try {
    const config = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
    writeFileSync(join(home, "config.json"), JSON.stringify({ ...config, listen: fake.url.replace("http://", "") }));
    hub.child.kill("SIGSTOP"); // the report froze its event loop with tool calls; a stopped process answers as little
    try {
      const r = await cli(home, ["status"]);
      assert.deepEqual([r.code, r.err], [1, `agent-autoloop: this home's running hub recorded ${hub.url} but did not answer (The operation was aborted due to timeout): busy or stopping? No other address was tried and nothing was sent. Try again in a moment`]);
      assert.deepEqual([fake.seen, fake.auth], [[], []], "the relay was never asked");
    } finally {
      hub.child.kill("SIGCONT");
    }
    assert.equal((await cli(home, ["status"])).code, 0, "answering again: found");
  } finally {
    await fake.close();
    await hub.stop();
  }
});

test("issue 26 round 11, F11: a relay on another address passes the challenge to the real hub and its proof back — the proof names the address the hub was reached at, so no command sends the relay a key", async () => {
  // The hub on a port of its own (`serve --listen 127.0.0.1:0`, as in the report); config.json's listen is the relay's
  // address: another port on 127.0.0.1, and the hub's own port on another loopback address (127.0.0.2).
  const home = newHome("127.0.0.1:1");
  const hub = await serveProcess(home, undefined, envFor(home));
  children.push(hub.child);
  try {
    const hubPort = Number(new URL(hub.url).port);
    for (const [host, port] of [["127.0.0.1", 0], ["127.0.0.2", hubPort]] as const) {
      const fake = await relay(hub.url, host, port);
      try {
        const config = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
        writeFileSync(join(home, "config.json"), JSON.stringify({ ...config, listen: fake.url.replace("http://", "") }));
        // The record of the running hub is what the CLI tries first; without it (the report froze the hub past the
        // CLI's 3 s probe instead) the CLI goes on to config.json's address.
        const record = readFileSync(join(home, "hub.json"), "utf8");
        rmSync(join(home, "hub.json"));
        try {
          const reason = `the server at ${fake.url} answers with this home's id (${homeIdOf(home)}) but cannot prove it holds this home's master key: it may be an impostor holding the hub's address (another program, an agent), or a hub of an older version; nothing was sent to it. Stop what listens there (agent-autoloop serve cannot start while it does), then start agent-autoloop serve`;
          for (const args of [["status"], ["why", "1"]]) {
            const r = await cli(home, args);
            assert.deepEqual([r.code, r.err], [1, `agent-autoloop: ${reason}`], `${fake.url}: ${args.join(" ")}`);
          }
          const mcp = await mcpStatus(home);
          assert.deepEqual([mcp.isError, mcp.content[0]!.text], [true, reason], `${fake.url}: mcp`);
          assert.deepEqual(fake.auth, [], `${fake.url}: no request carried a key`);
        } finally {
          writeFileSync(join(home, "hub.json"), record);
        }
      } finally {
        await fake.close();
      }
    }
    // The real hub, reached at its own address, still proves itself.
    const config = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
    writeFileSync(join(home, "config.json"), JSON.stringify({ ...config, listen: hub.url.replace("http://", "") }));
    rmSync(join(home, "hub.json"));
    const status = await cli(home, ["status"]);
    assert.equal(status.code, 0, status.err);
  } finally {
    await hub.stop();
  }
});
