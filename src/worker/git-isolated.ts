/**
 * Running git on a repository an agent could have written without any of its configuration (issue 26 round 23,
 * F23-1): the worker reads indexes (git-read.ts `gitlinks`, index-stat.ts) outside every sandbox, and a repository's
 * `config` can make git start programs in more ways than a list of `-c` overrides can name — a promisor remote's lazy
 * fetch ran `remote.origin.uploadpack` as the hub's user; `core.sshCommand`, `ext::` URLs, credential helpers,
 * `core.askPass` and filters would do the same. So git never sees that file: it runs with a private git folder of the
 * worker's own whose `config` holds only the repository's format (its version and object format, which git needs to
 * read the index), the repository's index (`GIT_INDEX_FILE`) and objects (`GIT_OBJECT_DIRECTORY`), no system or
 * global configuration, no lazy fetch and no transport at all.
 *
 * What the private folder keeps of the repository beyond that: its `info/attributes` (data for `check-attr`, read by
 * the owner's git too; at most `attributesBytesMax`) and links to a split index's `sharedindex.*` (without them git
 * cannot read such an index, and a check that could not read it would look at nothing).
 */
import { execFileSync } from "node:child_process";
import { closeSync, fstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { entriesUpTo } from "../common/file-checks.js";
import { createNewFile, openRegular } from "./files.js";

/**
 * Where the worker of the home `homeDir` makes git's private folders: inside the home, which every sandbox hides (an
 * empty tmpfs over it) whatever the agent's folders are. The default, for a caller that knows no home, is a folder
 * of this engine in the user's home (`.agent-autoloop-git`), which sandboxes hide with the engine's other folders.
 */
export function gitPrivateDir(homeDir?: string): string {
  return homeDir === undefined ? join(homedir(), ".agent-autoloop-git") : join(homeDir, "worker", "git");
}

/** The most of a repository's `info/attributes` the private folder takes (bytes); a larger one is left out. */
export const attributesBytesMax = 1024 * 1024;

/** How long reading the repository's object format may take (ms): one `git config --file` of one file. */
const formatReadMs = 5_000;

/** The object format of the repository whose common git folder is `commonDir`: "sha256", or "sha1" when none is named. */
function objectFormat(commonDir: string, env: Record<string, string>, cwd: string): string {
  try {
    // `--file` reads that one file as data, without its includes; git runs nothing a configuration names for it.
    const out = execFileSync("git", ["config", "--file", join(commonDir, "config"), "--no-includes", "--get", "extensions.objectformat"], {
      cwd, env, stdio: ["ignore", "pipe", "ignore"], timeout: formatReadMs, maxBuffer: 4096,
    }).toString("utf8").trim().toLowerCase();
    return out === "sha256" ? "sha256" : "sha1";
  } catch {
    return "sha1"; // none named (git exits 1), or a file git cannot read: the owner's git could not read it either
  }
}

/** The bytes of the regular file `path` when it holds at most `max`; null when it does not, is no regular file or is missing. */
function bytesUpTo(path: string, max: number): Buffer | null {
  let fd: number;
  try {
    fd = openRegular(path);
  } catch {
    return null;
  }
  try {
    return fstatSync(fd).size <= max ? readFileSync(fd) : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Runs `read` with the environment of a git that reads the repository of git folder `gitDir` (common folder
 * `commonDir`, work tree `tree`) without its configuration (see the module), in a private folder removed after.
 * @param namesMax how many entries of each git folder are looked through for a split index's files (the callers have
 *   refused a fuller folder: git-read.ts `gitFolderTopMax`)
 * @param privateDir where the private folder is made: a folder no sandbox shows (`gitPrivateDir`; round 25, F25a-3:
 *   made in the shared /tmp, an agent whose cwd was /tmp wrote a `core.fsmonitor` into its config before git ran)
 * @returns what `read` returns.
 * @throws what `read` throws (the private folder is removed first).
 */
export function withIsolatedGit<T>(gitDir: string, commonDir: string, tree: string, namesMax: number, privateDir: string, read: (env: Record<string, string>) => T): T {
  mkdirSync(privateDir, { recursive: true, mode: 0o700 });
  const own = mkdtempSync(join(privateDir, "read-"));
  try {
    // Nothing of the user's either: no system, global or XDG configuration, no terminal prompts.
    const base: Record<string, string> = {
      PATH: process.env.PATH ?? "", HOME: own, XDG_CONFIG_HOME: own, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_TERMINAL_PROMPT: "0",
    };
    const format = objectFormat(commonDir, base, own);
    const dir = join(own, "git");
    mkdirSync(join(dir, "refs"), { recursive: true });
    mkdirSync(join(dir, "info"));
    createNewFile(join(dir, "HEAD"), "ref: refs/heads/main\n");
    createNewFile(join(dir, "config"), format === "sha256"
      ? "[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectformat = sha256\n"
      : "[core]\n\trepositoryformatversion = 0\n\tbare = false\n");
    const attributes = bytesUpTo(join(gitDir, "info", "attributes"), attributesBytesMax);
    if (attributes) createNewFile(join(dir, "info", "attributes"), attributes);
    for (const from of new Set([gitDir, commonDir])) {
      for (const e of entriesUpTo(from, namesMax)) {
        if (!/^sharedindex\.[0-9a-f]{40,64}$/.test(e.name)) continue;
        try {
          symlinkSync(join(from, e.name), join(dir, e.name));
        } catch {
          // one of the same name already linked from the git folder
        }
      }
    }
    return read({
      ...base,
      GIT_DIR: dir, GIT_WORK_TREE: tree, GIT_INDEX_FILE: join(gitDir, "index"), GIT_OBJECT_DIRECTORY: join(commonDir, "objects"),
      // A missing object is missing: no fetch from a promisor remote (git 2.44 and later; older ones find no remote
      // in this configuration), and no protocol is allowed for any transport.
      GIT_NO_LAZY_FETCH: "1", GIT_ALLOW_PROTOCOL: "", GIT_NO_REPLACE_OBJECTS: "1", GIT_OPTIONAL_LOCKS: "0",
    });
  } finally {
    rmSync(own, { recursive: true, force: true });
  }
}
