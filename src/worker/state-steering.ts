/**
 * The parts of an agent CLI's state that steer it (`AgentState.readOnly`), kept read-only in the agent sandbox while
 * the rest of the state folder stays writable (issue 26 round 10, Medium 6; round 11, F4).
 *
 * Round 11, F4: a steering part that is a link (dotfile managers: `~/.claude/settings.json -> ~/dotfiles/…`,
 * home-manager's links into /nix/store) was bound read-only at its target, and the link itself, in the writable
 * folder, was replaced; a status line script that is a link was skipped; a hook script the settings name in a
 * subfolder (`~/.claude/scripts/notify.sh`) was not protected; Codex's `config.toml` link likewise. Every entry at
 * the top of a state folder that steers the CLI is now protected at its own place: the declared parts, every file
 * that looks like a program (a link to one too), and every entry that holds a file the settings name as a command
 * (`statusLine.command`, hook commands, `apiKeyHelper`, Codex's `notify`, MCP servers' `command`). A mount cannot
 * sit on a link, so a state folder where one of them is a link is shown as a skeleton: an empty folder of the
 * sandbox's own, in which each of the host folder's entries is bound at its place — writable, or read-only when
 * protected — and each link is made again (a declared part's target shown read-only, so the CLI reads the owner's
 * settings). What a run makes anew at the top of such a folder stays in the sandbox.
 *
 * Round 12, F12-3: the settings still named scripts this module did not find — Codex's `config.toml` with a
 * multi-line `args = [ … ]`, a dotted key `mcp_servers.x.command = …`, an inline table; a Claude Code hook
 * `bash "$HOME"/.claude/scripts/notify.sh` — and the agent rewrote them for the owner's CLI to run. A plugin now lists
 * what its CLI writes at the top of the state (`AgentState.writes`), and every other entry there is read-only: no gap
 * in reading the settings leaves a script writable. The settings are still read (TOML by the project's TOML reader,
 * every string under `command`, `args`, `notify` at any depth; shell words with their quotes and variables resolved),
 * for a script the owner keeps among what the CLI writes, and an entry they name that is not there yet is made first
 * (an empty folder, or an empty file), so that no run creates the script the settings run.
 */
import { existsSync, lstatSync, mkdirSync, readlinkSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createNewFile, readRegular } from "./files.js";
import { isInside, realPath } from "./sandbox.js";
import { isLink, namesUpTo, present } from "../common/file-checks.js";
import { isDir } from "./git-read.js";
import { readToml } from "../tools/toml.js";

/** How the state folders are shown in the sandbox, beyond binding them writable. */
export interface StateView {
  /** Real paths bound read-only at their place. */
  readOnly: string[];
  /** State folders shown as a skeleton (a folder of the sandbox's own) instead of bound writable. */
  skeletons: string[];
  /** Entries of the skeletons bound writable at their place. */
  writable: string[];
  /** `[link, target]`: links of the skeletons made again. */
  links: [string, string][];
  /** Real paths the declared parts that are links lead to: shown read-only. */
  targets: string[];
  /**
   * Entries of the state folders that are the run's own (`AgentState.private`; round 12, F12-4): an empty tmpfs over
   * each, neither bound nor linked.
   */
  privates: string[];
}

/** File names that are programs whatever their mode (run through their interpreter: `bash hook.sh`, `node x.mjs`). */
const scriptSuffix = /\.(sh|bash|zsh|fish|py|js|mjs|cjs|ts|mts|rb|pl|php|lua|ps1|cmd|bat)$/i;
/** The largest settings file read for the commands it names, in bytes (larger ones are left unread). */
const settingsReadMaxBytes = 1024 * 1024;
/** Keys (JSON, TOML) whose string values (or arrays of strings), at any depth, a CLI runs: hook and status line commands, helpers, MCP servers. */
const commandKeys = /^(command|args|apiKeyHelper|awsAuthRefresh|awsCredentialExport|otelHeadersHelper|notify)$/;
/** How deep a TOML settings file is read (deeper ones name nothing: the CLI refuses them too). */
const tomlDepthMax = 64;

