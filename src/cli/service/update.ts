/**
 * `agent-autoloop update` (issue 28; protocol.md 版本与兼容: 大改动可以先发试用版（-rc），安装和 update 不会装到它).
 *
 * In the engine's git checkout: refuses on local changes to tracked files; fetches the tags of `origin`; picks the
 * newest release tag `vX.Y.Z` (never an `-rc`); when the checkout does not contain it yet, shows the release notes of
 * every newer release (the annotated tags' messages), asks (`--yes` skips), checks the tag out, installs the packages
 * when package-lock.json changed, builds, and restarts the service when one serves this home, waiting for the hub to
 * answer with the new version. Any failure on the way puts the old commit back the same way (and restarts the old
 * version), so a failed update leaves the old version running.
 */
import { spawnSync } from "node:child_process";
import { engineDir, type Home } from "../../common/paths.js";
import { t, type Lang } from "../../i18n/messages.js";
import { findHub } from "../connect.js";
import { CliError } from "../print.js";
import { askOnTerminal, type ServiceCommandOptions } from "./install.js";
import { serviceManager } from "./managers.js";
import { compareVersions, newestRelease, parseVersionTag, type Version } from "../../host/version.js";

/** How long one git or npm step of an update may take (ms): `npm ci` downloads and may compile. */
export const updateStepTimeoutMs = 15 * 60_000;
/** How long `update` waits for the restarted hub to answer with the new version (ms). */
export const updateRestartWaitMs = 60_000;

/** What `update` needs from outside, as `install` does (the home, the language, `--yes`, saying, asking); tests give their own. */
export interface UpdateOptions extends Pick<ServiceCommandOptions, "home" | "lang" | "yes" | "say" | "ask" | "engine" | "manager"> {
  /** The git remote to fetch tags from. */
  remote?: string;
}

/** Runs a command in `cwd`; its output, and an error naming it when it fails. */
function step(cwd: string, file: string, args: string[]): { ok: true; out: string } | { ok: false; error: string } {
  const r = spawnSync(file, args, {
    cwd, encoding: "utf8", timeout: updateStepTimeoutMs, stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 1024 * 1024,
    // npm on Windows is a .cmd file, which only a shell runs; the arguments here are fixed words.
    shell: process.platform === "win32" && file === "npm",
  });
  if (r.error || r.status !== 0) {
    const words = (r.stderr || r.stdout || r.error?.message || `exit ${r.status}`).trim().split("\n").slice(-5).join("\n");
    return { ok: false, error: `${file} ${args.join(" ")}: ${words}` };
  }
  return { ok: true, out: r.stdout };
}

/** The output of a git command in the engine, or throws CliError with git's words. */
function git(engine: string, args: string[], lang: Lang): string {
  const r = step(engine, "git", args);
  if (!r.ok) throw new CliError(t(lang, "update.gitFailed", { error: r.error }));
  return r.out.trim();
}

