/**
 * Issue 26 round 2, findings 3, 4 and 5: a bind source was checked by its real path and then handed to bubblewrap as a
 * path, which bwrap resolved again; whoever can write a parent folder of the source (the plugin itself, a sandboxed
 * agent sharing the folder, another run) swapped in a link to the hub's home between the check and the mount, and read
 * master.key through the bind — a tool plugin's `[sandbox] binds` (repro-3, repro-4), an agent's cwd (repro-5) and its
 * `writable` folders. The kind: every bind source either sandbox takes from the host is opened once, checked on the
 * open file (its /proc/self/fd path is the checked path, no link), and bound by descriptor (`--bind-fd`).
 *
 * The race is made wide and certain here: the launch is prepared (checked), the swap is done, then the launch is
 * started — with real bubblewrap and real processes. A plugin then still sees the folder that was checked; an agent
 * launch whose checked folder is no longer at its path is refused by its supervisor before bwrap starts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, fstatSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { tempDir } from "./helpers.js";
import { hostFixture, probeBwrap, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { prepareLaunch, PluginProcess, type LaunchSettings } from "../src/tools/process.js";
import { systemCgroups } from "../src/tools/cgroup.js";
import { autoloopFolders, probeSandbox, sandboxArgv, type SandboxPlan } from "../src/worker/sandbox.js";
import { execFileSync } from "node:child_process";
import { executableParts, projectSteeringFolders } from "../src/worker/steering.js";
import { readExit, startSupervised } from "../src/worker/supervise.js";
import { openBindSource } from "../src/common/bwrap.js";
import { probeError } from "../src/tools/sandbox.js";
import { t as text } from "../src/i18n/messages.js";

const sandboxed = async () => (await probeBwrap("bwrap")).ok;

/** Replaces `path` by a symbolic link to `target`; the original moves to `<path>.orig`. */
function swap(path: string, target: string): void {
  renameSync(path, `${path}.orig`);
  symlinkSync(target, path);
}