/**
 * The state folders' view (see the module's comment).
 * @param declared the declared parts (absolute; a folder ends in `/`); one missing inside a state folder is made
 *   first — an empty folder (0700), a `.json` file `{}`, any other file empty (0600) — so that no run can create it;
 *   a link is never followed to make its target.
 * @param folders the state folders left writable (real paths)
 * @param vars the agent's environment (`~` and the variables in the commands the settings name)
 * @param writes what the CLI writes at a state folder's top (`AgentState.writes`); when given, every other entry there
 *   is protected too, and in a skeleton the folders among these are made when missing
 * @param own what the CLI writes and runs in the same run (`AgentState.private`): the run's own, in each state folder;
 *   one missing is made first (0700); where one is a link or not a folder, the state folder is a skeleton, so that
 *   the tmpfs lies at its place and not where a link leads
 * @param topMax the most entries read at a state folder's top (F19-6; past it the view is partial: a launch then is
 *   refused, state-planted.ts `stateSeenAt` with `StateLimits.top`)
 */
export function stateView(declared: readonly string[], folders: readonly string[], vars: Readonly<Record<string, string>>, writes?: readonly string[], own: readonly string[] = [], topMax = Number.MAX_SAFE_INTEGER): StateView {
  const view: StateView = { readOnly: [], skeletons: [], writable: [], links: [], targets: [], privates: [] };
  const ownNames = own.map((p) => p.replace(/\/+$/, "")).filter((p) => p && !p.includes("/") && !p.includes("*"));
  const top = new Map<string, Set<string>>(folders.map((f) => [f, new Set<string>()]));
  const declaredTop = new Map<string, Set<string>>(folders.map((f) => [f, new Set<string>()]));
  const named: string[] = [];
  for (const p of declared) {
    const path = p.replace(/\/+$/, "");
    if (!present(path) && folders.some((f) => isInside(realPath(dirname(path)), f))) make(path, p.endsWith("/"));
    if (!present(path)) continue;
    const folder = folders.find((f) => realPath(dirname(path)) === f);
    if (folder) {
      top.get(folder)!.add(basename(path));
      declaredTop.get(folder)!.add(basename(path));
    } else if (existsSync(path)) view.readOnly.push(realPath(path));
    if (/\.(json|toml)$/.test(path)) named.push(...commandPaths(path, vars));
  }
  for (const f of folders) {
    const names = namesUpTo(f, topMax);
    const protect = top.get(f)!;
    for (const name of names) if (!ownNames.includes(name) && (looksLikeProgram(join(f, name)) || (writes && !written(name, writes)))) protect.add(name);
    // An entry holding a file the settings name as a command.
    for (const n of named) {
      for (const at of new Set([resolve(n), realPath(n)])) {
        if (!isInside(at, f) || at === f) continue;
        const rel = at.slice(f.length + 1);
        const name = rel.split("/")[0]!;
        // One not there yet is made first, as a missing declared part is: a new entry at the top would persist, and
        // the CLI would run what a run put there (`[ -x ~/.claude/scripts/x.sh ] && …`).
        if (!present(join(f, name))) make(join(f, name), rel.includes("/"));
        protect.add(name);
      }
    }
    for (const name of ownNames) {
      protect.delete(name);
      view.privates.push(join(f, name));
      if (!present(join(f, name))) make(join(f, name), true);
    }
    const linked = [...protect].some((name) => isLink(join(f, name))) || ownNames.some((name) => !isDir(join(f, name)));
    if (!linked) {
      for (const name of protect) if (existsSync(join(f, name))) view.readOnly.push(join(f, name));
      continue;
    }
    view.skeletons.push(f);
    // What the CLI makes at the top would stay in the sandbox: its folders are made on the host first.
    for (const w of writes ?? []) if (w.endsWith("/") && !w.includes("*")) make(join(f, w.slice(0, -1)), true);
    for (const name of namesUpTo(f, topMax)) {
      const path = join(f, name);
      if (ownNames.includes(name)) continue; // a tmpfs of the run's own at its place
      if (isLink(path)) {
        try {
          view.links.push([path, readlinkSync(path)]);
        } catch {
          continue; // gone meanwhile
        }
        if (declaredTop.get(f)!.has(name) && existsSync(path)) view.targets.push(realPath(path));
      } else (protect.has(name) ? view.readOnly : view.writable).push(path);
    }
  }
  return { ...view, readOnly: [...new Set(view.readOnly)], targets: [...new Set(view.targets)] };
}

/** Whether the entry `name` is among `writes` (`AgentState.writes`: a folder's `/` ignored, `*` any run but `/`). */
export function written(name: string, writes: readonly string[]): boolean {
  return writes.some((w) => {
    const pattern = w.replace(/\/+$/, "");
    if (!pattern.includes("*")) return pattern === name;
    return new RegExp(`^${pattern.split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")}$`).test(name);
  });
}

/** The last part of `path`. */
function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}



