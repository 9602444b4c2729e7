/**
 * A real systemd for the service tests (issue 28): a Debian root file system made once by `debootstrap --variant=minbase`
 * (with systemd, dbus, libpam-systemd for user managers, and git) and booted with `systemd-nspawn -b --register=no
 * --keep-unit`, which on these machines reaches journald, dbus and logind in seconds. Each test boots a fresh copy
 * of the cached root, so runs never see each other's state; a reboot is the container powering off and booting the
 * same copy again. Commands run inside through `nsenter` into the container's namespaces, as root or — through
 * `su -`, which opens a real login session with its own systemd user manager — as the user `tester` (uid 1000).
 *
 * Needs root, debootstrap and systemd-container (Debian packages; .ci/run installs them) and, the first time on a
 * machine, Debian's package mirror. The container shares the host's network, so a hub inside listens on the host's
 * loopback (the tests give it port 0 and read the port from its hub.json).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { until } from "./helpers.js";

/** Where the pristine root file system is kept between test runs (made once per machine). */
export const systemdRootCache = "/var/tmp/agent-autoloop-systemd-bookworm-v1";
/** The uid and name of the container's user. */
export const tester = { name: "tester", uid: 1000, home: "/home/tester" };

/** Why a systemd container cannot be made here, or null when it can. */
export function systemdContainerUnavailable(): string | null {
  if (process.platform !== "linux") return "not Linux";
  if (process.getuid?.() !== 0) return "systemd-nspawn and debootstrap need root";
  for (const tool of ["systemd-nspawn", "debootstrap", "nsenter"]) {
    if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) return `${tool} is not installed (Debian packages systemd-container, debootstrap, util-linux)`;
  }
  return null;
}

/** Makes the cached root file system when it is missing (about a minute), atomically. @throws Error with debootstrap's output. */
export function ensureSystemdRoot(): string {
  if (existsSync(join(systemdRootCache, "etc", "os-release"))) return systemdRootCache;
  const tmp = `${systemdRootCache}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const r = spawnSync("debootstrap", [
    "--variant=minbase", "--include=systemd,systemd-sysv,dbus,libpam-systemd,git", "bookworm", tmp, "http://deb.debian.org/debian",
  ], { encoding: "utf8", timeout: 15 * 60_000 });
  if (r.status !== 0) throw new Error(`debootstrap failed (${r.status}): ${(r.stderr || r.stdout || r.error?.message || "").slice(-2000)}`);
  const user = spawnSync("chroot", [tmp, "useradd", "--create-home", "--uid", String(tester.uid), "--shell", "/bin/sh", tester.name], { encoding: "utf8" });
  if (user.status !== 0) throw new Error(`useradd in the new root failed: ${user.stderr}`);
  rmSync(systemdRootCache, { recursive: true, force: true });
  renameSync(tmp, systemdRootCache);
  return systemdRootCache;
}

/** What one command inside printed and how it ended. */
export interface Ran { code: number | null; out: string; err: string }

/** A booted container on a copy of the cached root. */
export class SystemdContainer {
  private nspawn: ChildProcess | null = null;
  private leader = 0;
  private log = "";

  /**
   * @param root the container's root (a copy the test owns).
   * @param binds host paths shown inside, read-only, as `host` or `host:inside`.
   */
  constructor(readonly root: string, private readonly binds: string[]) {}

  /** Boots the container and waits until systemd says it is up (running or degraded). */
  async boot(): Promise<void> {
    this.log = "";
    const args = ["--register=no", "--keep-unit", "--boot", "--directory", this.root, "--console=passive", "--machine", "aa-test"];
    for (const b of this.binds) args.push(`--bind-ro=${b}`);
    const nspawn = (this.nspawn = spawn("systemd-nspawn", args, { stdio: ["ignore", "pipe", "pipe"] }));
    nspawn.stdout!.on("data", (d) => (this.log += d));
    nspawn.stderr!.on("data", (d) => (this.log += d));
    this.leader = await until(() => this.childSystemd(nspawn.pid!), 60_000, () => `the container's systemd to start (nspawn said: ${this.log})`);
    await until(() => /^(running|degraded)$/.test(this.run("systemctl is-system-running").out.trim()), 90_000,
      () => `the container to boot: ${this.run("systemctl is-system-running; systemctl --failed --no-pager").out} (nspawn: ${this.log})`);
  }

  /** The pid (host's view) of the container's init: the shallowest `systemd` process below nspawn, or 0. */
  private childSystemd(nspawnPid: number): number {
    const children = new Map<number, number[]>();
    for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
      try {
        const ppid = Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
        children.set(ppid, [...(children.get(ppid) ?? []), Number(pid)]);
      } catch {
        // gone
      }
    }
    for (let level = children.get(nspawnPid) ?? []; level.length > 0; level = level.flatMap((p) => children.get(p) ?? [])) {
      for (const pid of level) {
        try {
          if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "systemd") return pid;
        } catch {
          // gone
        }
      }
    }
    return 0;
  }

  /** Runs a shell command inside as root. */
  run(command: string, timeoutMs = 120_000): Ran {
    const r = spawnSync("nsenter", ["--target", String(this.leader), "--all", "/bin/sh", "-c", command], { encoding: "utf8", timeout: timeoutMs });
    return { code: r.status, out: r.stdout ?? "", err: (r.stderr ?? "") + (r.error ? String(r.error) : "") };
  }

  /** Runs a shell command inside as `tester`, in a login session (`su -`): its own user manager, XDG_RUNTIME_DIR set. */
  login(command: string, timeoutMs = 300_000): Ran {
    return this.run(`su - ${tester.name} -c ${shellQuote(command)}`, timeoutMs);
  }

  /** Reboots: the container powers off (nspawn exits) and boots again on the same root. */
  async reboot(): Promise<void> {
    const exited = new Promise((r) => this.nspawn!.once("exit", r));
    this.run("systemctl reboot");
    await exited;
    await this.boot();
  }

  /** Powers the container off (killing it when it does not stop within 30 s). */
  async stop(): Promise<void> {
    const nspawn = this.nspawn;
    if (!nspawn || nspawn.exitCode !== null || nspawn.signalCode !== null) return;
    const exited = new Promise((r) => nspawn.once("exit", r));
    this.run("systemctl poweroff", 10_000);
    const timer = setTimeout(() => nspawn.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(timer);
  }

  /** What nspawn printed (boot messages, errors). */
  output(): string {
    return this.log;
  }
}

/** `text` as one single-quoted shell word. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/** Copies the cached root to `dest` (`cp -a`, keeping owners and modes). @throws Error with cp's words. */
export function copyRoot(dest: string): void {
  mkdirSync(dest, { recursive: true });
  const r = spawnSync("cp", ["-a", `${systemdRootCache}/.`, dest], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cp of the root failed: ${r.stderr}`);
}
