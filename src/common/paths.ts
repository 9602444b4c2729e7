/**
 * Where things are on disk, for every part that runs on this computer (host, worker, CLI): the engine's own folder
 * and the layout of a home directory (`AGENT_AUTOLOOP_HOME`, default `~/.agent-autoloop`; DESIGN.md 接口). Only
 * paths: nothing here reads or writes a home's files.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The files and folders of a home directory (absolute paths). */
export interface Home {
  dir: string;
  rules: string;
  config: string;
  secrets: string;
  masterKey: string;
  database: string;
  plugins: string;
  /** The last good versions of its plugin folders (src/plugins/last-good.ts), kept by every loader of the home. */
  pluginState: string;
  worker: string;
  cards: string;
  /** The owner console's sessions, kept only as hashes (src/host/console-session.ts), so a restart keeps them. */
  consoleSessions: string;
  /** What the hub's starts ran or loaded code from, and their users' homes (src/host/code-folders.ts). */
  codeFolders: string;
  /** The pages `console` opens the browser on, each carrying a sign-in link (0700; src/host/sign-in-page.ts). */
  consoleLinks: string;
}

/** Paths of a home directory; `dir` defaults to AGENT_AUTOLOOP_HOME, else ~/.agent-autoloop. */
export function homePaths(dir = process.env.AGENT_AUTOLOOP_HOME || join(homedir(), ".agent-autoloop")): Home {
  const d = resolve(dir);
  return {
    dir: d,
    rules: join(d, "rules.json"),
    config: join(d, "config.json"),
    secrets: join(d, "secrets.env"),
    masterKey: join(d, "master.key"),
    database: join(d, "hub.db"),
    plugins: join(d, "plugins"),
    pluginState: join(d, "plugin-state"),
    worker: join(d, "worker"),
    cards: join(d, "cards.txt"),
    consoleSessions: join(d, "console-sessions.json"),
    codeFolders: join(d, "code-folders.json"),
    consoleLinks: join(d, "console-links"),
  };
}

/**
 * The engine's own directory (the checkout or install, where package.json is): built-in plugins, compiled scripts
 * the worker starts (`dist/`), examples, and the package installed plugins import the SDK from.
 */
export const engineDir = findEngineDir(dirname(fileURLToPath(import.meta.url)));

function findEngineDir(from: string): string {
  for (let d = from; ; d = dirname(d)) {
    const pkg = join(d, "package.json");
    if (existsSync(pkg) && /"name":\s*"agent-autoloop"/.test(readFileSync(pkg, "utf8"))) return d;
    if (dirname(d) === d) return resolve(from, "../..");
  }
}

/**
 * PATH as the hub and its worker look programs up with it (issue 26 round 53, F53a-1..4): each entry absolute —
 * a relative one resolved against `cwd`, the folder the process started in, as the sandbox's guard takes it (the
 * worker runs `git` with an agent's repository as its folder, where `./bin` or `node_modules/.bin` would be the
 * agent's) —, taken where it leads now (a link an agent may replace later is not followed again), folders that do
 * not exist now dropped (one made later inside an agent's folder would be the agent's), an empty entry (the current
 * folder, wherever a child runs) dropped, duplicates dropped. On Windows, where a program is looked for in the current
 * folder first anyway, `path` is returned as it is. Never throws.
 */
export function fixedPath(path: string, cwd: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === "win32") return path;
  const out: string[] = [];
  for (const entry of path.split(delimiter)) {
    if (!entry) continue;
    try {
      const real = realpathSync.native(resolve(cwd, entry));
      if (statSync(real).isDirectory() && !out.includes(real)) out.push(real);
    } catch {
      // missing or unreadable now: dropped
    }
  }
  return out.join(delimiter);
}
