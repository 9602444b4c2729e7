/**
 * A process whose own output breaks ends instead of spinning (issue 33; protocol.md 失败表: 日志写不出去 → 进程退出).
 * Real `serve` processes with their standard streams on pipes whose reading ends the test closes, or on /dev/full
 * (a full disk for a log file); real CLI commands whose reader went away.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engine, makeHome, serveProcess, until } from "./helpers.js";
import { exitCodeOf, logBrokenExitCode, pipeClosedExitCode } from "../src/cli/log-streams.js";

const cli = join(engine, "bin", "agent-autoloop.js");
const env = (dir: string) => ({ ...process.env, AGENT_AUTOLOOP_HOME: dir, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "" });

/** User + system CPU time of a live process in ms (Linux /proc; 100 clock ticks a second), or null once it is gone. */
function cpuMs(pid: number): number | null {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

/**
 * Waits for `child` to exit, sampling its CPU time every 20 ms: resolves with its exit code, the time from `since`
 * to the exit (ms) and the CPU time it used between the first and the last sample (ms).
 */
async function exitOf(child: ChildProcess, since: number): Promise<{ code: number | null; signal: string | null; afterMs: number; cpuMs: number }> {
  const first = cpuMs(child.pid!) ?? 0;
  let last = first;
  const sampler = setInterval(() => (last = cpuMs(child.pid!) ?? last), 20);
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve([child.exitCode, child.signalCode]);
    else child.once("exit", (c, s) => resolve([c, s]));
  });
  clearInterval(sampler);
  return { code, signal, afterMs: performance.now() - since, cpuMs: last - first };
}

/** Makes the hub write a log line: a rules.json it cannot use (the hub says so and keeps the last good rules). */
function breakRules(dir: string): void {
  writeFileSync(join(dir, "rules.json"), "{ this is not JSON");
}

test("the policy: a command ends quietly on a closed pipe (141), everything else exits 74", () => {
  assert.equal(exitCodeOf("command", "EPIPE"), pipeClosedExitCode);
  assert.equal(pipeClosedExitCode, 141);
  assert.equal(logBrokenExitCode, 74);
  for (const code of ["EIO", "ENOSPC", "EBADF", undefined]) assert.equal(exitCodeOf("command", code), 74, String(code));
  for (const code of ["EPIPE", "EIO", "ENOSPC", "EBADF", undefined]) assert.equal(exitCodeOf("service", code), 74, String(code));
});

test("serve whose stdout and stderr readers are gone exits 74 at its next log line, within a second, without spinning", async () => {
  const { dir } = makeHome();
  try {
    const hub = await serveProcess(dir);
    // Close the reading ends, as `serve … 2>&1 | head -1` does once head has its line.
    hub.child.stdout!.destroy();
    hub.child.stderr!.destroy();
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(hub.child.exitCode, null, "nothing was written yet: the hub still runs");
    const t0 = performance.now();
    breakRules(dir);
    const end = await exitOf(hub.child, t0);
    assert.equal(end.code, logBrokenExitCode);
    // The rules watcher notices the file within its poll interval; the exit follows the first failed write.
    assert.ok(end.afterMs < 3000, `exited ${end.afterMs.toFixed(0)} ms after the rules file broke`);
    assert.ok(end.cpuMs < 300, `used ${end.cpuMs} ms of CPU meanwhile`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("serve whose stderr reader is gone says why once on stdout, then exits 74", async () => {
  const { dir } = makeHome();
  try {
    const hub = await serveProcess(dir);
    hub.child.stderr!.destroy();
    const t0 = performance.now();
    breakRules(dir);
    const end = await exitOf(hub.child, t0);
    assert.equal(end.code, logBrokenExitCode);
    const said = hub.output().split("\n").filter((l) => l.startsWith("cannot write"));
    assert.deepEqual(said, ["cannot write standard error (EPIPE): exiting with code 74 for the service manager to restart it"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("serve logging to a full disk (stderr on /dev/full) exits 74 at its first log line and says why on stdout", async () => {
  const { dir, keys } = makeHome();
  const full = openSync("/dev/full", "w");
  try {
    // A local worker: its "connected" line is the first log line after "listening on".
    const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    writeFileSync(join(dir, "config.json"), JSON.stringify({ ...config, worker: { name: "w1", key: keys.worker, capacity: 1 } }));
    const t0 = performance.now();
    const child = spawn(process.execPath, [cli, "serve", "--listen", "127.0.0.1:0"], { env: env(dir), stdio: ["ignore", "pipe", full] });
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    const end = await exitOf(child, t0);
    assert.equal(end.code, logBrokenExitCode, out);
    assert.match(out, /^listening on http:\/\/127\.0\.0\.1:\d+\ncannot write standard error \(ENOSPC\): exiting with code 74 for the service manager to restart it\n$/);
  } finally {
    closeSync(full);
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a CLI command whose reader went away ends quietly with 141, as `status | head -1` does for a Unix tool", async () => {
  const { dir } = makeHome();
  try {
    const hub = await serveProcess(dir);
    try {
      // `true` reads nothing and exits at once: status's first write meets a closed pipe.
      const r = spawnSync("bash", ["-c", `"$0" "$1" status | true; echo "\${PIPESTATUS[0]}"`, process.execPath, cli], { env: env(dir), encoding: "utf8" });
      assert.equal(r.stdout, `${pipeClosedExitCode}\n`);
      assert.equal(r.stderr, "");
      // Standard error gone too (2>&1): still quiet, still 141.
      const both = spawnSync("bash", ["-c", `"$0" "$1" status --json 2>&1 | true; echo "\${PIPESTATUS[0]}"`, process.execPath, cli], { env: env(dir), encoding: "utf8" });
      assert.equal(both.stdout, `${pipeClosedExitCode}\n`);
      assert.equal(both.stderr, "");
      // A reader that takes the first line, as in the issue: the command ends either way, never with a trace.
      const head = spawnSync("bash", ["-c", `"$0" "$1" status | head -1; echo "\${PIPESTATUS[0]}"`, process.execPath, cli], { env: env(dir), encoding: "utf8" });
      const [first, code] = head.stdout.trimEnd().split("\n");
      assert.match(first!, /\S/);
      assert.ok(["0", "141"].includes(code!), head.stdout);
      assert.equal(head.stderr, "");
      // A command writing to a full disk says so once and exits 74.
      const full = spawnSync("bash", ["-c", `"$0" "$1" status > /dev/full; echo "$?"`, process.execPath, cli], { env: env(dir), encoding: "utf8" });
      assert.equal(full.stdout, `${logBrokenExitCode}\n`);
      assert.equal(full.stderr, "cannot write standard output (ENOSPC): exiting with code 74\n");
    } finally {
      await hub.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the hub still answers while its log works: the guard changes nothing for a healthy process", async () => {
  const { dir } = makeHome();
  try {
    const hub = await serveProcess(dir);
    try {
      breakRules(dir);
      await until(() => hub.output().includes("rules.json"), 10_000, "the hub to log the broken rules file");
      const health = await fetch(`${hub.url}/v1/health`);
      assert.equal(health.status, 200);
      assert.equal(hub.child.exitCode, null);
    } finally {
      await hub.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
