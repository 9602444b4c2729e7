/**
 * What a git configuration names that the owner's git would read or run (issue 26, rounds 13 to 15): more
 * configuration (`include.path`, `includeIf.*.path`), hooks (`core.hooksPath`), and — from every other key but a short
 * list of data keys (`dataKeys`) — the programs and files its values name. Shared by the guard before a sandboxed run
 * (steering.ts) and the check after it (planted.ts); each pass reads each file once, with a limit (`ConfigPass`).
 */
import { execFileSync } from "node:child_process";
import { lstatSync, readlinkSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { isFolder, isRegularFile, realPathOr } from "../common/file-checks.js";
import { expandUserPath, valueWords } from "./config-words.js";
import { gitCommonDir, gitEnv, gitReadTimeoutMs } from "./git-read.js";
import { gitPrivateDir } from "./git-isolated.js";

/** How deep a configuration's `include.path` is followed: as deep as git follows (its MAX_INCLUDE_DEPTH, 10; F14-4). */
const includeDepthMax = 10;

/** One key of a configuration file: `section.subsection.key` (section and key in lower case, as git gives them) and its value (null: a key with no `=`). */
export interface ConfigEntry {
  key: string;
  value: string | null;
}

/** How large a configuration file the guard reads at most, in bytes (F16-6: git took 10 s over a 2 GiB comment). */
export const configFileBytesMax = 1024 * 1024;

/**
 * A pass could not read the configuration to its end (steering.ts turns it into a refused launch, planted.ts names it):
 * more files than its limit (`configFiles`), a file larger than `configFileBytesMax` (`configSize`: never given to
 * git), or one git could not read within `gitReadTimeoutMs` or refused (`configRead`: fail closed, F16-6). `file`: the
 * file, for the last two.
 */
export class ConfigFilesLimitError extends Error {
  constructor(readonly limit: number, readonly kind: "configFiles" | "configSize" | "configRead" = "configFiles", readonly file: string | null = null) {
    super(`configuration files: ${kind} ${file ?? ""} (${limit})`);
  }
}

/**
 * The reading of configuration files in one guard pass — the guard before a launch over all its writable folders, or
 * the check after a run: each file read once with git (`git config --list`, no includes followed by git), the owner's
 * global configuration once (issue 26 round 15, F15-6: 98 repositories each with a chain of 10 includes held the hub
 * 16 s, every repository re-reading the global files).
 */
export class ConfigPass {
  private readonly files = new Map<string, ConfigEntry[]>();
  private globalNamed: ConfigNamed | null = null;
  private reads = 0;

  /**
   * @param limit how many files at most are read with git; one more throws `ConfigFilesLimitError`.
   * @param skipInclude an included file not to read (the check after a run: a file made during it is moved aside, so
   *   git will not read it either, and what it names does not matter).
   * @param before the guard's pass before the run, whose reading of a file is taken again, uncounted, when `unchanged`
   *   says the run could not write it (read-only in the sandbox, or outside the folders it wrote).
   * @param privateDir where the git reads of this pass make their private folders (git-isolated.ts `gitPrivateDir`):
   *   the launch's, taken by the check after the run.
   */
  constructor(
    readonly limit = Number.POSITIVE_INFINITY,
    private readonly skipInclude: (file: string) => boolean = () => false,
    private readonly before?: { pass: ConfigPass; unchanged: (file: string) => boolean },
    readonly privateDir: string = before?.pass.privateDir ?? gitPrivateDir(),
  ) {}

  /** How many files this pass has read with git. */
  get filesRead(): number {
    return this.reads;
  }

  /**
   * The keys of the configuration file `file` (`included`: reached by an include), none when it is missing, not a
   * regular file (a named pipe would hold git; the owner's git would hang on it, not run anything) or unreadable.
   * @throws ConfigFilesLimitError when reading it would pass the limit, it is larger than `configFileBytesMax`, or git
   *   cannot read it in time.
   */
  entries(file: string, included: boolean): ConfigEntry[] {
    const known = this.files.get(file) ?? (this.before?.unchanged(file) ? this.before.pass.files.get(file) : undefined);
    if (known) return known;
    let found: ConfigEntry[] = [];
    if (isRegularFile(file) && !(included && this.skipInclude(file))) {
      if (this.reads >= this.limit) throw new ConfigFilesLimitError(this.limit);
      this.reads++;
      found = readConfigFile(file);
    }
    this.files.set(file, found);
    return found;
  }

  /** What the owner's global configuration names (`globalConfigNamed`), read once per pass. */
  global(): ConfigNamed {
    this.globalNamed ??= globalConfigNamed(this);
    return this.globalNamed;
  }
}

/** Every key of one configuration file, read with git (`--list -z`: `key\nvalue\0`, or `key\0` for a key with no value). */
function readConfigFile(file: string): ConfigEntry[] {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return [];
  }
  // Sized before git runs: a file of sparse zeros is a comment git reads for seconds, on the hub's thread (F16-6).
  if (size > configFileBytesMax) throw new ConfigFilesLimitError(configFileBytesMax, "configSize", file);
  let text: string;
  try {
    text = execFileSync("git", ["config", "--file", file, "--no-includes", "-z", "--list"], { env: gitEnv(), stdio: ["ignore", "pipe", "ignore"], timeout: gitReadTimeoutMs }).toString("utf8");
  } catch (e) {
    // An empty file or one with no keys: git exits 1 with nothing printed. Anything else (a file git refuses, a
    // timeout, no git) is not "no keys": what it makes git run is unknown (fail closed).
    if ((e as { status?: number | null }).status === 1 && ((e as { stdout?: Buffer }).stdout?.length ?? 0) === 0 && !(e as { signal?: string | null }).signal) return [];
    throw new ConfigFilesLimitError(gitReadTimeoutMs, "configRead", file);
  }
  const out: ConfigEntry[] = [];
  for (const entry of text.split("\0")) {
    if (!entry) continue;
    const nl = entry.indexOf("\n");
    out.push(nl < 0 ? { key: entry, value: null } : { key: entry.slice(0, nl), value: entry.slice(nl + 1) });
  }
  return out;
}

