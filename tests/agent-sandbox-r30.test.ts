/**
 * Issue 26 hostile round 30 (the agent sandbox): F30a-1 (a run that filled its folder past the guard's walk — 101,000
 * folders — had the check after it skip the look for the repositories it planted there, naming only an unrelated
 * check; with a second run removing the flood afterwards, nothing was left to notice and later launches took the
 * planted `core.fsmonitor` repository for the owner's) and F30a-3 (the agent laid a git folder out at the top of the
 * owner's project — `HEAD`, `objects` borrowing the owner's, `refs`, a `config` with `core.pager` — and made the
 * project's own `.git/HEAD` invalid: git then took the project folder itself for the repository, and the owner's
 * `git log` ran the agent's pager). Unit level, as agent-sandbox-r29.test.ts: the guard and the check after a run
 * called directly, the mark and the launch's look at it as the worker calls them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { asideOf, owner, ownerRepo, removed } from "./steering-helpers.js";
import { tempDir, until, untilLatestRun } from "./helpers.js";
import { quarantines, sandboxKit } from "./sandbox-kit.js";
import { probeBwrap } from "./tools-helpers.js";
import { bindGuards, executableParts } from "../src/worker/steering.js";
import { plantedInBinds, uncheckedBind } from "../src/tools/bind-check.js";
import { plantedNotice, plantedSteering } from "../src/worker/planted.js";
import { markUnchecked, uncheckedHolding } from "../src/worker/unchecked.js";
import { latestLaunch, launchRecordBytesMax, launchRecordFile, loadLaunchRecord, sandboxedLaunchBegun, saveLaunchRecord } from "../src/worker/launch-record.js";

const kit = sandboxKit();
const guardedOf = (parts: ReturnType<typeof executableParts>) => new Set([...parts.mountPoints, ...parts.readOnlyParents, ...parts.readOnly]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("issue 26 r30 F30a-1 (reported case: 101,000 folders and a new sub/.git with core.fsmonitor): a check after the run cut by the walk's limit marks the folder, the card names the mark, and launches there are refused until the owner removes it", () => {
  const repo = ownerRepo();
  const workerHome = realpathSync(tempDir("aa-r30-worker-"));
  removed.push(workerHome);
  const parts = executableParts(repo, true, false);
  // The run: a flood past the walk's 100,000 folders, and a repository of its own below it.
  execFileSync(process.execPath, ["-e", `const fs = require("node:fs"); for (let i = 0; i < 101000; i++) fs.mkdirSync("flood/" + String(Math.floor(i / 1000)).padStart(3, "0") + "/" + String(i % 1000).padStart(3, "0"), { recursive: true });`], { cwd: repo });
  mkdirSync(join(repo, "sub"));
  owner(join(repo, "sub"), {}, "init", "-q");
  owner(join(repo, "sub"), {}, "config", "core.fsmonitor", "/nonexistent-aa-evil");
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 12, { sinceMs: Date.now() - 60_000 });
  assert.deepEqual(planted.map((p) => [p.path, p.kind]), [[repo, "walkCut"]]);
  markUnchecked(workerHome, 12, planted);
  const mark = planted[0]!.movedTo!;
  assert.equal(mark.startsWith(join(workerHome, "unchecked") + "/"), true, mark);
  assert.deepEqual((JSON.parse(readFileSync(mark, "utf8")) as { folder: string }).folder, repo);
  assert.match(plantedNotice(planted, "en")!.text ?? "", new RegExp(`could not walk through this folder \\(at most 100000 folders, 1000000 entries, 100000 symbolic links\\).*delete the mark ${mark}$`, "s"));
  // Even with the flood gone (the second run of the report removed it), a launch in the folder, below it or above it
  // waits for the owner; another folder does not.
  execFileSync("rm", ["-rf", join(repo, "flood")]);
  for (const folders of [[repo], [join(repo, "sub")], [realpathSync(join(repo, ".."))]]) assert.deepEqual(uncheckedHolding(workerHome, folders)?.file, mark, folders.join());
  assert.equal(uncheckedHolding(workerHome, [workerHome]), null);
  execFileSync("rm", [mark]);
  assert.equal(uncheckedHolding(workerHome, [repo]), null);
});

test("issue 26 round 59, F59-1 (reported case: a sandboxed plugin filled its writable bind past the walk with a nested repository in it; the check after the call moved nothing and marked nothing, and once the owner removed the flood the next launch took the plant for theirs): the plugin's check marks the folder as an agent's does, and launches there are refused until the owner removes the mark", () => {
  const repo = ownerRepo();
  const home = realpathSync(tempDir("aa-r59-home-"));
  removed.push(home);
  const guards = bindGuards([{ source: repo, container: "/w" }], "en");
  assert.ok(guards.ok);
  execFileSync(process.execPath, ["-e", `const fs = require("node:fs"); for (let i = 0; i < 101000; i++) fs.mkdirSync("flood/" + String(Math.floor(i / 1000)).padStart(3, "0") + "/" + String(i % 1000).padStart(3, "0"), { recursive: true });`], { cwd: repo });
  mkdirSync(join(repo, "sub"));
  owner(join(repo, "sub"), {}, "init", "-q");
  owner(join(repo, "sub"), {}, "config", "core.fsmonitor", "/nonexistent-aa-evil");
  const logs: string[] = [];
  const found = plantedInBinds({ folders: guards.folders, guarded: guards.guarded.map((g) => g.path), seen: guards.seen, sinceMs: Date.now() - 60_000 }, "flooder", home, "en", (_, l) => logs.push(l));
  assert.deepEqual(found.map((p) => [p.path, p.kind]), [[repo, "walkCut"]]);
  const mark = found[0]!.movedTo!;
  assert.equal(mark.startsWith(join(home, "worker", "unchecked") + "/"), true, mark);
  assert.match(logs.join("\n"), new RegExp(`delete the mark ${mark}`));
  execFileSync("rm", ["-rf", join(repo, "flood")]);
  assert.equal(uncheckedBind(home, "flooder", [repo], "en"), `plugin flooder is not started: ${repo} in its writable binds was not looked through after an earlier run (what was planted there may still be there). Look at the repositories in it (find ${repo} -name .git -o -name HEAD), then remove the mark ${mark}`);
  assert.deepEqual(uncheckedHolding(join(home, "worker"), [join(repo, "sub")])?.file, mark, "an agent's launch there waits too");
  execFileSync("rm", [mark]);
  assert.equal(uncheckedBind(home, "flooder", [repo], "en"), null);
});

test("issue 26 r30 F30a-3 (reported case: HEAD, objects, refs and a config with core.pager at the project's top, its .git/HEAD made invalid): the HEAD the run made is moved aside, so git finds no repository there; the owner's bare repository left as it was stays", async () => {
  const repo = ownerRepo();
  // The owner's own bare mirror in the project, there before the launch.
  owner(repo, {}, "clone", "-q", "--bare", repo, join(repo, "mirror.git"));
  await sleep(1_100); // past the kernel clock's slack (index-stat.ts ctimeSlackMs): the mirror is older than the launch
  const sinceMs = Date.now();
  const parts = executableParts(repo, true, false);
  // The run, as the report's payload.
  const head = owner(repo, {}, "rev-parse", "HEAD").trim();
  mkdirSync(join(repo, "objects", "info"), { recursive: true });
  writeFileSync(join(repo, "objects", "info", "alternates"), `${join(repo, ".git", "objects")}\n`);
  mkdirSync(join(repo, "refs", "heads"), { recursive: true });
  writeFileSync(join(repo, "refs", "heads", "main"), `${head}\n`);
  writeFileSync(join(repo, "HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(repo, "config"), "[core]\n\tbare = false\n\tpager = /nonexistent-aa-evil\n");
  writeFileSync(join(repo, ".git", "HEAD"), "garbage\n");
  // The same in a folder of the project (your git started in `src/` finds it before the project's `.git`).
  mkdirSync(join(repo, "src", "objects"), { recursive: true });
  mkdirSync(join(repo, "src", "refs"));
  writeFileSync(join(repo, "src", "HEAD"), "ref: refs/heads/main\n");
  assert.equal(owner(join(repo, "src"), {}, "rev-parse", "--git-dir").trim(), ".", "git takes src/ for the repository");
  assert.equal(owner(repo, {}, "rev-parse", "--git-dir").trim(), ".", "git takes the project folder for the repository");
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 13, { sinceMs });
  assert.deepEqual(planted.map((p) => [p.path, p.kind]), [[join(repo, "HEAD"), "moved"], [join(repo, "src", "HEAD"), "moved"]]);
  assert.equal(readFileSync(asideOf(join(repo, "HEAD"), 13), "utf8"), "ref: refs/heads/main\n");
  assert.throws(() => owner(repo, {}, "rev-parse", "--git-dir"), /not a git repository/);
  assert.throws(() => owner(join(repo, "src"), {}, "rev-parse", "--git-dir"), /not a git repository/);
  assert.equal(existsSync(join(repo, "mirror.git", "HEAD")), true, "the owner's bare mirror stays");
  assert.equal(owner(join(repo, "mirror.git"), {}, "rev-parse", "--is-bare-repository").trim(), "true");
});

test("issue 26 r31 F31a-1 and F31a-2 (reported cases: a git folder split by a commondir — HEAD and commondir in docs/X2, objects, refs and a config with core.pager in docs/Y2 —, and one laid out over two runs, HEAD alone first): a folder of a work tree holding a HEAD whose repository parts the run made or changed has its HEAD moved aside", async () => {
  const repo = ownerRepo();
  // The owner's own folder holding a HEAD (a fixture), there before the launch and left as it was.
  mkdirSync(join(repo, "fixtures", "r"), { recursive: true });
  writeFileSync(join(repo, "fixtures", "r", "HEAD"), "ref: refs/heads/main\n");
  await sleep(1_100); // past the kernel clock's slack: older than the launch
  let sinceMs = Date.now();
  let parts = executableParts(repo, true, false);
  // F31a-1, variant A: split by a commondir in a folder of the project.
  mkdirSync(join(repo, "docs", "X2"), { recursive: true });
  mkdirSync(join(repo, "docs", "Y2"));
  execFileSync("cp", ["-r", join(repo, ".git", "objects"), join(repo, ".git", "refs"), join(repo, "docs", "Y2")]);
  writeFileSync(join(repo, "docs", "X2", "HEAD"), readFileSync(join(repo, ".git", "HEAD")));
  writeFileSync(join(repo, "docs", "X2", "commondir"), "../Y2\n");
  writeFileSync(join(repo, "docs", "Y2", "config"), "[core]\n\tbare = true\n\tpager = /nonexistent-aa-evil\n");
  assert.equal(owner(join(repo, "docs", "X2"), {}, "config", "core.pager").trim(), "/nonexistent-aa-evil", "git takes docs/X2 for a repository");
  // F31a-2, the first run: a HEAD alone.
  mkdirSync(join(repo, "docs", "S"));
  writeFileSync(join(repo, "docs", "S", "HEAD"), "ref: refs/heads/main\n");
  let planted = plantedSteering([repo], guardedOf(parts), parts.seen, 14, { sinceMs });
  assert.deepEqual(planted.map((p) => [p.path, p.kind]), [[join(repo, "docs", "S", "HEAD"), "moved"], [join(repo, "docs", "X2", "HEAD"), "moved"]]);
  // Your git in docs/X2 now finds the project's own repository, whose configuration names no pager.
  assert.throws(() => owner(join(repo, "docs", "X2"), {}, "config", "core.pager"), /Command failed/);
  // F31a-2 with the HEAD left from before the launch (the owner's fixture): a run adding the rest makes it a
  // repository of the run's, and its HEAD goes.
  await sleep(1_100);
  sinceMs = Date.now();
  parts = executableParts(repo, true, false);
  execFileSync("cp", ["-r", join(repo, ".git", "objects"), join(repo, ".git", "refs"), join(repo, "fixtures", "r")]);
  writeFileSync(join(repo, "fixtures", "r", "config"), "[core]\n\tbare = true\n\tpager = /nonexistent-aa-evil\n");
  planted = plantedSteering([repo], guardedOf(parts), parts.seen, 15, { sinceMs });
  assert.deepEqual(planted.map((p) => [p.path, p.kind]), [[join(repo, "fixtures", "r", "HEAD"), "moved"]]);
});

/**
 * Runs a sandboxed command agent that plants `vendor/lib/.git` and ends 2.5 s later, and stops the worker process while
 * it runs (the agent goes on under its supervisor); `between` runs before another worker takes the run over.
 * @returns the project folder and the run's final state.
 */
