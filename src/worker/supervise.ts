/**
 * Starting, watching and stopping an agent process through its detached supervisor
 * (protocol.md Agent: stop = SIGTERM to the process group, SIGKILL after 10 s; only then is the run cancelled).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync, openSync, readSync, closeSync, fstatSync } from "node:fs";
import { join } from "node:path";
import { engineDir } from "../host/home.js";
import { stopGraceMs } from "../kernel/limits.js";

export interface Exit { code: number | null; signal: string | null; error: string | null }

/** The compiled supervisor script (the worker always runs the compiled one, also under tsx). */
export const supervisorScript = join(engineDir, "dist", "src", "worker", "supervisor-main.js");

/** Starts `argv` under a detached supervisor in `dir`; returns once the supervisor has started it. */
export async function startSupervised(dir: string, argv: string[], cwd: string, env: Record<string, string>): Promise<void> {
  writeFileSync(join(dir, "spec.json"), JSON.stringify({ argv, cwd, env }), { mode: 0o600 });
  const sup = spawn(process.execPath, [supervisorScript, dir], { detached: true, stdio: "ignore", cwd: dir, env: { PATH: process.env.PATH ?? "" } });
  sup.unref();
  for (let i = 0; i < 400 && !existsSync(join(dir, "pid.json")) && !existsSync(join(dir, "exit.json")); i++) await sleep(25);
}

export function readExit(dir: string): Exit | null {
  try {
    return JSON.parse(readFileSync(join(dir, "exit.json"), "utf8")) as Exit;
  } catch {
    return null;
  }
}

export function readPids(dir: string): { supervisor: number; pgid: number } | null {
  try {
    return JSON.parse(readFileSync(join(dir, "pid.json"), "utf8")) as { supervisor: number; pgid: number };
  } catch {
    return null;
  }
}

/** Whether any process of the group is still there. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Stops the agent's whole process group: SIGTERM, then SIGKILL after 10 s.
 * Resolves when no process of the group is left.
 */
export async function stopGroup(dir: string, graceMs = stopGraceMs): Promise<void> {
  const pids = readPids(dir);
  if (!pids) return;
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-pids.pgid, s);
    } catch {
      // already gone
    }
  };
  signal("SIGTERM");
  const deadline = Date.now() + graceMs;
  while (groupAlive(pids.pgid) && Date.now() < deadline) await sleep(100);
  if (groupAlive(pids.pgid)) signal("SIGKILL");
  while (groupAlive(pids.pgid)) await sleep(50);
}

/** The text of a file from `offset` (bytes) on, at most `max` bytes; "" when missing. */
export function readFrom(file: string, offset = 0, max = 64 * 1024 * 1024): string {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return "";
  }
  try {
    const size = fstatSync(fd).size;
    const len = Math.max(0, Math.min(size - offset, max));
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, offset);
    return buf.toString("utf8");
  } finally {
    closeSync(fd);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
