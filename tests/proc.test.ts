/**
 * The one reader of Linux's process table (src/common/proc.ts, issue 27 #5), used by the hub's lock, the worker's
 * supervisor and its peer checks: a stat line whose command name holds spaces and parentheses, this process as the
 * system describes it, and a process that is not there.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseProcStat, procCmdline, procTable, readProcStat } from "../src/common/proc.js";

/** A stat line as Linux writes it: pid, (comm), state, ppid, pgrp, session, …, starttime the 22nd field. */
const statLine = (comm: string) => `4242 (${comm}) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10`;

test("a stat line is read after the command name's last parenthesis, whatever the name holds", () => {
  for (const comm of ["node", "a b", "x) S 99 98 97", "(()", ") R 1 1"]) {
    assert.deepEqual(parseProcStat(4242, statLine(comm)), { pid: 4242, state: "S", ppid: 17, pgid: 4242, start: "987654" }, comm);
  }
  assert.equal(parseProcStat(1, "no parenthesis here"), null);
});

test("this process as /proc describes it; a process that is not there is null", { skip: process.platform !== "linux" }, () => {
  const me = readProcStat(process.pid)!;
  assert.equal(me.ppid, process.ppid);
  assert.equal(me.state, "R");
  assert.match(me.start, /^\d+$/);
  assert.equal(readProcStat(process.pid)!.start, me.start, "the start time is the same each read");
  const row = procTable().find((p) => p.pid === process.pid)!;
  assert.deepEqual({ ...row, state: me.state }, me, "the table's row of this process");
  assert.equal(procCmdline(process.pid)![0], process.argv0);
  assert.equal(readProcStat(2 ** 22 + 12345), null);
  assert.equal(procCmdline(2 ** 22 + 12345), null);
});
