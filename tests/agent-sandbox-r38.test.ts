/**
 * Issue 26 hostile round 38 (a): F38a-1 (a sandboxed agent swapped what the guarded `.husky/pre-commit` is in HEAD
 * without changing HEAD, the index or the work tree — a replace ref, loose or packed, and a loose object rewritten
 * under its own name — and the owner's `git stash`, `git worktree add` or local clone wrote the agent's hook) and
 * F38a-2 (a forged commit-graph). The guard and the check after a run called directly, as in agent-sandbox-r36.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { owner, ownerRepo, removed } from "./steering-helpers.js";
import { executableParts } from "../src/worker/steering.js";
import { plantedSteering } from "../src/worker/planted.js";

const guardedOf = (parts: ReturnType<typeof executableParts>) => new Set([...parts.mountPoints, ...parts.readOnlyParents, ...parts.readOnly]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hook = "#!/bin/sh\nsh scripts/lint.sh\n";
const agents = "#!/bin/sh\ncp $AA_MASTER /tmp/leak\n";

/** The owner's husky project (`.husky/pre-commit` committed, `core.hooksPath = .husky`) and the guard's launch there. */
async function launched(before: (repo: string) => void = () => {}): Promise<{ repo: string; sinceMs: number; parts: ReturnType<typeof executableParts>; hookBlob: string }> {
  const repo = ownerRepo();
  mkdirSync(join(repo, ".husky"));
  writeFileSync(join(repo, ".husky", "pre-commit"), hook, { mode: 0o755 });
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "husky");
  owner(repo, {}, "config", "core.hooksPath", ".husky");
  before(repo);
  await sleep(1_100);
  const sinceMs = Date.now();
  return { repo, sinceMs, parts: executableParts(repo, true, false), hookBlob: execGit(repo, ["rev-parse", "HEAD:.husky/pre-commit"]) };
}

test("issue 26 r38 F38a-1 (reported cases: `git replace -f HEAD <commit with the agent's hook>`, the same packed into packed-refs, `git replace -f <hook's blob> <agent's blob>`, and the hook's loose object rewritten under its own name; a commit-graph written during the run): a replace ref the launch did not see and a loose object whose content is not its name are moved aside, a packed replace ref taken out, a commit-graph moved; the owner's git then shows the owner's hook; the agent's own commits and the owner's replace refs from before stay", async () => {
  // The owner's own replace ref, from before the launch.
  let readme = "";
  const { repo, sinceMs, parts, hookBlob } = await launched((r) => {
    readme = owner(r, {}, "rev-parse", "HEAD:README.md").trim();
    execGit(r, ["replace", "-f", readme, execGit(r, ["hash-object", "-w", "--stdin"], "the owner's replacement\n")]);
  });
  // The agent: a blob of its hook, a replace ref of the hook's blob (loose), one packed, a commit of its own.
  const agentBlob = execGit(repo, ["hash-object", "-w", "--stdin"], agents);
  execGit(repo, ["replace", "-f", hookBlob, agentBlob]);
  writeFileSync(join(repo, "work.txt"), "the agent's work\n");
  execGit(repo, ["add", "work.txt"]);
  execGit(repo, ["-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "--no-verify", "-qm", "the agent's commit"]);
  const head = execGit(repo, ["rev-parse", "HEAD"]);
  execGit(repo, ["replace", "-f", head, execGit(repo, ["rev-parse", "HEAD~1"])]);
  execGit(repo, ["pack-refs", "--all"]);
  execGit(repo, ["commit-graph", "write", "--reachable"]);
  // The hook's loose object rewritten under its own name (after the replace refs, which hid it).
  const object = join(repo, ".git", "objects", hookBlob.slice(0, 2), hookBlob.slice(2));
  chmodSync(object, 0o644);
  writeFileSync(object, deflateSync(Buffer.concat([Buffer.from(`blob ${Buffer.byteLength(agents)}\0`), Buffer.from(agents)])));
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 38, { sinceMs });
  const packed = join(repo, ".git", "packed-refs");
  assert.deepEqual(planted.map((p) => [p.path, p.kind]).sort(), [
    [`${packed}: refs/replace/${head}`, "replaceRef"], [`${packed}: refs/replace/${hookBlob}`, "replaceRef"],
    [join(repo, ".git", "objects", "info", "commit-graph"), "moved"], [object, "moved"],
  ].sort());
  const refs = readFileSync(packed, "utf8");
  assert.equal(refs.includes(`refs/replace/${readme}`), true, "the owner's replace ref stays");
  assert.equal(refs.includes(`refs/replace/${hookBlob}`) || refs.includes(`refs/replace/${head}`), false);
  assert.equal(execGit(repo, ["rev-parse", "HEAD"]), head);
  assert.equal(execGit(repo, ["log", "-1", "--format=%s"]), "the agent's commit");
  // The owner's git now fails loudly on the hook's object rather than writing the agent's hook.
  const wt = `${repo}-feat`;
  removed.push(wt);
  const r = spawnGit(repo, ["worktree", "add", "-q", wt, "-b", "feat"]);
  assert.equal(existsSync(join(wt, ".husky", "pre-commit")) && readFileSync(join(wt, ".husky", "pre-commit"), "utf8") === agents, false, r);
});

test("issue 26 r38 F38a-1, a loose replace ref: moved aside, a commit's own objects untouched", async () => {
  const { repo, sinceMs, parts, hookBlob } = await launched();
  const agentBlob = execGit(repo, ["hash-object", "-w", "--stdin"], agents);
  execGit(repo, ["replace", "-f", hookBlob, agentBlob]);
  assert.equal(execGit(repo, ["cat-file", "-p", "HEAD:.husky/pre-commit"]) + "\n", agents);
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 38, { sinceMs });
  assert.deepEqual(planted.map((p) => [p.path, p.kind]), [[join(repo, ".git", "refs", "replace", hookBlob), "replaceRef"]]);
  assert.equal(execGit(repo, ["cat-file", "-p", "HEAD:.husky/pre-commit"]) + "\n", hook);
  rmSync(join(repo, ".husky"), { recursive: true });
});

/** The owner's git in `repo` (no configuration of this machine), its output trimmed; `input` on stdin. */
function execGit(repo: string, args: string[], input?: string): string {
  return execFileSync("git", args, { cwd: repo, encoding: "utf8", input, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent-aa-owner-home", GIT_CONFIG_NOSYSTEM: "1" } }).trim();
}
/** `execGit` that may fail: its status and output, said. */
function spawnGit(repo: string, args: string[]): string {
  const r = spawnSync("git", args, { cwd: repo, encoding: "utf8", timeout: 10_000, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent-aa-owner-home", GIT_CONFIG_NOSYSTEM: "1" } });
  return `rc=${r.status} ${r.stderr}`;
}