/**
 * What a configuration names (`configNamed`, `globalConfigNamed`): more configuration, hooks folders, and the programs,
 * files and folders its other keys name (F14-3, F14-5, F15-1) — absolute paths, whether they exist or not.
 */
export interface ConfigNamed {
  includes: string[];
  hooks: string[];
  commands: string[];
}

/**
 * What a repository's configuration names for the owner's git there: its own files (the common folder's `config` —
 * a linked worktree's git folder holds only its `config.worktree`, F13-7 — its `config`, `config.worktree`) and the
 * owner's global files: `include.path`, `includeIf.*.path` of its own files (relative to the file naming them; `~/`
 * from HOME), followed `includeDepthMax` deep (the global files' includes are followed too, for what they name, and
 * given by `globalConfigNamed`); `core.hooksPath` (relative to the work tree `tree`); and what every other key names
 * (`namedPaths`; relative words in `tree`, where git runs them). Absolute paths, links resolved where they exist.
 * @throws ConfigFilesLimitError past `pass`'s limit.
 */
export function configNamed(gitDir: string, tree: string, pass: ConfigPass): ConfigNamed {
  const reader = configReader(tree, pass);
  for (const file of [join(gitCommonDir(gitDir), "config"), join(gitDir, "config"), join(gitDir, "config.worktree")]) reader.read(file, 0, true);
  for (const file of globalConfigFiles()) reader.read(file, 0, false);
  reader.environment(false);
  return reader.named;
}

/**
 * What the owner's global git configuration (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`) names as more
 * configuration — `include.path` and `includeIf.*.path` whatever their condition, followed `includeDepthMax` deep —
 * as its hooks (an absolute `core.hooksPath`; a relative one is each work tree's, `configNamed`), and by an absolute
 * path in its other keys. The owner's git reads an included file in every repository its condition matches, so one in
 * a folder an agent writes is kept read-only there (issue 26 round 13, F13-6). Absolute paths, links resolved where
 * they exist. Use `pass.global()`: read once per pass.
 * @throws ConfigFilesLimitError past `pass`'s limit.
 */