async function plantAcrossRestart(between: (worker: string) => void = () => {}) {
  const cwd = ownerRepo();
  const script = `const fs = require("fs"); fs.mkdirSync("vendor/lib/.git", { recursive: true }); fs.writeFileSync("vendor/lib/.git/config", "[core]\\n\\tfsmonitor = /nonexistent-aa-evil\\n"); setTimeout(() => console.log("Done: planted"), 2500);`;
  const fx = await kit.setup({ use: "command", command: [process.execPath, "-e", script] }, cwd);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  await until(async () => (await fx.state()).runs[0]?.state === "running", 30_000, "the run to start");
  kit.workers.splice(0).forEach((w) => w.stop()); // the agent keeps running under its supervisor
  await until(() => existsSync(join(cwd, "vendor", "lib", ".git", "config")), 10_000, "the plant");
  between(fx.home.worker);
  kit.worker(fx);
  const st = await untilLatestRun(fx, "done", 60_000);
  assert.equal(st.runs[0].summary, "Done: planted");
  return { cwd, st };
}

test("issue 26 r32 F32a-1 (reported case: serve restarted while a sandboxed run planted vendor/lib/.git and slept; the run ended with no check and the owner's git status ran the plant): the worker that takes a run over after a restart checks it against the launch's record (launch.json)", async (t) => {
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  let record = "";
  const { cwd, st } = await plantAcrossRestart((worker) => {
    const dir = join(worker, "runs", readdirSync(join(worker, "runs")).find((d) => d.startsWith("1-"))!);
    record = readFileSync(join(dir, "launch.json"), "utf8");
    assert.equal(statSync(join(dir, "launch.json")).mode & 0o777, 0o600);
  });
  assert.ok(JSON.parse(record).watched.folders.includes(cwd), record.slice(0, 300));
  assert.equal(existsSync(join(cwd, "vendor", "lib", ".git")), false, "the plant was moved aside");
  const card = st.cards.find((c) => c.kind === "notice");
  assert.equal(card?.title, "The agent wrote files your git would run");
  assert.ok(card.text.startsWith(`${cwd}/vendor/lib/.git → moved to ${realpathSync(quarantines[0]!)}/run-1-`), JSON.stringify(st.cards));
  assert.doesNotMatch(card?.text ?? "", /not looked at/);
});

