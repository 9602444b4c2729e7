/**
 * Issue 26 hostile round 19, F19-6: a claude run left N empty files at `~/.claude`'s top; the check after the run
 * (state-planted.ts `plantedState`) listed, checked and moved them all on the hub's thread (7 M: /v1/health
 * unanswered 352 s), and every later launch's guard read the box they went into whole (9.4 M entries, 24 s). Now the
 * check reads and moves a page at a time, yielding between pages, and the launch's walks stop at their limits.
 * Unit level: the functions called directly on real files in a temporary folder (as agent-sandbox-r17.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs, { closeSync, mkdirSync, openSync, readdirSync, writeFileSync, type Dir } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { ownerHome, ownerRepo } from "./steering-helpers.js";
import { executableParts, GuardLimitError, guardLimits, guardLimitText } from "../src/worker/steering.js";
import { plantedNotice } from "../src/worker/planted.js";
import { plantedRunNotice, plantedState, stateLimits, StateLimitError, stateLimitText, stateListedMax, statePageEntries, stateSeenAt } from "../src/worker/state-planted.js";
import { stateView } from "../src/worker/state-steering.js";

/** `n` empty files `<prefix><i>` in `dir`. */
function emptyFiles(dir: string, prefix: string, n: number): void {
  for (let i = 0; i < n; i++) closeSync(openSync(join(dir, `${prefix}${String(i).padStart(6, "0")}`), "w"));
}

/** Runs `f` with every folder entry read through `opendirSync` counted (by `readSync`, `read` not used here); the count. */
function countingReads<T>(f: () => T): { value: T; read: number } {
  const open = fs.opendirSync;
  let read = 0;
  fs.opendirSync = ((path: fs.PathLike, options?: fs.OpenDirOptions) => {
    const dir = open(path, options);
    const readSync = dir.readSync.bind(dir);
    dir.readSync = (() => {
      const e = readSync();
      if (e !== null) read++;
      return e;
    }) as Dir["readSync"];
    return dir;
  }) as typeof fs.opendirSync;
  syncBuiltinESMExports();
  try {
    return { value: f(), read };
  } finally {
    fs.opendirSync = open;
    syncBuiltinESMExports();
  }
}

/** What `f` throws (null when it returns). */
function thrown(f: () => unknown): unknown {
  try {
    f();
    return null;
  } catch (e) {
    return e;
  }
}

/** Counts the turns of the event loop (a `setImmediate` again and again) until `stop` is called; the count. */
function loopTurns(): { count: () => number; stop: () => void } {
  let turns = 0;
  let running = true;
  const spin = () => {
    turns++;
    if (running) setImmediate(spin);
  };
  setImmediate(spin);
  return { count: () => turns, stop: () => (running = false) };
}