/** Makes a missing declared part: a folder (0700), a `.json` file `{}`, another file empty (0600). */
function make(path: string, folder: boolean): void {
  try {
    if (folder) mkdirSync(path, { mode: 0o700 });
    else createNewFile(path, path.endsWith(".json") ? "{}\n" : "");
  } catch {
    // made meanwhile, or cannot be made: protected below if it exists now
  }
}


/**
 * Whether `path` is a program: a file (or a link to one, or a link that leads nowhere) with an executable bit or a
 * script's suffix (its own name's or its target's).
 */
function looksLikeProgram(path: string): boolean {
  try {
    const l = lstatSync(path);
    if (!l.isSymbolicLink()) return l.isFile() && ((l.mode & 0o111) !== 0 || scriptSuffix.test(path));
    if (scriptSuffix.test(path)) return true;
    let st;
    try {
      st = statSync(path);
    } catch {
      return false; // leads nowhere, no script's name
    }
    return st.isFile() && ((st.mode & 0o111) !== 0 || scriptSuffix.test(realPath(path)));
  } catch {
    return false;
  }
}

/**
 * The paths a settings file names as commands (absolute; `~` and the variables taken from `vars`): the string values
 * under `commandKeys` at any depth — JSON, or TOML read by the project's TOML reader (multi-line arrays, dotted keys,
 * inline tables) — each taken as a whole and as shell words (`shellWords`), those that are paths. A file that cannot
 * be read or parsed names none (the CLI refuses it too).
 */
export function commandPaths(file: string, vars: Readonly<Record<string, string>>): string[] {
  let text: string;
  try {
    if (statSync(file).size > settingsReadMaxBytes) return [];
    text = readRegular(file, "en"); // a FIFO in its place is not waited on (F18-5's kind)
  } catch {
    return [];
  }
  let value: unknown;
  if (file.endsWith(".json")) {
    try {
      value = JSON.parse(text);
    } catch {
      return [];
    }
  } else {
    const read = readToml(text, tomlDepthMax, "en");
    if (!read.ok) return [];
    value = read.value;
  }
  const strings: string[] = [];
  const walk = (v: unknown, run: boolean, depth: number) => {
    if (depth > tomlDepthMax) return;
    if (typeof v === "string" && run) strings.push(v);
    else if (Array.isArray(v)) v.forEach((x) => walk(x, run, depth + 1));
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, run || commandKeys.test(k), depth + 1);
  };
  walk(value, false, 0);
  const words = strings.flatMap((s) => [expand(s, vars, true), ...shellWords(s, vars)]);
  return [...new Set(words.flatMap((w) => w.split(/[=:]/)).filter((w) => w.startsWith("/")))];
}

/** `word` with `$NAME` and `${NAME}` replaced from `vars` (unknown ones by ""), and a leading `~/` (when `tilde`) by HOME. */
function expand(word: string, vars: Readonly<Record<string, string>>, tilde: boolean): string {
  const named = word.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (_, a?: string, b?: string) => vars[a ?? b ?? ""] ?? "");
  return tilde ? named.replace(/^~(?=\/|$)/, vars.HOME ?? "~") : named;
}

/**
 * The words of a shell command as the shell would pass them (round 12, F12-3: `bash "$HOME"/.claude/x.sh` is one
 * word `/home/…/.claude/x.sh`): split at blanks and `; | & ( ) < >` and backquotes outside quotes, quotes removed, a
 * backslash keeping the next character, variables expanded outside single quotes, `~` at a word's start unquoted.
 */
export function shellWords(command: string, vars: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  let word = "";
  let started = false;
  let quote: "'" | '"' | null = null;
  let part = "";
  const flushPart = (how: "plain" | "'" | '"') => {
    word += how === "'" ? part : expand(part, vars, how === "plain" && word === "");
    part = "";
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      if (c === quote) {
        flushPart(quote);
        quote = null;
      } else if (c === "\\" && quote === '"' && i + 1 < command.length) part += command[++i];
      else part += c;
    } else if (c === "'" || c === '"') {
      flushPart("plain");
      quote = c;
      started = true;
    } else if (c === "\\" && i + 1 < command.length) {
      part += command[++i];
      started = true;
    } else if (/[\s;|&()<>`]/.test(c)) {
      flushPart("plain");
      if (started || word) out.push(word);
      word = "";
      started = false;
    } else {
      part += c;
      started = true;
    }
  }
  flushPart(quote ?? "plain");
  if (started || word) out.push(word);
  return out;
}
