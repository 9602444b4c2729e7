/**
 * What the sandboxed-steering tests share (issue 26 rounds 11, 12): the owner's git, a repository the owner made, a
 * hub whose sandboxed command agent runs a script in a folder, and the shell and configurations the agent plants.
 */
import assert from "node:assert/strict";
import { lstatSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { basename, dirname, join } from "node:path";
import { tempDir, untilLatestRun, type Fixture } from "./helpers.js";
import { quarantines, sandboxKit } from "./sandbox-kit.js";
import { probeBwrap } from "./tools-helpers.js";

const kit = sandboxKit();
/** Paths removed after each test. */
export const removed = kit.removed;
/** Sets variables of this process (the worker's: `HOME` for the owner's global git configuration) for one test. */
export const setEnv = kit.setEnv;

/** Whether bubblewrap can run here. */
export const sandboxed = async () => (await probeBwrap("bwrap")).ok;

/** The owner's git: no system or global configuration of this machine, as a fresh user's. */
export function owner(cwd: string, env: Record<string, string>, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=o", "-c", "user.email=o@example.com", ...args], {
    cwd, encoding: "utf8", env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent-aa-owner-home", GIT_CONFIG_NOSYSTEM: "1", ...env },
  });
}

/** A repository the owner made, with one commit. */
export function ownerRepo(): string {
  const repo = realpathSync(tempDir("aa-steer-repo-"));
  removed.push(repo);
  owner(repo, {}, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "README.md"), "the owner's\n");
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "owner");
  return repo;
}

/**
 * A repository the owner made whose `core.hooksPath` is `hooks` (relative to its top), with a committed `pre-commit`
 * there that appends "owner" to `hook-ran.txt` (in the folder the commit runs in).
 */
export function ownerRepoWithHooks(hooks: string): string {
  const repo = ownerRepo();
  mkdirSync(join(repo, hooks), { recursive: true });
  writeFileSync(join(repo, hooks, "pre-commit"), "#!/bin/sh\necho owner >> hook-ran.txt\n", { mode: 0o755 });
  owner(repo, {}, "add", hooks);
  owner(repo, {}, "commit", "-qm", "hooks");
  owner(repo, {}, "config", "core.hooksPath", hooks);
  return repo;
}

/** A folder the agent's planted commands would copy the master key into (its listing: what ran); removed after the test. */
export function leakFolder(): string {
  const leak = realpathSync(tempDir("aa-steer-leak-"));
  removed.push(leak);
  return leak;
}

/** A hub whose rule "alerts" runs `script` with sh (a sandboxed command agent) in `cwd`, also writing `writable`; one event, until done. */
export async function runAgent(script: string, cwd: string, writable: string[] = []): Promise<Fixture> {
  const fx = await kit.setup({ use: "command", command: ["sh", "-c", script], ...(writable.length > 0 ? { writable } : {}) }, cwd);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  await untilLatestRun(fx, "done", 30_000).catch(async (e) => { throw new Error(`${(e as Error).message}: ${JSON.stringify((await fx.state()).runs)}`); });
  return fx;
}

/**
 * Where `path` was moved aside after run `run`: the one `<quarantine>/run-<run>-<16 hex digits>/<path>` of the
 * worker's quarantine (a hub of `runAgent`, round 29, F29a-1), else the one beside it named
 * `<name>.planted-run-<run>-<16 hex digits>` (the checks called directly).
 */
export function asideOf(path: string, run: number): string {
  for (const q of quarantines) {
    const held = (lstatSync(q, { throwIfNoEntry: false }) ? readdirSync(q) : []).filter((n) => new RegExp(`^run-${run}-[0-9a-f]{16}$`).test(n) && lstatSync(join(q, n, path), { throwIfNoEntry: false }) !== undefined);
    if (held.length > 0) {
      assert.equal(held.length, 1, `${path}: ${JSON.stringify(held)}`);
      return join(q, held[0]!, path);
    }
  }
  const prefix = `${basename(path)}.planted-run-${run}-`;
  const found = readdirSync(dirname(path)).filter((n) => n.startsWith(prefix));
  // Several new entries at an agent CLI state folder's top go into one folder of the run's there (F17-5).
  const boxes = readdirSync(dirname(path)).filter((n) => new RegExp(`^planted-run-${run}-[0-9a-f]{16}$`).test(n) && lstatSync(join(dirname(path), n, basename(path)), { throwIfNoEntry: false }) !== undefined);
  if (found.length === 0 && boxes.length === 1) return join(dirname(path), boxes[0]!, basename(path));
  assert.equal(found.length, 1, `${path}: ${JSON.stringify(found)}`);
  assert.match(found[0]!, /-[0-9a-f]{16}$/);
  return join(dirname(path), found[0]!);
}

/** Shell: `try <name> <command…>` appends "<name> ok" or "<name> no" to tried.txt (in the cwd). */
export const tryFn = `try() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$n ok" >> tried.txt; else echo "$n no" >> tried.txt; fi; }`;
/** A git configuration whose `core.fsmonitor` copies the hub's master key (`$AA_MASTER` of the owner's git) to `leak`/`name`. */
export const fsmonitorConfig = (leak: string, name: string, extra = "") =>
  `[core]\n\trepositoryformatversion = 0\n\tbare = false\n${extra}\tfsmonitor = "cp $AA_MASTER ${join(leak, name)}; echo"\n`;


/** Shell: write an executable hook at `path` that copies the master key to `leak`/`name`. */
export const plantHook = (path: string, leak: string, name: string) => `printf "#!/bin/sh\\ncp \\$AA_MASTER ${leak}/${name}\\n" > ${path} && chmod +x ${path}`;
/** Shell: append a `core.fsmonitor` copying the master key to `leak`/`name` to the configuration file `path`. */
export const plantMonitor = (path: string, leak: string, name: string) => `printf "[core]\\n\\tfsmonitor = \\"cp \\$AA_MASTER ${leak}/${name}; echo\\"\\n" >> ${path}`;

/** A home of the owner's for one test (`HOME` of the worker, no `XDG_CONFIG_HOME`), named `<prefix>…`; removed after it. */
export function ownerHome(prefix = "aa-owner-home-"): string {
  const home = realpathSync(tempDir(prefix));
  removed.push(home);
  setEnv({ HOME: home, XDG_CONFIG_HOME: "" });
  return home;
}