test("issue 26 r19 F19-6 (reported case: 200,000 new files at ~/.claude's top): the check after the run moves every one into one box while the event loop keeps running, a page at a time; the card says how many", async () => {
  const home = ownerHome("aa-r19-state-home-");
  const s = join(home, ".claude");
  mkdirSync(s);
  writeFileSync(join(s, "settings.json"), "{}\n");
  const n = 200_000;
  const before = stateSeenAt([{ folder: s, writes: ["todos"], bound: true }], []);
  emptyFiles(s, "r19top", n);
  const turns = loopTurns();
  let intervals = 0;
  const timer = setInterval(() => intervals++, 1);
  const found = await plantedState(before, 19);
  turns.stop();
  clearInterval(timer);
  // Beside the check: its yields let the hub answer (before: neither ran until all 200,000 were moved).
  assert.ok(turns.count() >= n / statePageEntries, `${turns.count()} turns`);
  assert.ok(intervals > 0);
  const tops = readdirSync(s).sort();
  assert.equal(tops.length, 2);
  assert.match(tops[0]!, /^planted-run-19-[0-9a-f]{16}$/);
  assert.equal(tops[1], "settings.json");
  const box = join(s, tops[0]!);
  assert.equal(readdirSync(box).length, n);
  // The first `stateListedMax` listed (each into the box), the rest counted.
  assert.equal(found.planted.length, stateListedMax);
  assert.equal(found.more, n - stateListedMax);
  for (const p of found.planted) assert.deepEqual(p, { path: p.path, movedTo: join(box, p.path.slice(s.length + 1)), kind: "moved" });
  // The card as before: whole lines while they fit, then how many more of all 200,000.
  const notice = plantedRunNotice([], found.planted, "en", found.more)!;
  const shown = notice.text!.split("\n");
  assert.equal(shown.at(-1), `… and ${n - (shown.length - 1)} more, handled the same way`);
  assert.equal(shown[0], `${found.planted[0]!.path} → moved to ${found.planted[0]!.movedTo} (move it back once you have read it)`);
  assert.equal(notice.title, "The agent wrote files your agent CLI would run or read into its prompt");
  // All listed, all fitting: the count of the rest still said.
  assert.deepEqual(plantedNotice(found.planted.slice(0, 1), "en", 5)!.text!.split("\n"), [shown[0], "… and 5 more, handled the same way"]);
  // The next run's check: the box was there at launch, nothing new.
  const again = stateSeenAt([{ folder: s, writes: ["todos"], bound: true }], []);
  assert.deepEqual(await plantedState(again, 20), { planted: [], more: 0 });
});

test("issue 26 r19 F19-6: what the check makes at the top itself — the box, an entry moved beside itself — is never taken for the run's; one new entry alone is moved beside itself", async () => {
  const home = ownerHome("aa-r19-state-one-");
  const s = join(home, ".claude");
  mkdirSync(s);
  const before = stateSeenAt([{ folder: s, writes: ["todos"], bound: true }], []);
  writeFileSync(join(s, "daemon.json"), "{}\n");
  mkdirSync(join(s, "todos"));
  const found = await plantedState(before, 21);
  assert.deepEqual(found.planted.map((p) => [p.path, p.kind]), [[join(s, "daemon.json"), "moved"]]);
  assert.equal(found.more, 0);
  assert.deepEqual(readdirSync(s).map((x) => x.replace(/-[0-9a-f]{16}$/, "-X")).sort(), ["daemon.json.planted-run-21-X", "todos"]);
});

test("issue 26 r19 F19-6 (reported case: a launch read the 9.4 M entries of a box in ~/.claude): the walk for repositories in a folder an agent writes stops at `guardLimits.entries` entries and refuses the launch, naming the folder it was reading; nothing past the limit is read", () => {
  const home = ownerHome("aa-r19-walk-");
  const s = join(home, ".claude");
  const box = join(s, "planted-run-16-0123456789abcdef");
  mkdirSync(box, { recursive: true });
  emptyFiles(box, "f", 200);
  const limits = { ...guardLimits, entries: 50 };
  const { value: error, read } = countingReads(() => thrown(() => executableParts(s, false, false, limits)));
  assert.ok(error instanceof GuardLimitError);
  assert.deepEqual([error.kind, error.folder, error.limit], ["entries", box, 50]);
  // The top's one entry and 50 of the box's: the limit + 1, not its 200.
  assert.equal(read, 51);
  assert.equal(guardLimitText("en", error), `the sandbox stopped at 50 entries (reading ${box}) while it looked through the folders the agent writes for repositories to guard their .git (what your git would run): too many to read before a launch, so the launch is refused; move what fills ${box} elsewhere (a planted-run-… folder holds what the check after a run moved aside: read it, then remove it)`);
  assert.match(guardLimitText("zh", error), /^沙箱在 Agent 可写的文件夹里找仓库时读到 50 个条目就停了/);
  // Within the limit the walk goes on as before.
  assert.deepEqual(executableParts(s, false, false, { ...guardLimits, entries: 201 }).seen.repositories, []);
});

