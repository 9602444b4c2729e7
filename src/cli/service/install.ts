/**
 * `agent-autoloop install` and `uninstall` (issue 28; protocol.md: 安装与卸载不改变 HTTP 协议 … uninstall 确认后移除
 * 自身程序、链接和服务，始终保留规则、密钥和记录；`--yes` 只跳过确认).
 *
 * `install` puts the command on PATH (`~/.local/bin/agent-autoloop` on Unix) and registers hub + local worker +
 * channels (`serve`) as a per-user service that starts at login and again after it fails (managers.ts). It is
 * idempotent (a second run finds every file as it would write it and says nothing changed), refuses — before writing
 * anything — where no service manager can be used (saying why and how to run the hub instead), when the service
 * already serves another home, when a link of someone else's is in the way, or when a hub runs on this home outside
 * the service; a failure halfway puts back every file it changed. It never touches rules, keys or records: a home that
 * is not set up is set up as the first `serve` would.
 *
 * `uninstall` asks first (`--yes` skips only that), stops and removes the service and the command's link, and keeps
 * every file of the home, which it names.
 */
import { randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, renameSync, rmdirSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { createInterface } from "node:readline/promises";
import { delimiter, dirname, isAbsolute, join, relative } from "node:path";
import { engineDir, type Home } from "../../common/paths.js";
import { t, type Lang } from "../../i18n/messages.js";
import { lockHeldBy } from "../../host/lock.js";
import { findHub } from "../connect.js";
import { CliError } from "../print.js";
import { loginShellPath, servicePath } from "./login-path.js";
import { Systemd, serviceManager, unixLinkPath, type ServiceFile, type ServiceManager } from "./managers.js";
import type { ServicePlan } from "./files.js";

/** How long `install` waits for the started service's hub to answer as this home's hub (ms). */
export const serviceStartWaitMs = 30_000;

/** What install and uninstall need from outside; tests give their own. */
export interface ServiceCommandOptions {
  home: Home;
  lang: Lang;
  /** `--yes`: answer yes to every question (install: enabling linger; uninstall: the confirmation). */
  yes: boolean;
  /** Prints one line for the person. */
  say: (line: string) => void;
  /** Asks a yes/no question; resolves false when nobody can answer (no terminal). */
  ask?: (question: string) => Promise<boolean>;
  manager?: ServiceManager | null;
  /** The engine and node the service runs (this process's by default). */
  engine?: string;
  node?: string;
  /** PATH of the login shell (read with login-path.ts by default; null when it cannot be read). */
  loginPath?: string | null;
  linkPath?: string;
  platform?: NodeJS.Platform;
}

/** Asks on the terminal; false without one. */
export async function askOnTerminal(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^(y|yes|是|好)$/i.test((await rl.question(`${question} `)).trim());
  } finally {
    rl.close();
  }
}

/** The text of a file, or null when there is none. */
function current(path: string, utf16 = false): string | null {
  try {
    const bytes = readFileSync(path);
    return utf16 ? bytes.subarray(2).toString("utf16le") : bytes.toString("utf8");
  } catch {
    return null;
  }
}

/** Writes a file atomically (a temporary file of a random name, made new — never through a link — renamed over it), making its folder. */
function write(path: string, content: string, mode: number, utf16 = false): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(tmp, utf16 ? Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(content, "utf16le")]) : content, { mode, flag: "wx" });
  renameSync(tmp, path);
}

/** What is at the link's place: nothing, our link to `target`, a link of another agent-autoloop, or something else. */
function linkState(path: string, target: string): "none" | "ours" | "replaceable" | "foreign" {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return "none";
  }
  if (!st.isSymbolicLink()) return "foreign";
  const to = readlinkSync(path);
  if (to === target) return "ours";
  return /(^|[\\/])bin[\\/]agent-autoloop\.js$/.test(to) ? "replaceable" : "foreign";
}

/** How to keep the hub running where no service manager can be used, in `lang`. */
function instead(o: { engine: string; node: string; home: Home; lang: Lang }): string {
  return t(o.lang, "service.instead", { node: o.node, bin: join(o.engine, "bin", "agent-autoloop.js"), home: o.home.dir, log: join(o.home.dir, "hub.log") });
}

/**
 * Installs the service for `o.home` (see the module comment).
 * @returns the exit code: 0 installed (or nothing to change), 1 installed but the hub did not answer in time.
 * @throws CliError naming what is in the way, with nothing written.
 */
