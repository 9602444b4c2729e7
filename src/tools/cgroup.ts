/**
 * One cgroup per sandboxed call or long-lived plugin, for the `[sandbox]` limits memory, cpus and pids (spec
 * tool-plugins.md §7). Each controller is taken from cgroup v2 where our own cgroup can hand it to a child (it is in,
 * or can be written to, our `cgroup.subtree_control`), else from the cgroup v1 hierarchy it is mounted on; the cgroup
 * is made below our own cgroup in each hierarchy, named `agent-autoloop-tools/<name>`. The process joins it before it
 * execs (see `joinScript`), so nothing it starts can run outside it; the cgroup is emptied and removed afterwards.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cgroupCpuPeriodUs } from "./limits.js";

/** The limits a cgroup enforces; null = not limited. Memory in bytes, cpus as a share of one CPU, pids a count. */
export interface CgroupLimits {
  memoryBytes: number | null;
  cpus: number | null;
  pids: number | null;
}

/** Where cgroups live: the mount root (`/sys/fs/cgroup`) and the text of `/proc/self/cgroup`. */
export interface CgroupSystem {
  root: string;
  self: string;
}

/** The machine's cgroup system. */
export function systemCgroups(): CgroupSystem {
  let self = "";
  try {
    self = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    // not Linux: no cgroups
  }
  return { root: "/sys/fs/cgroup", self };
}

export type Controller = "memory" | "cpu" | "pids";

/** The `[sandbox]` field each controller enforces. */
export const controllerLimitName: Record<Controller, string> = { memory: "memory", cpu: "cpus", pids: "pids" };
/** Why a controller cannot be had (an English detail inside a catalog message). */
export const controllerMissing = "not mounted, not delegated";

/** A made cgroup: the files a process writes its pid to, and what can be asked of it afterwards. */
export interface Cgroup {
  /** `cgroup.procs` files, one per hierarchy used. */
  procsFiles: string[];
  /** Whether the kernel's OOM killer ended a process of this cgroup. */
  oomKilled(): boolean;
  /** Whether a fork was refused at the pids limit. */
  pidsLimitHit(): boolean;
  /** SIGKILLs every process in the cgroup, until none is left (at most `waitMs`), then removes its folders. */
  destroy(waitMs?: number): Promise<void>;
}

/** Why a cgroup could not be made: the controller, and what failed. */
export interface CgroupFailure {
  controller: Controller;
  error: string;
}

/** The folder of our own cgroup in the v1 hierarchy of `controller`, or null when it is not mounted. */
function v1Base(sys: CgroupSystem, controller: Controller): string | null {
  for (const line of sys.self.split("\n")) {
    const [, list, path] = line.split(":") as [string, string | undefined, string | undefined];
    if (!list || path === undefined) continue;
    const names = list.split(",");
    if (!names.includes(controller)) continue;
    for (const dir of [join(sys.root, list), join(sys.root, controller)]) if (existsSync(join(dir, "cgroup.procs"))) return join(dir, path);
  }
  return null;
}

/** The folder of our own cgroup in the v2 hierarchy, or null. */
function v2Base(sys: CgroupSystem): string | null {
  const line = sys.self.split("\n").find((l) => l.startsWith("0::"));
  if (line === undefined) return null;
  for (const mount of [sys.root, join(sys.root, "unified")]) if (existsSync(join(mount, "cgroup.controllers"))) return join(mount, line.slice(3));
  return null;
}

/** Whether v2 can give `controller` to children of `base`: it is enabled there, or it is available and enabling it works. */
function v2Offers(base: string, controller: Controller): boolean {
  const listed = (file: string) => {
    try {
      return readFileSync(join(base, file), "utf8").split(/\s+/).includes(controller);
    } catch {
      return false;
    }
  };
  if (listed("cgroup.subtree_control")) return true;
  if (!listed("cgroup.controllers")) return false;
  try {
    writeFileSync(join(base, "cgroup.subtree_control"), `+${controller}`);
  } catch {
    // busy (our own cgroup has processes) or not delegated: v1, or nothing
  }
  return listed("cgroup.subtree_control");
}

/** The controllers `limits` need. */
export function neededControllers(limits: CgroupLimits): Controller[] {
  const out: Controller[] = [];
  if (limits.memoryBytes !== null) out.push("memory");
  if (limits.cpus !== null) out.push("cpu");
  if (limits.pids !== null) out.push("pids");
  return out;
}

/**
 * Makes the cgroup `name` (unique per call) with `limits`. Writes nothing when a controller is missing.
 * @returns the cgroup, or the controller that cannot be had and why
 */