test("issue 26 r32 F32a-1: a run taken over after a restart whose launch record is gone names its folders as not looked at on its card (a mark would hold every launch after an update)", async (t) => {
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const { cwd, st } = await plantAcrossRestart((worker) => {
    for (const d of readdirSync(join(worker, "runs"))) rmSync(join(worker, "runs", d, "launch.json"), { force: true });
  });
  const card = st.cards.find((c) => c.kind === "notice");
  assert.equal(card?.text, `${cwd}: the worker restarted while the run was going, so the check after it had no record of the launch to compare with and what the agent left here was not looked at: list its repositories with find ${cwd} -name .git -o -name HEAD and read their config and hooks before you run git or an agent there`, JSON.stringify(st.cards));
});

test("a run taken over after a restart that stopped before its first launch started (the guard's walk, before the record and the supervisor) launches it then, and names nothing as not looked at (CI of 67e8684, tests/e2e: a hub killed during the launch; the run had failed as 'did not start')", async (t) => {
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const cwd = ownerRepo();
  const fx = await kit.setup({ use: "command", command: [process.execPath, "-e", `console.log("Done: ran")`] }, cwd);
  // What a worker killed during the first launch's guard leaves: the launch's folder, no record, no spec.json.
  mkdirSync(join(fx.home.worker, "runs", "1-1", "1"), { recursive: true });
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const st = await untilLatestRun(fx, "done", 60_000);
  assert.equal(st.runs[0].summary, "Done: ran");
  assert.deepEqual(st.cards.filter((c: { kind: string }) => c.kind === "notice"), [], JSON.stringify(st.cards));
});

