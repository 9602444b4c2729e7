/**
 * The CLI run as a child process on a home of its own, for tests that start and stop hubs (and strangers) around it:
 * its environment, one run of it, and a home made by `init` (`npm run build` first: it runs dist/ through bin/).
 */
import { after } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engine, removeAfterKill, tempDir } from "./helpers.js";

/** The CLI's entry point. */
export const cliBin = join(engine, "bin", "agent-autoloop.js");

/** The environment of a CLI child: this test's, in English, no display, without a hub URL unless `extra` gives one. */
export function cliEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "", ...extra };
  if (!("AGENT_AUTOLOOP_URL" in extra)) delete env.AGENT_AUTOLOOP_URL;
  return env;
}

/** Runs the CLI without blocking this process (a hub or a stranger may be running in it); output trimmed. */
export function runCli(home: string, args: string[], extra: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cliBin, ...args], { env: cliEnv(home, extra), encoding: "utf8" }, (e, stdout, stderr) =>
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out: stdout.trim(), err: stderr.trim() }));
  });
}

/** Makes a home at `home` with `init`, then sets its `listen` and gives it no local worker or channels. */
export function initHome(home: string, listen: string): string {
  const r = spawnSync(process.execPath, [cliBin, "init"], { env: cliEnv(home), encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const config = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
  writeFileSync(join(home, "config.json"), JSON.stringify({ ...config, listen, worker: null, channels: {} }));
  return home;
}

/** A test file's folder of homes and the child processes its tests start. */
export interface CliHomes {
  root: string;
  /** Children to kill (SIGKILL) if still running after the file's tests. */
  children: ChildProcess[];
  /** The next home in `root`, made by `initHome` with `listen`. */
  newHome(listen: string): string;
}

/** A folder of homes (`tempDir(prefix)`) for one test file: after its tests, every child left is killed and the folder removed. */
export function cliHomes(prefix: string): CliHomes {
  const root = tempDir(prefix);
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    removeAfterKill(root);
  });
  let homes = 0;
  return { root, children, newHome: (listen) => initHome(join(root, `home-${++homes}`), listen) };
}