export function createCgroup(name: string, limits: CgroupLimits, sys: CgroupSystem = systemCgroups()): { ok: true; cgroup: Cgroup } | { ok: false; failure: CgroupFailure } {
  const v2 = v2Base(sys);
  const placement = new Map<string, { version: 1 | 2; controllers: Controller[] }>();
  for (const c of neededControllers(limits)) {
    const base = v2 && v2Offers(v2, c) ? v2 : v1Base(sys, c);
    if (!base) return { ok: false, failure: { controller: c, error: controllerMissing } };
    const dir = join(base, "agent-autoloop-tools", name);
    const p = placement.get(dir) ?? { version: base === v2 ? 2 : 1, controllers: [] };
    p.controllers.push(c);
    placement.set(dir, p);
  }
  const made: string[] = [];
  let current: Controller = "memory";
  try {
    for (const [dir, p] of placement) {
      current = p.controllers[0]!;
      mkdirSync(dir, { recursive: true });
      made.push(dir);
      for (const c of p.controllers) {
        current = c;
        writeLimit(dir, p.version, c, limits);
      }
    }
  } catch (e) {
    for (const dir of made) removeDir(dir);
    return { ok: false, failure: { controller: current, error: (e as NodeJS.ErrnoException).code ?? String(e) } };
  }
  return { ok: true, cgroup: handle([...placement].map(([dir, p]) => ({ dir, ...p }))) };
}

function writeLimit(dir: string, version: 1 | 2, c: Controller, limits: CgroupLimits): void {
  const w = (file: string, value: string | number) => writeFileSync(join(dir, file), String(value));
  const optional = (file: string, value: string | number) => {
    if (existsSync(join(dir, file))) w(file, value);
  };
  const quotaUs = Math.max(1000, Math.round((limits.cpus ?? 1) * cgroupCpuPeriodUs));
  if (c === "memory") {
    if (version === 2) {
      w("memory.max", limits.memoryBytes!);
      optional("memory.swap.max", 0);
    } else {
      w("memory.limit_in_bytes", limits.memoryBytes!);
      // With swap accounting, the same limit on memory + swap keeps the plugin from swapping past its limit.
      optional("memory.memsw.limit_in_bytes", limits.memoryBytes!);
    }
  } else if (c === "pids") {
    w("pids.max", limits.pids!);
  } else if (version === 2) {
    w("cpu.max", `${quotaUs} ${cgroupCpuPeriodUs}`);
  } else {
    w("cpu.cfs_period_us", cgroupCpuPeriodUs);
    w("cpu.cfs_quota_us", quotaUs);
  }
}

/** A counter `key N` from a flat-keyed cgroup file (`memory.events`, `memory.oom_control`, `pids.events`); 0 if absent. */
function counter(file: string, key: string): number {
  try {
    const line = readFileSync(file, "utf8").split("\n").find((l) => l.startsWith(`${key} `));
    return line ? Number(line.split(" ")[1]) || 0 : 0;
  } catch {
    return 0;
  }
}

function pidsIn(dir: string): number[] {
  try {
    return readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function removeDir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT";
  }
}

function handle(parts: { dir: string; version: 1 | 2; controllers: Controller[] }[]): Cgroup {
  const memory = parts.find((p) => p.controllers.includes("memory"));
  const pids = parts.find((p) => p.controllers.includes("pids"));
  return {
    procsFiles: parts.map((p) => join(p.dir, "cgroup.procs")),
    oomKilled() {
      if (!memory) return false;
      return counter(join(memory.dir, memory.version === 2 ? "memory.events" : "memory.oom_control"), "oom_kill") > 0;
    },
    pidsLimitHit() {
      return pids ? counter(join(pids.dir, "pids.events"), "max") > 0 : false;
    },
    async destroy(waitMs = 5000) {
      const deadline = Date.now() + waitMs;
      for (const p of parts) {
        for (;;) {
          if (p.version === 2 && existsSync(join(p.dir, "cgroup.kill"))) {
            try {
              writeFileSync(join(p.dir, "cgroup.kill"), "1");
            } catch {
              // gone already
            }
          }
          const left = pidsIn(p.dir);
          for (const pid of left) {
            try {
              process.kill(pid, "SIGKILL");
            } catch {
              // already gone
            }
          }
          if (left.length === 0 && removeDir(p.dir)) break;
          if (Date.now() > deadline) break;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    },
  };
}

/**
 * A `/bin/sh` script that writes its own pid into each file given before `--`, then execs the rest: the process is in
 * its cgroups before the plugin's first instruction. Exit status 125 when a cgroup cannot be joined.
 * Use: `["/bin/sh", "-c", joinScript, "sh", ...procsFiles, "--", ...argv]`.
 */
export const joinScript = 'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

/** Our parent folders below which cgroups are made (for the doctor): v1 and v2 bases found, per controller. */
export function cgroupBases(sys: CgroupSystem = systemCgroups()): Record<Controller, string | null> {
  const v2 = v2Base(sys);
  const out = {} as Record<Controller, string | null>;
  for (const c of ["memory", "cpu", "pids"] as const) out[c] = v2 && v2Offers(v2, c) ? `${v2} (v2)` : v1Base(sys, c);
  return out;
}

/** Lists leftover cgroups of this host below our own cgroups (for tests and the doctor). */
export function leftoverCgroups(sys: CgroupSystem = systemCgroups()): string[] {
  const out: string[] = [];
  for (const c of ["memory", "cpu", "pids"] as const) {
    const base = v1Base(sys, c);
    if (!base) continue;
    try {
      for (const d of readdirSync(join(base, "agent-autoloop-tools"))) out.push(join(base, "agent-autoloop-tools", d));
    } catch {
      // none made yet
    }
  }
  return out;
}