test("launch folders: a folder whose supervisor never started (no spec.json) is no launch; only a sandboxed launch that left no readable record counts as begun unrecorded", () => {
  const dir = tempDir("aa-launches-");
  const spec = (n: string, sandboxed: boolean | string) => {
    mkdirSync(join(dir, n), { recursive: true });
    writeFileSync(join(dir, n, "spec.json"), typeof sandboxed === "string" ? sandboxed : JSON.stringify({ argv: ["x"], cwd: "/", env: [], sandboxed }));
  };
  mkdirSync(join(dir, "1"));
  assert.deepEqual([latestLaunch(dir), sandboxedLaunchBegun(dir)], [0, false]);
  spec("1", false);
  mkdirSync(join(dir, "2"));
  assert.deepEqual([latestLaunch(dir), sandboxedLaunchBegun(dir)], [1, false], "an unsandboxed launch is not checked after the run");
  spec("2.setup-failed", true);
  assert.deepEqual([latestLaunch(dir), sandboxedLaunchBegun(dir)], [1, true], "a sandboxed launch bwrap ended counts");
  rmSync(join(dir, "2.setup-failed"), { recursive: true });
  spec("3", "{ not json");
  assert.deepEqual([latestLaunch(dir), sandboxedLaunchBegun(dir)], [3, true], "a spec that does not read counts as begun");
  rmSync(join(dir, "3"), { recursive: true });
  writeFileSync(join(dir, launchRecordFile), "damaged");
  assert.equal(sandboxedLaunchBegun(dir), true, "a record there that does not read counts as begun");
});