export function globalConfigNamed(pass: ConfigPass): ConfigNamed {
  const reader = configReader(null, pass);
  const files = globalConfigFiles();
  for (const file of files) reader.read(file, 0, true);
  reader.environment(true);
  const { includes, hooks, commands } = reader.named;
  // A global file that is a link (dotfile managers: `~/.gitconfig -> ~/project/dotfiles/gitconfig`) is read where it
  // leads, also when that file is not there yet (F13-10 (a)); each file itself is kept too (F16-3: `GIT_CONFIG_GLOBAL`
  // or `GIT_CONFIG_SYSTEM` naming a file in a folder an agent writes).
  const targets = files.map(linkTarget).filter((f): f is string => f !== null);
  return { includes: [...files.map((f) => realPathOr(f, f)), ...targets, ...includes], hooks: hooks.filter((h) => isAbsolute(h)), commands };
}

/**
 * Where `path` really lies when a link leads there — the file itself a link (its real path, or its target's when that
 * is missing), or a folder on its way (`~/.config/git -> ~/dotfiles/git`, with or without the file: F14-6); null when
 * no link is on the way.
 */
function linkTarget(path: string): string | null {
  try {
    if (lstatSync(path).isSymbolicLink()) return realPathOr(path, null) ?? resolve(dirname(path), readlinkSync(path));
  } catch {
    // missing: its folder may be a link
  }
  const parent = realPathOr(dirname(path), null);
  return parent !== null && parent !== dirname(path) ? join(parent, basename(path)) : null;
}

/**
 * The configuration files the owner's git reads outside a repository, whether they exist or not (F16-3): the system
 * file (none with `GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_SYSTEM` when set, else where this machine's git has it), and
 * `GIT_CONFIG_GLOBAL` when set or else `~/.gitconfig` and `$XDG_CONFIG_HOME/git/config`. The hub's environment is the
 * owner's git's as far as the guard can know (an empty variable counts as unset, as git's own booleans do).
 */
function globalConfigFiles(): string[] {
  const env = process.env;
  const home = env.HOME ?? "/";
  const xdg = env.XDG_CONFIG_HOME || join(home, ".config");
  const system = isTrue(env.GIT_CONFIG_NOSYSTEM) ? [] : [env.GIT_CONFIG_SYSTEM || defaultSystemFile()];
  return [...system, ...(env.GIT_CONFIG_GLOBAL ? [env.GIT_CONFIG_GLOBAL] : [join(home, ".gitconfig"), join(xdg, "git", "config")])];
}

/** Whether a boolean variable of git's is true (`1`, `true`, `yes`, `on`; anything but empty, `0`, `false`, `no`, `off`). */
function isTrue(value: string | undefined): boolean {
  return value !== undefined && !/^(|0|false|no|off)$/i.test(value.trim());
}

let systemFile: string | undefined;

/**
 * Where this machine's git reads its system configuration (built in: `$(prefix)/etc/gitconfig`, `/etc/gitconfig` for
 * a prefix of `/usr`), as `git config --system --show-origin --list` names it; when the file is missing, as git's
 * refusal names it (read in the C locale); when it is empty (git names nothing), from git's own prefix (`git
 * --exec-path` is `<prefix>/libexec/git-core` or `<prefix>/lib/git-core`); `/etc/gitconfig` when git gives none of
 * these. Hostile round 47, F47a-3: a git installed in `~/miniconda3` reads `~/miniconda3/etc/gitconfig`, which the
 * guard took for `/etc/gitconfig` when missing, so an agent's new file there went unnoticed. Asked once per process.
 */
