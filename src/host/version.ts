/**
 * Which release this checkout is: the git tag on its commit (`git describe --tags --exact-match HEAD`), or none, and the
 * short commit. `agent-autoloop --version` prints both; `GET /v1/health` answers the tag, or `unreleased`.
 * Reading them starts two `git` processes (~0.1 s), so nothing asks for them before it needs them.
 */
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { engineDir } from "./home.js";

/** The release of this checkout; null where it is not a git checkout or the commit has no tag. */
export interface Release { tag: string | null; commit: string | null }

/** The `version` of `GET /v1/health` for a commit without a release tag (protocol data: the same in every language). */
export const unreleased = "unreleased";

const commitArgs = ["-C", engineDir, "rev-parse", "--short", "HEAD"];
const tagArgs = ["-C", engineDir, "describe", "--tags", "--exact-match", "HEAD"];

/** Runs `git` and returns its trimmed output, or null when it fails (no git, not a checkout, no tag). */
function gitSync(args: string[]): string | null {
  try {
    return execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() || null;
  } catch {
    return null;
  }
}

const execFileAsync = promisify(execFile);

async function gitAsync(args: string[]): Promise<string | null> {
  try {
    return (await execFileAsync("git", args, { encoding: "utf8" })).stdout.trim() || null;
  } catch {
    return null;
  }
}

/** The release, read now (the CLI's `--version`). */
export function releaseSync(): Release {
  return { commit: gitSync(commitArgs), tag: gitSync(tagArgs) };
}

let tagOnce: Promise<string> | null = null;

/** The release tag or `unreleased`, read once per process without blocking it (the hub's `GET /v1/health`). */
export function releaseTag(): Promise<string> {
  tagOnce ??= gitAsync(tagArgs).then((tag) => tag ?? unreleased);
  return tagOnce;
}
