/**
 * A signal never reaches a process that took the number of one that ended (a full run on a machine with pid_max
 * 32,768: a test's agent and another test's stubborn job host were each ended by a SIGTERM not meant for them). The
 * supervisor records the agent's group leader with its start time, and a stop of a launch whose number now names
 * another process leaves that process alone; the plugin host's process does the same (proc.ts sameGroup).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, until } from "./helpers.js";
import { groupAlive, launchAlive, readExit, readPids, startSupervised, stopGroup } from "../src/worker/supervise.js";
import { processStart, readProcStat, sameGroup } from "../src/common/proc.js";
import { agentRunning } from "../src/worker/attempt.js";

/** A stranger: a process group of its own (a sleeping leader), as another program's would be. */
function stranger() {
  const child = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
  child.unref();
  const pid = child.pid!;
  return { pid, start: readProcStat(pid)!.start, alive: () => readProcStat(pid) !== null && readProcStat(pid)!.state !== "Z", end: () => process.kill(-pid, "SIGKILL") };
}

test("the supervisor records the agent's group leader with its start time", async () => {
  const dir = tempDir("aa-stale-");
  try {
    mkdirSync(join(dir, "l"));
    await startSupervised(join(dir, "l"), ["sleep", "30"], dir, { PATH: process.env.PATH! });
    const pids = readPids(join(dir, "l"))!;
    assert.equal(pids.start, readProcStat(pids.pgid)!.start);
    assert.equal(readProcStat(pids.pgid)!.pgid, pids.pgid);
    await stopGroup(join(dir, "l"), 2000);
    await until(() => readExit(join(dir, "l")), 5000, "the exit record");
    assert.equal(readExit(join(dir, "l"))!.signal, "SIGTERM");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a stop of a launch whose group number now names another process leaves that process alone", async () => {
  const dir = tempDir("aa-stale-");
  const s = stranger();
  try {
    mkdirSync(join(dir, "l"));
    // The launch's record as a supervisor wrote it long ago: the same number, an earlier leader (another start time).
    const old = String(Number(s.start) - 1);
    writeFileSync(join(dir, "l", "pid.json"), JSON.stringify({ supervisor: 2 ** 22 + 4321, pgid: s.pid, start: old }));
    assert.equal(sameGroup(s.pid, old), false);
    assert.equal(groupAlive(s.pid, old), false);
    assert.equal(launchAlive(readPids(join(dir, "l"))!), false);
    assert.equal(agentRunning(dir), false, "no agent of the run is there");
    await stopGroup(join(dir, "l"), 500);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(s.alive(), true, "the stranger was not signalled");
    // The record of the stranger itself is the stranger's group: stopped as before.
    writeFileSync(join(dir, "l", "pid.json"), JSON.stringify({ supervisor: 2 ** 22 + 4321, pgid: s.pid, start: s.start }));
    assert.equal(groupAlive(s.pid, s.start), true);
    await stopGroup(join(dir, "l"), 2000);
    assert.equal(s.alive(), false);
  } finally {
    try {
      s.end();
    } catch {
      // gone
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a group whose leader ended is still the group while its members live; a record without a start time cannot tell", () => {
  assert.equal(sameGroup(2 ** 22 + 999, "12345"), true, "no process with the number: the leader ended");
  const s = stranger();
  try {
    assert.equal(sameGroup(s.pid, ""), true);
    assert.equal(sameGroup(s.pid, s.start), true);
    assert.equal(processStart(s.pid), s.start);
    assert.equal(processStart(2 ** 22 + 999), "");
  } finally {
    s.end();
  }
});

test("pid.json written before start times were kept still reads (start \"\")", () => {
  const dir = tempDir("aa-stale-");
  try {
    writeFileSync(join(dir, "pid.json"), JSON.stringify({ supervisor: 1, pgid: 2 }));
    assert.deepEqual(readPids(dir), { supervisor: 1, pgid: 2, start: "" });
    assert.equal(JSON.parse(readFileSync(join(dir, "pid.json"), "utf8")).pgid, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