export async function install(o: ServiceCommandOptions): Promise<number> {
  const { lang, home } = o;
  const engine = o.engine ?? engineDir;
  const node = o.node ?? process.execPath;
  const platform = o.platform ?? process.platform;
  const manager = o.manager === undefined ? serviceManager(home.dir, platform) : o.manager;
  if (!manager) throw new CliError(t(lang, "service.cannot", { why: t(lang, "service.noManager", { platform }), instead: instead({ engine, node, home, lang }) }));
  const why = manager.unusable(lang);
  if (why) throw new CliError(t(lang, "service.cannot", { why, instead: instead({ engine, node, home, lang }) }));
  const other = manager.installedHome();
  if (other !== null && other !== home.dir) throw new CliError(t(lang, "service.otherHome", { other, home: home.dir }));
  const before = manager.state();
  const held = lockHeldBy(home);
  if (held?.by === "hub" && !(other === home.dir && before.active)) throw new CliError(t(lang, "service.hubRunsOutside", { pid: held.pid, home: home.dir }));

  const unix = platform !== "win32";
  const linkPath = o.linkPath ?? unixLinkPath();
  const linkTarget = join(engine, "bin", "agent-autoloop.js");
  // The link's folder first: a login profile that puts ~/.local/bin on PATH only when it exists (Debian's) then gives
  // the same PATH now as at the next install, which therefore finds nothing to change.
  const madeLinkDir = unix && !existsSync(dirname(linkPath));
  if (madeLinkDir) mkdirSync(dirname(linkPath), { recursive: true });
  const login = o.loginPath !== undefined ? o.loginPath : unix ? loginShellPath() : null;
  const plan: ServicePlan = { home: home.dir, engine, node, path: unix ? servicePath(login, node, dirname(linkPath)) : process.env.PATH ?? "", lang };
  const files = manager.files(plan);
  const changed = files.filter((f) => current(f.path, f.utf16) !== f.content);
  const link = unix ? linkState(linkPath, linkTarget) : "ours";
  if (link === "foreign") {
    if (madeLinkDir) rmdirSync(dirname(linkPath));
    throw new CliError(t(lang, "service.linkInTheWay", { path: linkPath }));
  }

  if (changed.length === 0 && link === "ours" && before.enabled && before.active) {
    o.say(t(lang, "service.unchanged", { home: home.dir }));
  } else {
    // A home that was never set up is set up now, as the service's first `serve` would (nothing existing is touched).
    if (!existsSync(home.config)) {
      const { initialize } = await import("../../host/serve.js");
      initialize(home, lang);
    }
    try {
      applyAll(manager, changed, unix && link !== "ours" ? { path: linkPath, target: linkTarget, replace: link === "replaceable" } : null, before.enabled, lang);
    } catch (e) {
      if (madeLinkDir) {
        try {
          rmdirSync(dirname(linkPath));
        } catch {
          // something was put there meanwhile: left alone
        }
      }
      throw e;
    }
    o.say(t(lang, "service.installed", { kind: manager.kind, files: files.map((f) => f.path).join(", ") }));
    if (unix) o.say(t(lang, "service.linked", { path: linkPath, target: linkTarget }));
  }

  const up = await waitForHub(home, lang);
  if (unix && login !== null && !login.split(delimiter).includes(dirname(linkPath))) o.say(t(lang, "service.linkNotOnPath", { dir: dirname(linkPath) }));
  if (manager instanceof Systemd) await offerLinger(manager, o);
  if (!up) {
    o.say(t(lang, "service.notAnswering", { seconds: serviceStartWaitMs / 1000, logs: manager.logs(lang) }));
    return 1;
  }
  o.say(t(lang, "service.running", { url: up, logs: manager.logs(lang) }));
  return 0;
}

/**
 * Writes the changed files and the link, then registers the service; on any failure puts every file back as it was
 * (and takes a new registration back), so nothing is left half-installed.
 * @throws CliError saying what failed and that nothing was installed.
 */
function applyAll(manager: ServiceManager, changed: ServiceFile[], link: { path: string; target: string; replace: boolean } | null, wasEnabled: boolean, lang: Lang): void {
  const undo: (() => void)[] = [];
  try {
    for (const f of changed) {
      const old = existsSync(f.path) ? readFileSync(f.path) : null;
      undo.push(() => (old === null ? unlinkSync(f.path) : writeFileSync(f.path, old)));
      write(f.path, f.content, f.mode, f.utf16);
    }
    if (link) {
      const old = link.replace ? readlinkSync(link.path) : null;
      mkdirSync(dirname(link.path), { recursive: true });
      if (link.replace) unlinkSync(link.path);
      undo.push(() => {
        unlinkSync(link.path);
        if (old !== null) symlinkSync(old, link.path);
      });
      symlinkSync(link.target, link.path);
    }
    manager.register(changed.length > 0);
  } catch (e) {
    if (!wasEnabled) {
      try {
        manager.unregister();
      } catch {
        // it was never registered
      }
    }
    for (const u of undo.reverse()) {
      try {
        u();
      } catch {
        // put back what can be
      }
    }
    if (manager instanceof Systemd) manager.forget();
    throw new CliError(t(lang, "service.failed", { error: (e as Error).message }));
  }
}

