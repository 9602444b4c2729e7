/**
 * Where the symbolic links in a folder an agent wrote lead, as the check after a run sees them (issue 26 round 34,
 * F34a-1). The guard's walk does not enter git folders or `node_modules`, nor follow links; a link makes such a place
 * a folder of the project to the owner: the tester's agent made a repository with a `core.fsmonitor` in the project's
 * own `.git/lib2` and linked `lib2 -> .git/lib2` at the top, and the owner's `git status` in `lib2` ran it. So a link
 * is judged by what lies behind it, whoever made it and whatever its path says: what git's discovery finds from its
 * target, and the editors' and CLIs' parts there.
 */
import { realpathSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { present, within } from "../common/file-checks.js";
import { entryId } from "./git-read.js";
import { guardLimits, notWalked, walkOf, type GuardLimits, type Walked } from "./guard-walk.js";
import { steeringNames, type Seen } from "./steering.js";

/**
 * Whether the real path `real` lies where the check's walk of `folders` looks itself: inside one of them that is no
 * shared temporary root (`shared`: those are not walked), and below it in no `.git` or `node_modules` folder.
 */
export function walkedArea(real: string, folders: readonly string[], shared: readonly string[]): boolean {
  return folders.some((f) => !shared.includes(f) && within(real, f) && !relative(f, real).split(sep).some((s) => s === ".git" || s === notWalked));
}

/**
 * Whether the link `link` leads to a folder the run could write (inside one of `folders`) that the walk did not look
 * at (`walkedArea`), where the owner's tools would find what the launch did not see: git's discovery from there (the
 * nearest folder up holding a `.git`, or a `HEAD` — a git folder) reaching a repository not among `seen`'s, or an
 * editor's or CLI's project part (`.claude`, `.vscode`, `.mcp.json`…) there — at the target or below it, through links
 * there too (`depth` links deep so far). The owner's own links count too: what lies behind them is what the agent may
 * have changed. A link to a file, a dangling one or a loop: false. `judged`: the answers so far by real target, kept
 * over one check (the round-35 review, L-P: 99,000 links to one folder cost 43 s, each target walked again). Never throws.
 */
export function plantedBehindLink(link: string, folders: readonly string[], shared: readonly string[], seen: Seen, judged: LinkJudgements = newJudgements(), depth = 0): boolean {
  let real: string;
  try {
    real = realpathSync.native(link);
    if (!statSync(real).isDirectory()) return false;
  } catch {
    return false;
  }
  // An answer from as few links deep or fewer holds (links below it were followed at least as deep).
  const before = judged.answers.get(real);
  if (before === "pending") {
    // A loop back to a target still being judged: harmless from here, but what is judged meanwhile is not final.
    judged.pendingHits += 1;
    return false;
  }
  if (before !== undefined && (before.found || before.depth <= depth)) return before.found;
  judged.answers.set(real, "pending");
  const hits = judged.pendingHits;
  const found = behind(real, folders, shared, seen, judged, depth);
  // A "no" that leaned on a loop's provisional answer is not kept (the round-37 review, L-P1: it stood for a target
  // whose other links led to a planted `.claude`); a "yes" always is.
  if (found || judged.pendingHits === hits) judged.answers.set(real, { found, depth });
  else judged.answers.delete(real);
  return found;
}

/**
 * `plantedBehindLink`'s answers so far in one check, by a link's real target: found, and how many links deep it was
 * judged, or "pending" while it is; `pendingHits`, how often a pending one was met (a loop).
 */
export interface LinkJudgements {
  answers: Map<string, { found: boolean; depth: number } | "pending">;
  pendingHits: number;
}

/** No answers yet. */
export function newJudgements(): LinkJudgements {
  return { answers: new Map(), pendingHits: 0 };
}

/** `plantedBehindLink` for the link's real target `real`, a folder. */
function behind(real: string, folders: readonly string[], shared: readonly string[], seen: Seen, judged: LinkJudgements, depth: number): boolean {
  if (!folders.some((f) => within(real, f)) || walkedArea(real, folders, shared)) return false;
  const known = (tree: string) => seen.repositories.includes(tree) || seen.enclosing.includes(tree);
  const knownHead = (d: string) => seen.gitFolders.includes(d) || seen.heads.includes(entryId(d) ?? "\u0000");
  for (let d = real; ; d = dirname(d)) {
    if (present(join(d, ".git"))) {
      if (!known(d)) return true;
      break;
    }
    if (present(join(d, "HEAD"))) {
      if (!knownHead(d)) return true;
      break;
    }
    if (dirname(d) === d) break;
  }
  // Below the target too, as the owner reaches it through the link (the round-35 review: a repository in
  // `node_modules/.cache/x/inner` behind `lib -> node_modules/.cache/x`, and a second link in there): walked within
  // `behindLinkLimits`. A target larger than that (a workspace's whole `node_modules`) is judged by the look up from it
  // alone: moving every such link of the owner's after each run would break the project (SECURITY.md names this).
  let walk: Walked;
  try {
    walk = walkOf(real, behindLinkLimits, steeringNames, true);
  } catch {
    return false;
  }
  if (walk.trees.some((t) => t !== real && !known(t)) || walk.steered.length > 0 || walk.unreadable.length > 0 || walk.fifos.length > 0) return true;
  if (walk.heads.some((d) => !knownHead(d))) return true;
  return depth < behindLinkDepthMax && walk.links.some((l) => plantedBehindLink(l, folders, shared, seen, judged, depth + 1));
}

/** How much of a link's target the check walks (folders, entries), and how many links deep it follows links there. */
export const behindLinkLimits: GuardLimits = { ...guardLimits, folders: 2_000, entries: 20_000 };
const behindLinkDepthMax = 3;
