/**
 * The per-user service managers `install`, `uninstall` and `update` talk to (issue 28): systemd's user manager on
 * Linux, launchd's per-user domain on macOS, the Task Scheduler on Windows. Each says whether it can be used here
 * (and what to do instead when not), which files make the service, which home an installed service serves, and
 * registers, restarts or removes it by running the OS's own tool (`systemctl --user`, `launchctl`, `schtasks`).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join, posix, win32 } from "node:path";
import { t, type Lang } from "../../i18n/messages.js";
import {
  launchdLabel, launchdLogPath, launchdPlist, serviceEnvPath, serviceName, systemdEnvironmentFile, systemdUnit,
  windowsLauncher, windowsPaths, windowsTaskXml, type ServicePlan,
} from "./files.js";

/** How long one call of the service manager's tool may take (ms). */
export const serviceToolTimeoutMs = 30_000;

/** What a command printed and how it ended. `code` is null when it could not run (missing, timed out). */
export interface ToolResult { code: number | null; out: string; err: string }

/** Runs the OS's service tool (with `env` added to this process's environment); never throws. */
export type RunTool = (file: string, args: string[], env?: Record<string, string>) => ToolResult;

/** Runs a program synchronously with this process's environment, its output as text. */
export const runTool: RunTool = (file, args, env) => {
  const r = spawnSync(file, args, { encoding: "utf8", timeout: serviceToolTimeoutMs, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  return { code: r.error ? null : r.status, out: r.stdout ?? "", err: (r.stderr ?? "") || (r.error?.message ?? "") };
};

/** One file of a service definition; `utf16` files are written as UTF-16LE with a byte order mark (Task Scheduler XML). */
export interface ServiceFile { path: string; content: string; mode: number; utf16?: boolean }

/** A per-user service manager. */
export interface ServiceManager {
  /** `systemd`, `launchd` or `schtasks`. */
  kind: "systemd" | "launchd" | "schtasks";
  /** Why it cannot be used here and what to do instead (in `lang`), or null when it can. */
  unusable(lang: Lang): string | null;
  /** The files that make the service for `plan`. The first one is the definition (unit, plist, task XML). */
  files(plan: ServicePlan): ServiceFile[];
  /** The home the installed service serves, or null when none is installed. */
  installedHome(): string | null;
  /** Whether the service is registered to start at login, and whether it runs now. */
  state(): { enabled: boolean; active: boolean };
  /** Registers the written files and starts the service (restarting it when `changed` and it already ran). @throws Error with the tool's words. */
  register(changed: boolean): void;
  /** Stops the service and takes its registration back (the files are removed after). @throws Error with the tool's words. */
  unregister(): void;
  /** Restarts the running service. @throws Error with the tool's words. */
  restart(): void;
  /** How the user reads the hub's log (a command or a file), in `lang`. */
  logs(lang: Lang): string;
}

/** Throws the tool's words when it failed. */
function must(r: ToolResult, what: string): ToolResult {
  if (r.code !== 0) throw new Error(`${what}: ${(r.err || r.out).trim() || `exit ${r.code}`}`);
  return r;
}

/** The text of a file, or null when it cannot be read. */
function readText(path: string, encoding: BufferEncoding = "utf8"): string | null {
  try {
    return readFileSync(path, encoding);
  } catch {
    return null;
  }
}

/** systemd's user manager (Linux). */
export class Systemd implements ServiceManager {
  readonly kind = "systemd";
  readonly unitPath: string;
  private readonly unit = `${serviceName}.service`;

  constructor(private readonly run: RunTool = runTool, env: NodeJS.ProcessEnv = process.env, userHome = homedir()) {
    const config = env.XDG_CONFIG_HOME && posix.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : posix.join(userHome, ".config");
    this.unitPath = posix.join(config, "systemd", "user", this.unit);
  }

  unusable(lang: Lang): string | null {
    const r = this.run("systemctl", ["--user", "show-environment"]);
    if (r.code === 0) return null;
    const why = r.code === null ? t(lang, "service.noSystemctl") : t(lang, "service.noUserSystemd", { error: (r.err || r.out).trim().split("\n")[0] ?? "" });
    return why;
  }

  files(plan: ServicePlan): ServiceFile[] {
    return [
      { path: this.unitPath, content: systemdUnit(plan), mode: 0o644 },
      { path: serviceEnvPath(plan.home), content: systemdEnvironmentFile(plan), mode: 0o600 },
    ];
  }

  installedHome(): string | null {
    const text = readText(this.unitPath);
    return text === null ? null : homeOfUnit(text);
  }

  state(): { enabled: boolean; active: boolean } {
    return {
      enabled: this.run("systemctl", ["--user", "is-enabled", this.unit]).out.trim() === "enabled",
      active: this.run("systemctl", ["--user", "is-active", this.unit]).out.trim() === "active",
    };
  }

  register(changed: boolean): void {
    must(this.run("systemctl", ["--user", "daemon-reload"]), "systemctl --user daemon-reload");
    must(this.run("systemctl", ["--user", "enable", this.unit]), `systemctl --user enable ${this.unit}`);
    must(this.run("systemctl", ["--user", changed ? "restart" : "start", this.unit]), `systemctl --user start ${this.unit}`);
  }

  unregister(): void {
    must(this.run("systemctl", ["--user", "disable", "--now", this.unit]), `systemctl --user disable --now ${this.unit}`);
  }

  /** After the files are gone: the manager forgets the unit and any failed state it kept. */
  forget(): void {
    this.run("systemctl", ["--user", "daemon-reload"]);
    this.run("systemctl", ["--user", "reset-failed", this.unit]);
  }

  restart(): void {
    must(this.run("systemctl", ["--user", "restart", this.unit]), `systemctl --user restart ${this.unit}`);
  }

  logs(): string {
    return `journalctl --user -u ${serviceName} -f`;
  }

  /** Whether the user's manager keeps running without a login (`loginctl enable-linger`); null when it cannot tell. */
  linger(user = userInfo().username): boolean | null {
    const r = this.run("loginctl", ["show-user", user, "--property=Linger", "--value"]);
    if (r.code !== 0) {
      // No session of the user yet: loginctl knows the setting only from its file.
      return existsSync(`/var/lib/systemd/linger/${user}`) ? true : r.code === null ? null : false;
    }
    return r.out.trim() === "yes";
  }

  /** `loginctl enable-linger` for this user. @throws Error with loginctl's words. */
  enableLinger(): void {
    must(this.run("loginctl", ["enable-linger"]), "loginctl enable-linger");
  }
}

/** The home named in a unit `systemdUnit` wrote (its `Environment="AGENT_AUTOLOOP_HOME=…"` line), or null. */
export function homeOfUnit(text: string): string | null {
  const m = /^Environment="AGENT_AUTOLOOP_HOME=((?:[^"\\]|\\.)*)"$/m.exec(text);
  return m ? m[1]!.replace(/\\(.)/g, "$1").replace(/%%/g, "%").replace(/\$\$/g, "$") : null;
}