export function defaultSystemFile(): string {
  if (systemFile === undefined) {
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/", LC_ALL: "C", LANGUAGE: "" };
    const git = (args: string[]) => execFileSync("git", args, { env, stdio: ["ignore", "pipe", "pipe"], timeout: gitReadTimeoutMs }).toString("utf8");
    systemFile = "/etc/gitconfig";
    try {
      const m = /^file:([^\0]+)\0/.exec(git(["config", "--system", "--show-origin", "-z", "--list"]));
      if (m) systemFile = m[1]!;
      else systemFile = systemFileOfPrefix(git(["--exec-path"]).trim()) ?? systemFile;
    } catch (e) {
      // A missing file: git names it ("unable to read config file '<path>'"); no git: the usual place.
      const m = /unable to read config file '([^']+)'/.exec(String((e as { stderr?: Buffer }).stderr ?? ""));
      if (m && m[1]!.startsWith("/")) systemFile = m[1]!;
    }
  }
  return systemFile;
}

/** The system configuration file of a git whose `--exec-path` is `execPath`, by git's build rule; null when unknown. */
function systemFileOfPrefix(execPath: string): string | null {
  const m = /^(.*)\/(?:libexec|lib)\/git-core$/.exec(execPath);
  if (!m) return null;
  const prefix = m[1] || "/";
  return prefix === "/usr" ? "/etc/gitconfig" : `${prefix === "/" ? "" : prefix}/etc/gitconfig`;
}

/**
 * The keys the hub's environment gives the owner's git (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_<n>`,
 * `GIT_CONFIG_VALUE_<n>`: F16-3), keys in lower case as git gives them (the subsection as written).
 */
function environmentEntries(): ConfigEntry[] {
  const env = process.env;
  const count = Number(env.GIT_CONFIG_COUNT || 0);
  const out: ConfigEntry[] = [];
  for (let i = 0; Number.isInteger(count) && i < Math.min(count, 1000); i++) {
    const key = env[`GIT_CONFIG_KEY_${i}`];
    if (!key) continue;
    const first = key.indexOf(".");
    const last = key.lastIndexOf(".");
    out.push({ key: first < 0 ? key.toLowerCase() : `${key.slice(0, first).toLowerCase()}${key.slice(first, last)}${key.slice(last).toLowerCase()}`, value: env[`GIT_CONFIG_VALUE_${i}`] ?? "" });
  }
  return out;
}

/**
 * A reader of configuration files for what they name: `read(file, level, record)` adds to `named`, following
 * includes (each file once; `record`: its includes are listed in `named.includes`). A relative `core.hooksPath` and
 * relative words of other values are resolved in the work tree `tree`; with no tree (the global files alone) a relative
 * hooks path is left relative and relative words are dropped.
 */
function configReader(tree: string | null, pass: ConfigPass) {
  const named: ConfigNamed = { includes: [], hooks: [], commands: [] };
  const seen = new Set<string>();
  const home = process.env.HOME ?? "/";
  const read = (file: string, level: number, record: boolean): void => {
    if (seen.has(file) || level > includeDepthMax) return;
    seen.add(file);
    take(pass.entries(file, level > 0), dirname(file), level, record);
  };
  // The keys of one file (its folder `base`) or of the environment (the hub's folder).
  const take = (entries: ConfigEntry[], base: string, level: number, record: boolean): void => {
    for (const { key, value } of entries) {
      if (value === null) continue;
      if (key === "include.path" || (key.startsWith("includeif.") && key.endsWith(".path"))) {
        const path = expandUserPath(value, home);
        if (!path) continue;
        const included = isAbsolute(path) ? path : resolve(base, path);
        if (record) named.includes.push(realPathOr(included, included));
        read(included, level + 1, record);
      } else if (key === "core.hookspath") {
        const path = expandUserPath(value, home);
        if (!path) continue;
        if (!isAbsolute(path) && tree === null) named.hooks.push(path);
        else {
          const at = isAbsolute(path) ? path : resolve(tree!, path);
          named.hooks.push(realPathOr(at, at));
        }
      } else if (!isData(key, value)) named.commands.push(...namedPaths(key, value, tree));
    }
  };
  const environment = (record: boolean) => take(environmentEntries(), process.cwd(), 0, record);
  return { named, read, environment };
}