test("issue 26 r19 F19-6: a git folder's worktrees/ (and modules/**) in a folder an agent writes is read up to the same limit of entries, and refuses the launch past it, naming the folder", () => {
  const repo = ownerRepo();
  const worktrees = join(repo, ".git", "worktrees");
  mkdirSync(worktrees);
  emptyFiles(worktrees, "w", 200);
  const { value: error, read } = countingReads(() => thrown(() => executableParts(repo, false, false, { ...guardLimits, entries: 50 })));
  assert.ok(error instanceof GuardLimitError);
  assert.deepEqual([error.kind, error.folder, error.limit], ["entries", worktrees, 50]);
  // The work tree's two entries (README.md, .git: the walk for repositories), then 51 of worktrees/.
  assert.equal(read, 53);
  assert.deepEqual(executableParts(repo, false, false, { ...guardLimits, entries: 200 }).seen.worktreeFolders, []);
});

test("issue 26 r19 F19-6: a state folder whose top holds more than `stateLimits.top` entries refuses the launch, naming it, once that many are read; the view of its steering parts reads no more either", () => {
  const home = ownerHome("aa-r19-top-");
  const s = join(home, ".claude");
  mkdirSync(s);
  emptyFiles(s, "t", 120);
  const limits = { ...stateLimits, top: 40 };
  const { value: error, read } = countingReads(() => thrown(() => stateSeenAt([{ folder: s, writes: ["todos"], bound: true }], [], limits)));
  assert.ok(error instanceof StateLimitError);
  assert.deepEqual([error.kind, error.folder, error.limit], ["top", s, 40]);
  assert.equal(read, 41);
  assert.equal(stateLimitText("en", error), `the CLI's state folder ${s} holds more than 40 entries at its top: the sandbox reads each to keep what steers the CLI read-only and to find what a run adds there, too many to read before a launch, so the launch is refused; move what fills it elsewhere (a planted-run-… folder holds what the check after a run moved aside)`);
  assert.match(stateLimitText("zh", error), /^CLI 的状态文件夹 .* 顶层的条目超过 40 个/);
  const view = countingReads(() => stateView([], [s], {}, ["todos"], [], 40));
  assert.equal(view.read, 41);
  assert.equal(view.value.readOnly.length, 41);
  // At the limit: seen, not refused.
  assert.equal(stateSeenAt([{ folder: s, writes: ["todos"], bound: true }], [], { ...stateLimits, top: 120 }).ids.length, 120);
});

test("issue 26 r19 F19-6: the memory folders' `*` (Claude Code's projects/) is read a page at a time after the run too, yielding between pages; a new memory folder and a new link there are moved aside once each", async () => {
  const home = ownerHome("aa-r19-projects-");
  const s = join(home, ".claude");
  const elsewhere = join(home, "elsewhere");
  mkdirSync(join(s, "projects"), { recursive: true });
  mkdirSync(join(elsewhere, "memory"), { recursive: true });
  const before = stateSeenAt([{ folder: s, writes: ["projects/"], bound: true }], ["projects/*/memory/"]);
  const n = 3_000;
  for (let i = 0; i < n; i++) mkdirSync(join(s, "projects", `-p${String(i).padStart(5, "0")}`));
  mkdirSync(join(s, "projects", "-p00007", "memory"));
  writeFileSync(join(s, "projects", "-p00007", "memory", "MEMORY.md"), "standing orders\n");
  fs.symlinkSync(elsewhere, join(s, "projects", "-l"));
  const turns = loopTurns();
  const found = await plantedState(before, 23);
  turns.stop();
  assert.ok(turns.count() >= Math.floor(n / statePageEntries), `${turns.count()} turns`);
  assert.deepEqual(found.planted.map((p) => [p.path, p.kind]).sort(), [[join(s, "projects", "-l"), "moved"], [join(s, "projects", "-p00007", "memory"), "moved"]]);
  assert.equal(found.more, 0);
  assert.equal(readdirSync(join(s, "projects")).filter((x) => x.includes(".planted-run-23-")).length, 1);
});