/** launchd's per-user domain (macOS). */
export class Launchd implements ServiceManager {
  readonly kind = "launchd";
  readonly plistPath: string;

  constructor(private readonly run: RunTool = runTool, userHome = homedir(), private readonly uid = process.getuid?.() ?? 0) {
    this.plistPath = posix.join(userHome, "Library", "LaunchAgents", `${launchdLabel}.plist`);
  }

  private get domain(): string {
    return `gui/${this.uid}`;
  }

  unusable(lang: Lang): string | null {
    const r = this.run("launchctl", ["print", this.domain]);
    return r.code === 0 ? null : t(lang, "service.noLaunchd", { error: (r.err || r.out).trim().split("\n")[0] ?? "" });
  }

  files(plan: ServicePlan): ServiceFile[] {
    return [{ path: this.plistPath, content: launchdPlist(plan), mode: 0o644 }];
  }

  installedHome(): string | null {
    const text = readText(this.plistPath);
    if (text === null) return null;
    const m = /<key>AGENT_AUTOLOOP_HOME<\/key><string>([^<]*)<\/string>/.exec(text);
    return m ? m[1]!.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&") : null;
  }

  state(): { enabled: boolean; active: boolean } {
    const r = this.run("launchctl", ["print", `${this.domain}/${launchdLabel}`]);
    return { enabled: r.code === 0, active: r.code === 0 && /\bstate = running\b/.test(r.out) };
  }

  register(changed: boolean): void {
    if (changed && this.state().enabled) this.run("launchctl", ["bootout", `${this.domain}/${launchdLabel}`]);
    if (!this.state().enabled) must(this.run("launchctl", ["bootstrap", this.domain, this.plistPath]), "launchctl bootstrap");
    this.run("launchctl", ["enable", `${this.domain}/${launchdLabel}`]);
  }

  unregister(): void {
    if (this.state().enabled) must(this.run("launchctl", ["bootout", `${this.domain}/${launchdLabel}`]), "launchctl bootout");
  }

  restart(): void {
    must(this.run("launchctl", ["kickstart", "-k", `${this.domain}/${launchdLabel}`]), "launchctl kickstart");
  }

  logs(): string {
    return `tail -f ${launchdLogPath("<home>")}`;
  }
}

/** The Task Scheduler (Windows): a task at the user's logon running the hidden launcher. */
export class Schtasks implements ServiceManager {
  readonly kind = "schtasks";

  constructor(private readonly run: RunTool = runTool, private readonly user = windowsUser(), private readonly home: string) {}

  unusable(lang: Lang): string | null {
    const r = this.run("schtasks.exe", ["/Query", "/FO", "CSV", "/NH", "/TN", "\\Microsoft\\Windows\\Time Synchronization\\SynchronizeTime"]);
    return r.code === null ? t(lang, "service.noSchtasks") : null;
  }