test("issue 26 r2 #3/#4 (reported case and other bind forms): a plugin's bind source swapped for a link to the hub's home after the check still binds the folder that was checked", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const base = realpathSync(tempDir("aa-bind-race-"));
  const hub = join(base, "hub");
  mkdirSync(hub);
  writeFileSync(join(hub, "master.key"), "top secret");
  writeFileSync(join(hub, "readme.txt"), "the hub's");
  const f = hostFixture({ hiddenPaths: [hub] });
  const logs: string[] = [];
  const s: LaunchSettings = { lang: "en", bwrap: "bwrap", hidden: [hub], cgroups: systemCgroups(), parentEnv: process.env, log: (_, l) => logs.push(l) };
  try {
    // [bind as written, the folder whose parent is writable, what to swap (that folder or a parent of a file)]
    const shared = join(base, "shared");
    for (const d of ["ro", "rw", "file", "limited"]) mkdirSync(join(shared, d), { recursive: true });
    for (const d of ["ro", "rw", "file", "limited"]) writeFileSync(join(shared, d, "readme.txt"), `benign ${d}`);
    const cases: { name: string; bind: string; swapped: (dir: string) => string; extra?: string }[] = [
      { name: "ro", bind: `${join(shared, "ro")}:/data:ro`, swapped: () => join(shared, "ro") }, // repro-3/4
      { name: "rw", bind: `${join(shared, "rw")}:/data:rw`, swapped: () => join(shared, "rw") },
      { name: "file", bind: `${join(shared, "file", "readme.txt")}:/data/readme.txt:ro`, swapped: () => join(shared, "file") },
      { name: "relative", bind: "./state/d:/data:ro", swapped: (dir) => join(dir, "state") },
      // With a limit the launch goes through the cgroup's shell, which passes the descriptors on to bwrap.
      { name: "limited", bind: `${join(shared, "limited")}:/data:ro`, swapped: () => join(shared, "limited"), extra: "pids = 64\n" },
    ];
    const script = `printf '%s\\n' "$(cat /data/readme.txt)" "$(cat /data/master.key 2>/dev/null || echo no key)"`;
    for (const c of cases) {
      const manifest = syncManifest(c.name, "sh", ["-c", script], `[sandbox]\n${c.extra ?? ""}binds = [${JSON.stringify(c.bind)}]\n\n${toolToml("go")}`);
      const dir = writePlugin(f.root, c.name, manifest, c.name === "relative" ? { "state/d/readme.txt": "benign relative" } : {});
      f.registry.rescan();
      const p = f.registry.get(c.name);
      assert.ok(p?.manifest, `${c.name}: ${JSON.stringify(f.registry.list().find((r) => r.name === c.name)?.errors)}`);
      const prepared = await prepareLaunch({ name: c.name, dir: p.dir, manifest: p.manifest, tag: `race-${c.name}` }, s);
      assert.ok(prepared.ok, JSON.stringify(prepared));
      // Between the check and bwrap: the source (or its parent) becomes a link to the hub's home.
      swap(c.swapped(dir), hub);
      const proc = new PluginProcess(prepared.launch, c.name, s);
      // This process keeps none of the descriptors once the child has them.
      assert.ok((prepared.launch.fds ?? []).length >= 2, "the plugin folder and the bind go by descriptor");
      for (const fd of prepared.launch.fds ?? []) assert.throws(() => fstatSync(fd), { code: "EBADF" });
      const lines: string[] = [];
      proc.onLine = (l) => lines.push(l);
      proc.endInput();
      await proc.closed;
      await proc.end();
      assert.deepEqual(lines, [`benign ${c.name}`, "no key"], `${c.name}: ${logs.join(" | ")}`);
    }
    assert.equal(readFileSync(join(hub, "master.key"), "utf8"), "top secret");
  } finally {
    await f.close();
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 r2 #3/#4/#5: a checked path is kept only when the file opened is at that path: a parent swapped for a link, or the path itself, is named as changed", () => {
  const base = realpathSync(tempDir("aa-bind-open-"));
  try {
    const hub = join(base, "hub");
    mkdirSync(join(base, "shared", "work"), { recursive: true });
    mkdirSync(hub);
    const work = join(base, "shared", "work");
    const kept = openBindSource(work);
    assert.ok("fd" in kept);
    swap(join(base, "shared"), join(base, "elsewhere-not-yet"));
    mkdirSync(join(base, "elsewhere-not-yet", "work"), { recursive: true });
    // The parent is now a link: the same path opens another folder.
    assert.deepEqual(openBindSource(work), { why: "changed", now: join(base, "elsewhere-not-yet", "work") });
    // The parent back, and the folder itself swapped for a link.
    rmSync(join(base, "shared"));
    renameSync(join(base, "shared.orig"), join(base, "shared"));
    assert.ok("fd" in openBindSource(work));
    swap(work, hub);
    // The last name is a link (O_NOFOLLOW opens the link itself): refused, saying so.
    assert.deepEqual(openBindSource(work), { why: "changed", now: `${work} (a link)` });
    assert.deepEqual(openBindSource(join(base, "gone")), { why: "missing", error: "ENOENT" });
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 r2 #5 (reported case) and writable folders: an agent launch whose cwd or writable folder became a link to the hub's home after the worker's check is refused by its supervisor; unchanged, it runs", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const base = realpathSync(tempDir("aa-cwd-race-"));
  try {
    const hub = join(base, "hub");
    mkdirSync(join(hub, "cache"), { recursive: true });
    writeFileSync(join(hub, "master.key"), "top secret");
    writeFileSync(join(hub, "cache", "master.key"), "top secret");
    for (const which of ["none", "cwd", "writable"] as const) {
      const cwd = join(base, which, "shared", "work");
      const extra = join(base, which, "other", "cache");
      mkdirSync(cwd, { recursive: true });
      mkdirSync(extra, { recursive: true });
      const ldir = join(base, which, "launch");
      mkdirSync(ldir);
      const plan = { bwrap: "bwrap", writable: [cwd, extra], hide: hub, show: [], cwd };
      const launch = sandboxArgv(plan, ["sh", "-c", `cat master.key; cat ${extra}/master.key; echo ran`]);
      // repro-5: the cwd itself exchanged for a link to the hub's home; a writable folder reached through a parent
      // exchanged for a link into the hub's home.
      if (which === "cwd") swap(cwd, hub);
      if (which === "writable") swap(join(base, which, "other"), hub);
      await startSupervised(ldir, launch.argv, cwd, { PATH: process.env.PATH ?? "" }, true, "en", launch.sources);
      for (let i = 0; i < 200 && !readExit(ldir); i++) await sleep(50);
      const exit = readExit(ldir);
      const out = readFileSync(join(ldir, "stdout"), "utf8");
      if (which === "none") {
        assert.deepEqual([exit?.error, out.trim().split("\n").at(-1)], [null, "ran"]);
        continue;
      }
      const [changed, now] = which === "cwd" ? [cwd, `${cwd} (a link)`] : [extra, join(hub, "cache")];
      assert.deepEqual({ exit, out }, { exit: { code: 127, signal: null, error: `the sandbox's folder ${changed} is no longer the one checked (now ${now}): a link was put in its place or above it; the agent did not start` }, out: "" });
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("a bind source gone between the worker's plan and the launch (a mount that went away: another test's under /mnt, in a full run) ends the launch as a setup failure, which the worker plans again; a source changed into a link stays refused", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const base = realpathSync(tempDir("aa-bind-gone-"));
  try {
    const cwd = join(base, "work");
    const gone = join(base, "mounted", "usr", "lib");
    mkdirSync(cwd);
    mkdirSync(gone, { recursive: true });
    const ldir = join(base, "launch");
    mkdirSync(ldir);
    const launch = sandboxArgv({ bwrap: "bwrap", writable: [cwd], readOnly: [gone], hide: join(base, "hub"), show: [], cwd }, ["sh", "-c", "echo ran"]);
    rmSync(join(base, "mounted"), { recursive: true });
    await startSupervised(ldir, launch.argv, cwd, { PATH: process.env.PATH ?? "" }, true, "en", launch.sources);
    for (let i = 0; i < 200 && !readExit(ldir); i++) await sleep(50);
    assert.deepEqual(readExit(ldir), { code: 127, signal: null, error: `the sandbox's folder ${gone} cannot be opened (ENOENT); the agent did not start`, setupFailed: true });
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 r2 #3-#5: a bubblewrap older than 0.8 (no --bind-fd) fails both probes, saying so, rather than running anything by path", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const bin = realpathSync(tempDir("aa-old-bwrap-"));
  try {
    // bubblewrap 0.6 as Ubuntu 22.04 ships it: it runs, and its help has no --bind-fd.
    const real = execFileSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).trim();
    writeFileSync(join(bin, "bwrap"), `#!/bin/sh\nif [ "$1" = --help ]; then ${real} --help | grep -v -- '-fd '; exit 0; fi\nexec ${real} "$@"\n`, { mode: 0o755 });
    const old = join(bin, "bwrap");
    const probe = await probeBwrap(old);
    assert.deepEqual(probe, { ok: false, error: null, tooOld: true });
    assert.equal(probeError(probe, "en"), "bubblewrap is older than 0.8 (no --bind-fd, which the sandbox needs to bind the folders it checked): upgrade it");
    assert.equal(probeError(probe, "zh"), text("zh", "sandbox.bwrapTooOld"));
    assert.equal(probeSandbox(old, join(bin, "hidden"), "zh"), text("zh", "sandbox.bwrapTooOld"));
    assert.equal(probeSandbox(real, join(bin, "hidden")), null);
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
});

/** Runs `script` with sh in the sandbox `plan` under a supervisor in `ldir` (made here), waits for it: its stdout's lines. */
async function sandboxedLines(ldir: string, plan: SandboxPlan, script: string): Promise<string[]> {
  mkdirSync(ldir);
  const launch = sandboxArgv(plan, ["sh", "-c", script]);
  await startSupervised(ldir, launch.argv, plan.cwd, { PATH: process.env.PATH ?? "" }, true, "en", launch.sources);
  for (let i = 0; i < 200 && !readExit(ldir); i++) await sleep(50);
  return readFileSync(join(ldir, "stdout"), "utf8").trim().split("\n");
}

test("issue 26 r7 F15 (reported case): other homes of the engine and backups in the user's homes (~/.agent-autoloop*) are hidden in an agent's sandbox; the rest of the home stays readable", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const base = realpathSync(tempDir("aa-other-homes-"));
  try {
    const user = join(base, "user");
    const hub = join(base, "hub");
    const work = join(base, "work");
    for (const d of [join(user, ".agent-autoloop-backups"), join(user, ".agent-autoloop"), hub, work]) mkdirSync(d, { recursive: true });
    writeFileSync(join(user, ".agent-autoloop-backups", "b.tar.gz"), "every key");
    writeFileSync(join(user, ".agent-autoloop", "master.key"), "top secret");
    writeFileSync(join(user, ".agent-autoloop-note"), "a file, not a folder");
    writeFileSync(join(user, "plain.txt"), "visible");
    const alsoHide = autoloopFolders([user]);
    assert.deepEqual(alsoHide.sort(), [join(user, ".agent-autoloop"), join(user, ".agent-autoloop-backups")]);
    const plan = { bwrap: "bwrap", writable: [work], homes: [user], hide: hub, alsoHide, show: [], cwd: work };
    const out = await sandboxedLines(join(base, "launch"), plan, `cat ${user}/.agent-autoloop-backups/b.tar.gz ${user}/.agent-autoloop/master.key; cat ${user}/plain.txt; echo; echo ran`);
    assert.deepEqual(out, ["visible", "ran"]);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 r7 F16 (reported case): in an agent's sandbox its checkout's git hooks and config stay read-only (a missing hooks folder is made first); the rest of .git stays writable", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const base = realpathSync(tempDir("aa-git-hooks-"));
  try {
    const work = join(base, "work");
    mkdirSync(join(work, ".git"), { recursive: true });
    writeFileSync(join(work, ".git", "config"), "[core]\n\tbare = false\n");
    const parts = executableParts(work);
    assert.deepEqual({ mountPoints: parts.mountPoints, readOnly: parts.readOnly }, { mountPoints: [join(work, ".git")], readOnly: [join(work, ".git", "config"), join(work, ".git", "hooks"), ...projectSteeringFolders.map((d) => join(work, d))] }, "the hooks folder made, then both guarded; .git a mount point; the editors' and CLIs' folders made");
    const plan = { bwrap: "bwrap", writable: [work, ...parts.mountPoints], readOnly: parts.readOnly, hide: join(base, "hub"), show: [], cwd: work };
    mkdirSync(plan.hide);
    const script = [
      "echo x > .git/hooks/pre-commit && echo hook-written",
      "printf '[core]\\n\\tfsmonitor = ./evil\\n' >> .git/config && echo config-written",
      "echo ref > .git/ORIG_HEAD && echo ref-written",
      "echo ran",
    ].join("; ");
    assert.deepEqual(await sandboxedLines(join(base, "launch"), plan, script), ["ref-written", "ran"]);
    assert.equal(readFileSync(join(work, ".git", "config"), "utf8"), "[core]\n\tbare = false\n");
    assert.equal(existsSync(join(work, ".git", "hooks", "pre-commit")), false);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
