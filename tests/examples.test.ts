/**
 * examples/worker.sh and examples/channel.sh (curl and jq only) through a real hub: ask, deliver, answer, continue,
 * wrong key. Their curl is a recorder on PATH in front of the real one: no key or run token may be on its command line
 * (issue 26 round 11, F2b: every local user reads /proc/<pid>/cmdline).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { hubFixture, engine, tempDir } from "./helpers.js";

/** A folder with a `curl` that appends its arguments (NUL-separated, one call a line) to `argv.log`, then runs curl. */
const fake = tempDir("aa-fake-curl-");
const realCurl = execFileSync("sh", ["-c", "command -v curl"], { encoding: "utf8" }).trim();
writeFileSync(join(fake, "curl"), `#!/bin/sh
printf '%s\\0' "$@" >> '${join(fake, "argv.log")}'
printf '\\n' >> '${join(fake, "argv.log")}'
exec '${realCurl}' "$@"
`);
chmodSync(join(fake, "curl"), 0o755);

/** Every curl command line the scripts ran so far, as argument lists. */
function curlCalls(): string[][] {
  let log = "";
  try {
    log = readFileSync(join(fake, "argv.log"), "utf8");
  } catch {
    // no call yet
  }
  return log.split("\0\n").filter(Boolean).map((line) => line.split("\0"));
}

function sh(script: string, env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile("bash", [join(engine, "examples", script)], { env: { PATH: `${fake}${delimiter}${process.env.PATH!}`, ...env } }, (e, out, err) =>
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out: out.trim(), err: err.trim() }));
  });
}

test("worker.sh asks, channel.sh shows the card, the answer reaches worker.sh's next job; a wrong key is refused", async () => {
  const f = await hubFixture();
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "x1", type: "alert.x", summary: "disk full" });
    const w = await sh("worker.sh", {
      AGENT_AUTOLOOP_URL: f.url, AGENT_AUTOLOOP_KEY: f.keys.worker, AGENT_AUTOLOOP_ONCE: "1",
      AGENT_AUTOLOOP_RECEIPT: JSON.stringify({ summary: "asked", ask: [{ title: "Free space?", options: ["delete logs", "wait"] }] }),
    });
    assert.equal(w.code, 0, w.err);
    assert.equal(w.out, "run 1: alerts, 1 events, 0 answers\nrun 1: handed in done");
    const c = await sh("channel.sh", { AGENT_AUTOLOOP_URL: f.url, AGENT_AUTOLOOP_KEY: f.keys.channel, AGENT_AUTOLOOP_ONCE: "1" });
    assert.equal(c.code, 0, c.err);
    assert.equal(c.out, "── card 1 v1 · ask · open\nFree space?\n\n  0) delete logs\n  1) wait");
    const st = (await f.call("GET", "/v1/state", f.keys.owner)).body;
    assert.equal(st.cards[0].deliveries.ch1.ref, "terminal-1");
    await f.call("POST", "/v1/cards/1/answer", f.keys.owner, { choice: 0 });
    const w2 = await sh("worker.sh", { AGENT_AUTOLOOP_URL: f.url, AGENT_AUTOLOOP_KEY: f.keys.worker, AGENT_AUTOLOOP_ONCE: "1" });
    assert.equal(w2.out, "run 2: alerts, 0 events, 1 answers\nrun 2: handed in done");
    assert.equal((await f.call("GET", "/v1/state", f.keys.owner)).body.runs[0].state, "done");
    const bad = await sh("worker.sh", { AGENT_AUTOLOOP_URL: f.url, AGENT_AUTOLOOP_KEY: "wrong", AGENT_AUTOLOOP_ONCE: "1" });
    assert.notEqual(bad.code, 0);
    assert.equal(bad.err, "worker.sh: GET /v1/work?claim=" + bad.err.split("claim=")[1]!.split("&")[0] + "&wait=0&capacity=1: HTTP 401: unknown key");
    // Issue 26 r11 F2b: the keys and the run tokens went to curl through its stdin, never on its command line.
    const calls = curlCalls();
    assert.deepEqual(calls.map((argv) => `${argv[2]} ${argv[3]!.replace(f.url, "").replace(/claim=[^&]+/, "claim=…")}`), [
      "GET /v1/work?claim=…&wait=0&capacity=1", "POST /v1/runs/1/started", "POST /v1/runs/1/result", "GET /v1/cards/next?wait=0", "POST /v1/cards/1/delivered",
      "GET /v1/work?claim=…&wait=0&capacity=1", "POST /v1/runs/2/started", "POST /v1/runs/2/result", "GET /v1/work?claim=…&wait=0&capacity=1",
    ]);
    const secrets = [f.keys.worker, f.keys.channel, "wrong", "Bearer"];
    assert.deepEqual(calls.flat().filter((arg) => secrets.some((s) => arg.includes(s))), []);
  } finally {
    await f.close();
    rmSync(fake, { recursive: true, force: true });
  }
});