  files(plan: ServicePlan): ServiceFile[] {
    const { launcher } = windowsPaths(plan.home);
    // The task's XML goes to schtasks from a file in the home, encoded as its declaration says (UTF-16). The command
    // on PATH is a .cmd of its own folder, which register() adds to the user's PATH.
    return [
      { path: win32.join(plan.home, "service", "task.xml"), content: windowsTaskXml(plan, this.user), mode: 0o600, utf16: true },
      { path: launcher, content: windowsLauncher(plan), mode: 0o600 },
      { path: win32.join(windowsBinDir(), "agent-autoloop.cmd"), content: windowsCommandShim(plan), mode: 0o755 },
    ];
  }

  installedHome(): string | null {
    const r = this.run("schtasks.exe", ["/Query", "/XML", "/TN", serviceName]);
    if (r.code !== 0) return null;
    const m = /agent-autoloop hub, local worker and channels \(([^)]*)\)/.exec(r.out);
    return m ? m[1]!.replace(/&amp;/g, "&") : this.home;
  }

  state(): { enabled: boolean; active: boolean } {
    const r = this.run("schtasks.exe", ["/Query", "/FO", "CSV", "/NH", "/TN", serviceName]);
    return { enabled: r.code === 0, active: r.code === 0 && /"Running"/.test(r.out) };
  }

  register(changed: boolean): void {
    // The home readable by this user alone (protocol.md: Windows 数据目录用 ACL), as 0700 does on Unix.
    must(this.run("icacls.exe", [this.home, "/inheritance:r", "/grant:r", `${this.user}:(OI)(CI)F`, "/Q"]), "icacls");
    // The command's folder on the user's PATH; the folder comes in through the environment, never as script text.
    must(this.run("powershell.exe", ["-NoProfile", "-NonInteractive", "-Command", addToUserPath], { AGENT_AUTOLOOP_BIN: windowsBinDir() }), "PATH");
    const xml = win32.join(this.home, "service", "task.xml");
    must(this.run("schtasks.exe", ["/Create", "/TN", serviceName, "/XML", xml, "/F"]), "schtasks /Create");
    if (changed) this.run("schtasks.exe", ["/End", "/TN", serviceName]);
    must(this.run("schtasks.exe", ["/Run", "/TN", serviceName]), "schtasks /Run");
  }

  unregister(): void {
    this.run("schtasks.exe", ["/End", "/TN", serviceName]);
    must(this.run("schtasks.exe", ["/Delete", "/TN", serviceName, "/F"]), "schtasks /Delete");
  }

  restart(): void {
    this.run("schtasks.exe", ["/End", "/TN", serviceName]);
    must(this.run("schtasks.exe", ["/Run", "/TN", serviceName]), "schtasks /Run");
  }

  logs(): string {
    return `Get-Content -Wait "${windowsPaths(this.home).log}"`;
  }
}

/** A fixed PowerShell script: adds `$env:AGENT_AUTOLOOP_BIN` to the user's PATH unless it is there. */
const addToUserPath = "$d = $env:AGENT_AUTOLOOP_BIN; $p = [Environment]::GetEnvironmentVariable('Path', 'User'); "
  + "if ((\"$p\" -split ';') -notcontains $d) { [Environment]::SetEnvironmentVariable('Path', ((@($p, $d) | Where-Object { $_ }) -join ';'), 'User') }";

/** Where `install` puts the command on Windows: `%LOCALAPPDATA%\\agent-autoloop\\bin`. */
export function windowsBinDir(env: NodeJS.ProcessEnv = process.env): string {
  return win32.join(env.LOCALAPPDATA ?? win32.join(env.USERPROFILE ?? "C:\\", "AppData", "Local"), "agent-autoloop", "bin");
}

/** The command on Windows: a .cmd that runs the CLI with this node, passing its arguments on. */
export function windowsCommandShim(plan: ServicePlan): string {
  return `@"${plan.node}" "${win32.join(plan.engine, "bin", "agent-autoloop.js")}" %*\r\n`;
}

/** `DOMAIN\name` of the user running this process on Windows (USERDOMAIN and USERNAME), else the user's name. */
export function windowsUser(env: NodeJS.ProcessEnv = process.env): string {
  const name = env.USERNAME ?? userInfo().username;
  return env.USERDOMAIN ? `${env.USERDOMAIN}\\${name}` : name;
}

/** The service manager of this OS for `home`, or null on an OS with none of the three. */
export function serviceManager(home: string, platform: NodeJS.Platform = process.platform, run: RunTool = runTool): ServiceManager | null {
  if (platform === "linux") return new Systemd(run);
  if (platform === "darwin") return new Launchd(run);
  if (platform === "win32") return new Schtasks(run, windowsUser(), home);
  return null;
}

/** Where `install` links the command on Unix: `~/.local/bin/agent-autoloop` (the XDG place for a user's programs). */
export function unixLinkPath(userHome = homedir()): string {
  return join(userHome, ".local", "bin", "agent-autoloop");
}