/** Waits for this home's hub to answer `GET /v1/health` with `version`. @returns whether it did in time. */
async function waitForVersion(home: Home, lang: Lang, version: string): Promise<boolean> {
  const until = Date.now() + updateRestartWaitMs;
  while (Date.now() < until) {
    const found = await findHub(home, lang);
    if ("url" in found) {
      try {
        const health = (await (await fetch(`${found.url}/v1/health`)).json()) as { version?: string };
        if (health.version === version) return true;
      } catch {
        // restarting
      }
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}

/**
 * Updates the engine to the newest release (see the module comment).
 * @returns the exit code: 0 updated or already up to date, 1 failed and rolled back.
 * @throws CliError when it cannot start (not a checkout, local changes, no release, nobody to confirm).
 */
export async function update(o: UpdateOptions): Promise<number> {
  const { lang, home } = o;
  const engine = o.engine ?? engineDir;
  const remote = o.remote ?? "origin";
  if (step(engine, "git", ["rev-parse", "--is-inside-work-tree"]).ok !== true) throw new CliError(t(lang, "update.notCheckout", { engine }));
  const dirty = git(engine, ["status", "--porcelain", "--untracked-files=no"], lang);
  if (dirty) throw new CliError(t(lang, "update.localChanges", { engine, files: dirty.split("\n").slice(0, 10).map((l) => l.slice(3)).join(", ") }));
  git(engine, ["fetch", "--quiet", "--tags", remote], lang);
  const tags = git(engine, ["tag", "--list", "v*"], lang).split("\n").filter(Boolean);
  const newest = newestRelease(tags);
  if (!newest) {
    o.say(t(lang, "update.noRelease"));
    return 0;
  }
  if (step(engine, "git", ["merge-base", "--is-ancestor", newest, "HEAD"]).ok) {
    o.say(t(lang, "update.upToDate", { version: newest }));
    return 0;
  }
  // Release notes of every release this update brings, oldest first.
  const newestVersion = parseVersionTag(newest)!;
  const newer = tags
    .map((tag) => ({ tag, v: parseVersionTag(tag) }))
    .filter((x): x is { tag: string; v: Version } => x.v !== null && x.v.rc === null && compareVersions(x.v, newestVersion) <= 0)
    .filter((x) => !step(engine, "git", ["merge-base", "--is-ancestor", x.tag, "HEAD"]).ok)
    .sort((a, b) => compareVersions(a.v, b.v))
    .map((x) => x.tag);
  for (const tag of newer) o.say(t(lang, "update.notes", { version: tag, notes: git(engine, ["tag", "--list", "--format=%(contents)", tag], lang) || "—" }));
  if (!o.yes) {
    if (!o.ask && !process.stdin.isTTY) throw new CliError(t(lang, "update.confirmNeeded"));
    if (!(await (o.ask ?? askOnTerminal)(t(lang, "update.question", { version: newest })))) {
      o.say(t(lang, "update.cancelled"));
      return 0;
    }
  }
  const old = git(engine, ["rev-parse", "HEAD"], lang);
  const branch = step(engine, "git", ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  const lockChanged = !step(engine, "git", ["diff", "--quiet", old, newest, "--", "package-lock.json"]).ok;
  const manager = o.manager === undefined ? serviceManager(home.dir) : o.manager;
  const service = manager && manager.unusable(lang) === null && manager.installedHome() === home.dir ? manager : null;

  /** Checks out `ref`, installs and builds; the first failure's words, or null. */
  const switchTo = (ref: string, detach: boolean): string | null => {
    const checkout = step(engine, "git", ["checkout", "--quiet", ...(detach ? ["--detach"] : []), ref]);
    if (!checkout.ok) return checkout.error;
    if (lockChanged) {
      const ci = step(engine, "npm", ["ci", "--no-audit", "--no-fund"]);
      if (!ci.ok) return ci.error;
    }
    const build = step(engine, "npm", ["run", "build"]);
    return build.ok ? null : build.error;
  };

  o.say(t(lang, "update.switching", { version: newest }));
  let failure = switchTo(newest, true);
  if (failure === null && service) {
    try {
      service.restart();
      if (!(await waitForVersion(home, lang, newest))) failure = t(lang, "update.notAnswering", { version: newest, seconds: updateRestartWaitMs / 1000, logs: service.logs(lang) });
    } catch (e) {
      failure = (e as Error).message;
    }
  }
  if (failure === null) {
    o.say(service ? t(lang, "update.done", { version: newest }) : t(lang, "update.doneRestart", { version: newest }));
    return 0;
  }
  // Roll back: the old commit (its branch, if it was on one), its packages and build, the old version running.
  o.say(t(lang, "update.failed", { version: newest, error: failure }));
  const back = branch.ok && branch.out.trim() ? switchTo(branch.out.trim(), false) : switchTo(old, true);
  if (service) {
    try {
      service.restart();
    } catch (e) {
      o.say(t(lang, "update.rollbackFailed", { error: (e as Error).message }));
      return 1;
    }
  }
  o.say(back === null ? t(lang, "update.rolledBack", { commit: old.slice(0, 12) }) : t(lang, "update.rollbackFailed", { error: back }));
  return 1;
}
