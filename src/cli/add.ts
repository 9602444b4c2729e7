/**
 * `agent-autoloop add <git url | git repository | folder>` (plugins.md 安装): installs a plugin into `<home>/plugins/<name>`.
 * A git URL or repository is cloned (no hooks, no submodules, no install scripts); a local folder that is not a git
 * repository — a plugin author's first try — is copied without its `.git` folders (its `node_modules` kept). Nothing of the
 * plugin runs. The name (the folder's, or the repository's, in lowercase) must be one a plugin of each kind the folder
 * holds may have (src/plugins/names.ts: a tool plugin's may hold `_`). Afterwards `<home>/node_modules/agent-autoloop`
 * links to this engine, so the plugin's `import … from "agent-autoloop/sdk"` resolves (src/plugins/link.ts).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { classify, codeKinds, isBuiltInPlugin, linkEngine, moduleLookupFolder, pluginKinds, pluginNameFits, type PluginKind } from "../plugins/index.js";
import type { Home } from "../common/paths.js";
import { t, type Lang } from "../i18n/messages.js";
import { CliError } from "./connect.js";
import { copyListing, listFolder } from "./add-copy.js";

export { addFolderBytesMax, addFolderEntriesMax } from "./add-copy.js";

/**
 * Installs the plugin `source` names and says so (the line to print).
 * @param replace install it even when a built-in plugin has that name.
 * @throws CliError naming the problem: a bad name, a plugin of that name already installed, a built-in name without
 *   `replace`, a failed clone, a folder too large or holding something other than files, folders and links.
 *   Nothing is left in the plugins folder then.
 */
export function addPlugin(h: Home, source: string, replace: boolean, lang: Lang, listed?: () => void): string {
  const folder = isLocalFolder(source) && !isGitRepository(source) ? resolve(source) : null;
  const local = folder !== null || existsSync(source);
  // A local path is named by its last folder (so "." works); a URL by the last part after "/", "\" or ":".
  const base = (local ? basename(resolve(source)) : source.replace(/[\\/]+$/, "").split(/[\\/:]/).pop()!).replace(/\.git$/, "");
  const name = base.toLowerCase();
  const badName = (kind: PluginKind) => new CliError(t(lang, kind === "tool" ? (folder ? "add.badToolFolderName" : "add.badToolName") : folder ? "add.badFolderName" : "add.badName", { name }));
  // A name no plugin of any kind may have is refused before anything is fetched.
  if (moduleLookupFolder(name)) throw new CliError(t(lang, "add.moduleLookupName", { name }));
  if (!pluginKinds.some((k) => pluginNameFits(k, name))) throw badName("agent");
  const builtIn = isBuiltInPlugin(name);
  if (builtIn && !replace) throw new CliError(t(lang, "add.builtIn", { name, repo: source }));
  const target = join(h.plugins, name);
  if (existsSync(target)) throw new CliError(t(lang, "add.exists", { name, dir: target }));
  mkdirSync(h.plugins, { recursive: true });
  // Fetched beside its place under a hidden name (no plugin name starts with "." and no scan reads one), checked by what
  // it holds, then renamed into place: whole or not at all.
  const temporary = join(h.plugins, `.add-${name}-${randomBytes(4).toString("hex")}`);
  let kinds: PluginKind[] = [];
  try {
    if (folder) copyFolder(folder, temporary, lang, listed);
    else clone(source, temporary, lang);
    kinds = classify(temporary);
    const wrong = (kinds.length > 0 ? kinds : (["agent"] as const)).find((k) => !pluginNameFits(k, name));
    if (wrong) throw badName(wrong);
    renameSync(temporary, target);
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
  try {
    linkEngine(h.plugins);
  } catch {
    // The plugin is installed; the hub makes the link when it loads the plugin (or says why the SDK is not found).
  }
  // How it is used, by what it holds: a code plugin by its name in rules.json, a tool or declarative one by its tools.
  const code = kinds.length === 0 || kinds.some((k) => (codeKinds as readonly string[]).includes(k));
  if (builtIn || code) return t(lang, builtIn ? "add.replaced" : "add.done", { name, dir: target });
  return t(lang, kinds.includes("tool") ? "add.doneTool" : "add.doneDeclarative", { name, dir: target });
}

/** Whether `path` is an existing folder on this computer. */
function isLocalFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Whether a local folder is a git work tree (`.git`), cloned rather than copied. A folder that only looks like a bare
 * repository (`HEAD`, `objects/`, `refs/`) is copied as the files it shows: cloning it installed what its objects held
 * — a hidden `channel.js` beside a code-free `plugin.json`, a manifest without the `[sandbox]` the visible one had
 * (hostile round 42, F42b-2). A bare repository is added by its URL (`file:///…`).
 */
function isGitRepository(dir: string): boolean {
  return existsSync(join(dir, ".git"));
}

/**
 * Clones a repository into `target`: no hooks, no submodules; "--" keeps a URL that starts with "-" from being an
 * option. `--no-local`: a repository on this computer is read through git's own transport (its objects sent as a pack
 * and written anew), not copied or hard-linked file by file from a folder its writer — often an agent — may be
 * changing meanwhile, and the installed plugin shares no file with it (issue 26 round 10). A URL is not affected.
 */
function clone(repo: string, target: string, lang: Lang): void {
  const args = ["-c", "core.hooksPath=/dev/null", "clone", "--quiet", "--no-local", "--depth", "1", "--no-recurse-submodules", "--", repo, target];
  try {
    execFileSync("git", args, { stdio: ["ignore", "ignore", "pipe"] });
  } catch (e) {
    const stderr = String((e as { stderr?: Buffer }).stderr ?? "").split("\n").filter((l) => l && !l.startsWith("warning:")).join(" ").trim();
    throw new CliError(t(lang, "add.failed", { error: stderr || (e as Error).message }));
  }
}

/**
 * Copies a plugin folder into the new folder `into` (the caller renames it into place): exactly what was listed
 * (src/cli/add-copy.ts). `listed` runs between the listing and the copy (tests change the folder there).
 * @throws CliError when the folder cannot be read or copied, or changed since it was listed (the caller removes what
 *   was made).
 */
function copyFolder(from: string, into: string, lang: Lang, listed?: () => void): void {
  try {
    const listing = listFolder(from, lang);
    listed?.();
    copyListing(listing, into, lang);
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(t(lang, "add.copyFailed", { dir: from, error: (e as Error).message }));
  }
}
