/**
 * The homes this user's hubs have (issue 26 round 10, finding Medium 7): a sandbox hid the home of the hub it runs for
 * and the engine's folders right in the user's home (`~/.agent-autoloop*`), so a second home elsewhere
 * (`AGENT_AUTOLOOP_HOME=/srv/x/home2 agent-autoloop init`: a staging hub, not running) showed its master.key and owner
 * key to every agent. Every `init` and every `serve` start adds its home to `~/.agent-autoloop-homes.json` in each of
 * the user's homes (`$HOME` and the password database's), and both sandboxes hide every home listed there that still
 * exists. The list is in the user's home: read-only to agents, hidden from plugins. Homes made before this record
 * existed are added when their hub next starts or `init` runs on them again.
 */
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { isFolder, ownPrivateFile } from "../common/file-checks.js";
import { isAbsolute, join } from "node:path";
import { writeFileDurable } from "./files.js";

/** The file, in each of the user's homes. */
export const knownHomesFile = ".agent-autoloop-homes.json";
/** How many homes the list keeps (the most recently recorded first; homes that no longer exist are dropped). */
export const knownHomesMax = 200;

/** The homes listed in `userHome`'s file (absolute paths), or none when it is missing or unreadable. */
function listed(userHome: string): string[] {
  try {
    const j = JSON.parse(readFileSync(join(userHome, knownHomesFile), "utf8")) as { homes?: unknown };
    return Array.isArray(j.homes) ? j.homes.filter((h): h is string => typeof h === "string" && isAbsolute(h)).slice(0, knownHomesMax) : [];
  } catch {
    return [];
  }
}

/** Every home the lists in `userHomes` name that is a folder now (as recorded: absolute, not resolved). */
export function knownHomes(userHomes: readonly string[]): string[] {
  return [...new Set(userHomes.flatMap(listed))].filter(isFolder);
}

/**
 * Adds `home` (absolute) to the list in each of `userHomes` that exists, first, dropping homes that are gone. A list
 * that cannot be written is left as it is (a read-only home): the home is then hidden only while its own hub runs.
 */
export function recordKnownHome(home: string, userHomes: readonly string[]): void {
  for (const user of new Set(userHomes)) {
    if (!existsSync(user)) continue;
    // One writer at a time: two hubs starting together each read the list and wrote it back with only their own home
    // added, so one home was lost and not hidden from the other's sandboxes (seen in a full test run).
    const unlock = listLock(join(user, `${knownHomesFile}.lock`));
    try {
      const was = listed(user);
      const homes = [...new Set([home, ...was])].filter(isFolder).slice(0, knownHomesMax);
      // The same list again (every start after the first): not written, so a start makes no sync here (issue 32).
      if (homes.length === was.length && homes.every((p, i) => p === was[i]) && ownPrivateFile(join(user, knownHomesFile))) continue;
      writeFileDurable(join(user, knownHomesFile), JSON.stringify({ homes }, null, 1) + "\n", 0o600);
    } catch {
      // not writable here
    } finally {
      unlock();
    }
  }
}

/** How long `listLock` waits for another writer (ms), and the age past which a lock is taken for a dead writer's. */
const listLockWaitMs = 5_000;

/**
 * Takes the lock file `path` (made with O_EXCL), waiting for another holder up to `listLockWaitMs` and breaking a lock
 * older than that (its writer died); never throws — without a lock (a read-only home) the write goes ahead alone.
 * @returns what lets it go.
 */
function listLock(path: string): () => void {
  const until = Date.now() + listLockWaitMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      closeSync(openSync(path, "wx", 0o600));
      return () => rmSync(path, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") return () => {};
      try {
        if (Date.now() - statSync(path).mtimeMs > listLockWaitMs) rmSync(path, { force: true });
      } catch {
        // let go meanwhile
      }
      if (Date.now() > until) return () => {};
      Atomics.wait(pause, 0, 0, 10);
    }
  }
}
