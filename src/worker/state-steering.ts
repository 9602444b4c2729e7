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
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createNewFile } from "./files.js";
import { isInside, realPath } from "./sandbox.js";
import { present } from "../common/file-checks.js";

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
}

/** File names that are programs whatever their mode (run through their interpreter: `bash hook.sh`, `node x.mjs`). */
const scriptSuffix = /\.(sh|bash|zsh|fish|py|js|mjs|cjs|ts|mts|rb|pl|php|lua|ps1|cmd|bat)$/i;
/** The largest settings file read for the commands it names, in bytes (larger ones are left unread). */
const settingsReadMaxBytes = 1024 * 1024;
/** JSON keys whose string values (or arrays of strings) a CLI runs: hook and status line commands, helpers. */
const commandKeys = /^(command|args|apiKeyHelper|awsAuthRefresh|awsCredentialExport|otelHeadersHelper|notify)$/;
/** TOML lines whose value a CLI runs (Codex's `notify`, an MCP server's `command` and `args`). */
const commandLine = /^\s*(notify|command|args)\s*=\s*(.*)$/gm;

/**
 * The state folders' view (see the module's comment).
 * @param declared the declared parts (absolute; a folder ends in `/`); one missing inside a state folder is made
 *   first — an empty folder (0700), a `.json` file `{}`, any other file empty (0600) — so that no run can create it;
 *   a link is never followed to make its target.
 * @param folders the state folders left writable (real paths)
 * @param vars the agent's environment (`~`, `$HOME`, `$CLAUDE_CONFIG_DIR`, `$CODEX_HOME` in the commands the settings name)
 */
export function stateView(declared: readonly string[], folders: readonly string[], vars: Readonly<Record<string, string>>): StateView {
  const view: StateView = { readOnly: [], skeletons: [], writable: [], links: [], targets: [] };
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
    const names = entries(f);
    const protect = top.get(f)!;
    for (const name of names) if (looksLikeProgram(join(f, name))) protect.add(name);
    // An entry holding a file the settings name as a command.
    for (const n of named) {
      for (const at of new Set([resolve(n), realPath(n)])) {
        if (isInside(at, f) && at !== f) protect.add(at.slice(f.length + 1).split("/")[0]!);
      }
    }
    const linked = [...protect].some((name) => isLink(join(f, name)));
    if (!linked) {
      for (const name of protect) if (existsSync(join(f, name))) view.readOnly.push(join(f, name));
      continue;
    }
    view.skeletons.push(f);
    for (const name of names) {
      const path = join(f, name);
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

/** The last part of `path`. */
function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}


/** Whether `path` is a link. */
function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
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

/** The entries of folder `f` ([] when it cannot be read). */
function entries(f: string): string[] {
  try {
    return readdirSync(f);
  } catch {
    return [];
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
 * The paths a settings file names as commands (absolute, `~` and the variables taken from `vars`): in JSON the
 * string values under `commandKeys` anywhere, in TOML the values of `notify`, `command` and `args` lines; each word
 * that is a path. A file that cannot be read or parsed names none.
 */
export function commandPaths(file: string, vars: Readonly<Record<string, string>>): string[] {
  let text: string;
  try {
    if (statSync(file).size > settingsReadMaxBytes) return [];
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const strings: string[] = [];
  if (file.endsWith(".json")) {
    const walk = (v: unknown, run: boolean) => {
      if (typeof v === "string" && run) strings.push(v);
      else if (Array.isArray(v)) v.forEach((x) => walk(x, run));
      else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, run || commandKeys.test(k));
    };
    try {
      walk(JSON.parse(text), false);
    } catch {
      return [];
    }
  } else {
    for (const m of text.matchAll(commandLine)) for (const q of m[2]!.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)) strings.push(q[1] ?? q[2] ?? "");
  }
  const home = vars.HOME ?? "";
  const expand = (w: string) =>
    w.replace(/^~(?=\/)/, home).replace(/\$\{?(HOME|CLAUDE_CONFIG_DIR|CODEX_HOME)\}?/g, (_, name: string) => vars[name] ?? "");
  return strings.flatMap((s) => s.split(/[\s;|&()<>"'`=]+/)).map(expand).filter((w) => w.startsWith("/"));
}
