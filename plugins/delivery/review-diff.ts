/**
 * What a delivery round reviews (protocol.md 交付插件, 审查): a text diff made from bare git objects — nothing is
 * checked out, nothing of the branch runs (no hooks, filters, attributes or settings of it; git's own config of the
 * machine is not read either) — of the branch's own commits only:
 *
 * - a commit with one parent (or none): its change against its parent;
 * - a merge of two parents: only what differs from git's own merge of them. A clean merge of main is left out whole;
 *   a conflict resolution (or any change made inside a merge) is kept, as the difference from what git would have
 *   written, conflict markers included;
 * - a merge of three or more parents (an octopus): the review cannot see what it brings, so it is not diffed but
 *   reported as a finding asking for ordinary merges.
 *
 * Commits are those of `main..head`, oldest first.
 */
import { execFileSync } from "node:child_process";

/** The most commits of a branch looked at; the rest are not diffed and the diff says it is cut. */
export const reviewCommitsMax = 500;
/** The largest diff text given to the reviewer, in bytes; a larger one is cut and says so. */
export const reviewDiffBytesMax = 1_000_000;

/** A problem found without the model: an octopus merge. */
export interface Finding { kind: "octopus"; commit: string; parents: number }

/** The review's input. */
export interface ReviewDiff {
  /** The diff text, one section per commit or merge that has something to review. */
  text: string;
  /** The commits whose changes are in `text`, oldest first (merges with a resolution too). */
  reviewed: string[];
  /**
   * The change of each section of `text`, as two tree-ish names for git: a commit's parent (the empty tree for a root)
   * and the commit; git's own merge (a tree) and the merge commit. The round asks of these whether only internal docs
   * changed (project.ts `docsOnlyChange`).
   */
  changes: { from: string; to: string }[];
  /** Merges left out because git's own merge gives exactly their tree. */
  cleanMerges: string[];
  findings: Finding[];
  /** Whether `text` or the commits were cut at a limit. */
  cut: boolean;
}

const gitEnv = () => ({ ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_ATTR_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0" });

/** Runs git in the bare repository `dir`; stdout, also of an exit 1 when `okOne` (merge-tree's "conflicts"). */
function git(dir: string, args: string[], okOne = false): string {
  try {
    return execFileSync("git", ["-C", dir, "-c", "core.attributesFile=/dev/null", ...args], { encoding: "utf8", env: gitEnv(), maxBuffer: reviewDiffBytesMax * 4, stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    const err = e as { status?: number; stdout?: string };
    if (okOne && err.status === 1 && typeof err.stdout === "string") return err.stdout;
    throw e;
  }
}

/** git's empty tree: what a root commit changes from. */
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

const diffArgs = ["diff-tree", "-p", "-M", "--no-color", "--no-ext-diff", "--no-textconv", "--full-index"];

/**
 * The review diff of `head` against `main` (both 40-hex SHAs whose objects are in the bare repository `dir`).
 * @throws Error when a SHA is malformed or git cannot read the objects.
 */
export function reviewDiff(dir: string, main: string, head: string): ReviewDiff {
  for (const sha of [main, head]) if (!/^[0-9a-f]{40}$/.test(sha)) throw new Error(`not a commit SHA: ${JSON.stringify(sha.slice(0, 80))}`);
  const lines = git(dir, ["rev-list", "--topo-order", "--reverse", "--parents", `${main}..${head}`]).split("\n").filter(Boolean);
  const out: ReviewDiff = { text: "", reviewed: [], changes: [], cleanMerges: [], findings: [], cut: lines.length > reviewCommitsMax };
  const sections: string[] = [];
  let size = 0;
  for (const line of lines.slice(0, reviewCommitsMax)) {
    const [commit, ...parents] = line.split(" ") as [string, ...string[]];
    let section: string;
    let change: { from: string; to: string };
    if (parents.length >= 3) {
      out.findings.push({ kind: "octopus", commit, parents: parents.length });
      continue;
    }
    if (parents.length === 2) {
      const auto = git(dir, ["merge-tree", "--write-tree", "--no-messages", parents[0]!, parents[1]!], true).split("\n")[0]!;
      const patch = git(dir, [...diffArgs, auto, `${commit}^{tree}`]);
      if (patch === "") {
        out.cleanMerges.push(commit);
        continue;
      }
      section = `### merge ${commit}: what differs from git's own merge of ${parents[0]} and ${parents[1]}\n${patch}`;
      change = { from: auto, to: commit };
    } else {
      section = `### commit ${commit}\n${git(dir, [...diffArgs, "--root", commit]).replace(/^[0-9a-f]{40}\n/, "")}`;
      change = { from: parents[0] ?? emptyTree, to: commit };
    }
    size += Buffer.byteLength(section);
    if (size > reviewDiffBytesMax) {
      out.cut = true;
      break;
    }
    sections.push(section);
    out.reviewed.push(commit);
    out.changes.push(change);
  }
  out.text = sections.join("\n");
  return out;
}