test("launch.json: what a launch guarded reads back as written; a damaged, hand-made or oversized record is no record", () => {
  const dir = tempDir("aa-record-");
  removed.push(dir);
  const seen = { repositories: ["/p"], gitFolders: ["/p/.git"], worktreeFolders: [], projects: ["/p"], entries: ["1:2"], enclosing: [], hidden: [], shadows: [], globs: [], replaceRefs: [], heads: ["1:3"] };
  const gitState = [{ tree: "/p", gitDir: "/p/.git", paths: [".githooks"], index: { a: "100644 x" }, head: null, operations: {}, cut: false }];
  const state = { folders: [{ folder: "/s", writes: ["settings.json"], bound: true }], memory: ["*.md"], memoryFolders: ["/s"], ids: ["4:5"], files: { "/s/a.md": "f" } };
  assert.equal(saveLaunchRecord(dir, { folders: new Set(["/p"]), guarded: new Set(["/p/.git"]), seen, sinceMs: 1234, privateDir: "/h/worker/git", gitState }, state, "en"), null);
  assert.deepEqual(loadLaunchRecord(dir), { watched: { folders: new Set(["/p"]), guarded: new Set(["/p/.git"]), seen, sinceMs: 1234, privateDir: "/h/worker/git", gitState }, state });
  assert.equal(saveLaunchRecord(dir, null, null, "en"), null);
  assert.deepEqual(loadLaunchRecord(dir), { watched: null, state: null });
  const file = join(dir, launchRecordFile);
  const good = { v: 1, watched: { folders: ["/p"], guarded: [], seen, sinceMs: 1, privateDir: null, gitState: null }, state: null };
  for (const bad of ["", "{", "null", "[]", JSON.stringify({ ...good, v: 2 }), JSON.stringify({ ...good, watched: { ...good.watched, seen: { ...seen, heads: [7] } } }),
    JSON.stringify({ ...good, watched: { ...good.watched, sinceMs: "1" } }), JSON.stringify({ ...good, watched: { ...good.watched, gitState: [{ tree: "/p" }] } }),
    JSON.stringify({ ...good, state: { ...state, folders: [{ folder: 1 }] } })]) {
    writeFileSync(file, bad);
    assert.equal(loadLaunchRecord(dir), null, bad.slice(0, 80));
  }
  writeFileSync(file, JSON.stringify(good));
  assert.notEqual(loadLaunchRecord(dir), null);
  writeFileSync(file, " ".repeat(launchRecordBytesMax + 1));
  assert.equal(loadLaunchRecord(dir), null, "too large");
  rmSync(file);
  mkdirSync(file);
  assert.equal(loadLaunchRecord(dir), null, "a folder in its place");
  // A record that cannot be kept is the launch's refusal, named (it read as the agent plugin's failure), never a throw.
  assert.match(saveLaunchRecord(dir, null, null, "en") ?? "", /^could not keep this launch's record \(EISDIR: illegal operation on a directory, .*\); the agent was not started$/);
  rmSync(file, { recursive: true });
  const huge = { ...seen, entries: Array.from({ length: 9 * 1024 * 1024 }, () => "12345:67") };
  assert.equal(saveLaunchRecord(dir, { folders: new Set(["/p"]), guarded: new Set(), seen: huge, sinceMs: 1 }, null, "zh"), `没能保存这次启动的记录（记录有 ${JSON.stringify({ v: 1, watched: { folders: ["/p"], guarded: [], seen: huge, sinceMs: 1, privateDir: null, gitState: null }, state: null }).length} 字节，超过上限 ${launchRecordBytesMax}），Agent 没有启动`);
  assert.equal(existsSync(file), false, "nothing written");
});

test("issue 26 r32 F32a-1 review: a run taken over after a restart whose result was kept already (result.json is written after the check) is reported as kept, not checked a second time", async (t) => {
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const { cwd, st } = await plantAcrossRestart((worker) => {
    // As a worker leaves it when it stops between its check and its report: the check's notice inside the body.
    const dir = join(worker, "runs", readdirSync(join(worker, "runs")).find((d) => d.startsWith("1-"))!);
    writeFileSync(join(dir, "result.json"), JSON.stringify({ outcome: "done", summary: "Done: planted", session: null }));
  });
  // Checked again, the plant would be moved now and a second notice made: the kept body is what is reported.
  assert.equal(existsSync(join(cwd, "vendor", "lib", ".git", "config")), true);
  assert.deepEqual(st.cards.filter((c) => c.kind === "notice"), []);
});