/** Waits until this home's hub answers (the service started it). @returns its URL, or null after `serviceStartWaitMs`. */
async function waitForHub(home: Home, lang: Lang): Promise<string | null> {
  const until = Date.now() + serviceStartWaitMs;
  for (;;) {
    const found = await findHub(home, lang);
    if ("url" in found) return found.url;
    if (Date.now() > until) return null;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Offers `loginctl enable-linger` (the hub then runs from boot, not only while the user is logged in), and explains it. */
async function offerLinger(manager: Systemd, o: ServiceCommandOptions): Promise<void> {
  if (manager.linger() !== false) return;
  const yes = o.yes || (await (o.ask ?? askOnTerminal)(t(o.lang, "service.lingerQuestion")));
  if (!yes) {
    o.say(t(o.lang, "service.lingerExplained"));
    return;
  }
  try {
    manager.enableLinger();
    o.say(t(o.lang, "service.lingerOn"));
  } catch (e) {
    o.say(t(o.lang, "service.lingerFailed", { error: (e as Error).message, user: userInfo().username }));
  }
}

/**
 * Removes the service and the command's link of this home, after a confirmation (`--yes` skips it); keeps every file
 * of the home. @returns the exit code (0). @throws CliError when the service serves another home, when nobody can
 * confirm, or when the service manager refuses.
 */
export async function uninstall(o: ServiceCommandOptions): Promise<number> {
  const { lang, home } = o;
  const engine = o.engine ?? engineDir;
  const platform = o.platform ?? process.platform;
  const manager = o.manager === undefined ? serviceManager(home.dir, platform) : o.manager;
  const linkPath = o.linkPath ?? unixLinkPath();
  const link = platform !== "win32" ? linkState(linkPath, join(engine, "bin", "agent-autoloop.js")) : "none";
  const usable = manager && manager.unusable(lang) === null ? manager : null;
  const other = usable?.installedHome() ?? null;
  if (other !== null && other !== home.dir) throw new CliError(t(lang, "service.otherHome", { other, home: home.dir }));
  if (other === null && link !== "ours") {
    o.say(t(lang, "service.nothingInstalled", { home: home.dir }));
    return 0;
  }
  if (!o.yes) {
    if (!process.stdin.isTTY && !o.ask) throw new CliError(t(lang, "service.confirmNeeded"));
    if (!(await (o.ask ?? askOnTerminal)(t(lang, "service.uninstallQuestion", { home: home.dir })))) {
      o.say(t(lang, "service.uninstallCancelled"));
      return 0;
    }
  }
  if (usable && other !== null) {
    try {
      usable.unregister();
    } catch (e) {
      throw new CliError(t(lang, "service.uninstallFailed", { error: (e as Error).message }));
    }
    // The definition outside the home goes; files inside the home (service.env, the Windows launcher) stay with it.
    for (const f of usable.files({ home: home.dir, engine, node: process.execPath, path: "" })) {
      const rel = relative(home.dir, f.path);
      const inHome = rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
      if (!inHome && existsSync(f.path)) unlinkSync(f.path);
    }
    if (usable instanceof Systemd) usable.forget();
  }
  if (link === "ours") unlinkSync(linkPath);
  o.say(t(lang, "service.uninstalled", { home: home.dir }));
  return 0;
}

/**
 * `doctor`'s look at the service (issue 28: the login shell's PATH read at install, refreshed by doctor): when a
 * service of this home is installed, its PATH is read again from the login shell and, when it changed, written into the
 * service's files (not registered again: the running hub keeps its PATH until it restarts).
 * @returns one line for doctor (ok), or null when no service of this home is installed or the PATH cannot be read.
 */
export function refreshServicePath(home: Home, lang: Lang, manager: ServiceManager | null = serviceManager(home.dir), linkPath = unixLinkPath()): { ok: boolean; line: string } | null {
  if (!manager || process.platform === "win32" || manager.unusable(lang) !== null || manager.installedHome() !== home.dir) return null;
  const login = loginShellPath();
  if (login === null) return null;
  const plan: ServicePlan = { home: home.dir, engine: engineDir, node: process.execPath, path: servicePath(login, process.execPath, dirname(linkPath)), lang };
  const changed = manager.files(plan).filter((f) => current(f.path, f.utf16) !== f.content);
  for (const f of changed) write(f.path, f.content, f.mode, f.utf16);
  return changed.length === 0
    ? { ok: true, line: t(lang, "service.pathSame", { kind: manager.kind }) }
    : { ok: true, line: t(lang, "service.pathRefreshed", { kind: manager.kind, restart: restartHint(manager) }) };
}

/** The command that restarts the service, for people. */
function restartHint(manager: ServiceManager): string {
  return manager.kind === "systemd" ? "systemctl --user restart agent-autoloop" : manager.kind === "launchd" ? "launchctl kickstart -k gui/$(id -u)/dev.agent-autoloop.hub" : "schtasks /Run /TN agent-autoloop";
}