/**
 * The keys whose value is data — never a program git runs nor a file it reads (F15-1: every other key is read for
 * what it names), a regular expression over git's `section.subsection.key`, section and key in lower case:
 * - `user`/`author`/`committer` `.name`, `.email`: an identity;
 * - `remote.*.url`, `pushurl` (but an `ext::` URL: a command; `remoteValue`), `fetch`, `push` (refspecs), `mirror`,
 *   `tagOpt`, `prune`, `pruneTags`, `skipDefaultUpdate`, `skipFetchAll`, `promisor`, `partialCloneFilter`: where git
 *   fetches and what; `url.*.insteadOf`, `pushInsteadOf`: a URL prefix;
 * - `branch.*`: branch tracking (a remote's name, a ref, a rebase mode, a description — branch has no command key);
 * - `submodule.*.url`, `branch`, `active`, `shallow`, `fetchRecurseSubmodules`, `ignore` (not `update`: `!command`);
 * - `safe.directory`: a folder git trusts (read from protected configuration only, never run);
 * - `color.*`, `column.*`, `advice.*`, `i18n.*`: display;
 * - `init.defaultBranch`, `extensions.*`: a branch name, repository format.
 * Any key whose value is a boolean or a number (`true`, `no`, `0`, `512m`: most of `core`) or empty is data too.
 */
const dataKeys = new RegExp(`^(${[
  "(user|author|committer)\\.(name|email)",
  "remote\\..*\\.(url|pushurl|fetch|push|mirror|tagopt|prune|prunetags|skipdefaultupdate|skipfetchall|promisor|partialclonefilter)",
  "url\\..*\\.(insteadof|pushinsteadof)", "branch\\..*",
  "submodule\\..*\\.(url|branch|active|shallow|fetchrecursesubmodules|ignore)", "safe\\.directory",
  "color\\..*", "column\\..*", "advice\\..*", "i18n\\..*", "init\\.defaultbranch", "extensions\\..*",
].join("|")})$`, "s");

/** Whether the key `key` with `value` is data (`dataKeys`): an `ext::` or `fd::` URL (a transport that runs a command) is not. */
function isData(key: string, value: string): boolean {
  if (value.trim() === "" || /^(true|false|yes|no|on|off|-?\d+[kmg]?)$/i.test(value.trim())) return true;
  if (/(^|\s|")(ext|fd)::/i.test(value) || /\.(ext|fd)::/i.test(key)) return false;
  return dataKeys.test(key);
}

/**
 * The keys the guard read before round 15 (F14-3, F14-5), whose words with a `/` may name a folder as well as a file
 * (`init.templateDir`'s hooks, a folder a command reads): for every other key, and every word without a `/`, only
 * files count — a word naming a folder (`alias.s = status src`) must not make a project folder read-only.
 */
const folderKeys = new RegExp(`^(${[
  "core\\.(fsmonitor|pager|editor|sshcommand|askpass|excludesfile|attributesfile)", "sequence\\.editor", "init\\.templatedir",
  "pager\\..*", "interactive\\.difffilter", "credential\\.(.*\\.)?helper", "gpg\\.(.*\\.)?program", "diff\\.external",
  "diff\\..*\\.(textconv|command)", "filter\\..*\\.(clean|smudge|process)", "merge\\..*\\.driver", "alias\\..*",
].join("|")})$`, "s");

/**
 * The paths a configuration value may name (`valueWords`: the whole value, its shell words and pieces, `~` and
 * variables expanded): absolute words as they are, relative ones — with a `/` or without (F15-2: `sh nb2clean.sh`,
 * git runs it at the work tree's top) — in the work tree `tree`, none without a tree; URLs left out. A path that is a
 * folder only for `folderKeys` words with a `/` (and `init.templateDir`'s whole value). Real paths where they exist;
 * missing ones as they are (one made during the run is moved aside after it).
 */
function namedPaths(key: string, value: string, tree: string | null): string[] {
  const out: string[] = [];
  const folders = folderKeys.test(key);
  for (const word of valueWords(value, process.env)) {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(word)) continue;
    const path = isAbsolute(word) ? word : tree !== null ? resolve(tree, word) : null;
    if (path === null) continue;
    if (!(folders && (word.includes("/") || key === "init.templatedir")) && isFolder(path)) continue;
    out.push(realPathOr(path, path));
  }
  return out;
}
