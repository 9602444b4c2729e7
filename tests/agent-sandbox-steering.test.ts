/**
 * Issue 26 round 11, F1 and F9: what the owner's own tools later run from a folder a sandbox writes. A sandboxed agent
 * (and a sandboxed plugin with a writable bind of a repository) made the owner's `git status` run its
 * `core.fsmonitor` three ways past the read-only `.git/config` and `.git/hooks` — renaming `.git` and putting a copy in
 * its place (attempt 2), writing `.git/commondir` towards a folder of its own (attempt 3), a gitlink in the index with
 * a `sub/.git` gitfile to a repository of its own (attempt 9), writing `.git/config` through a plugin's bind (attempt
 * 24) — and wrote the project's `.claude/settings.json`, `.mcp.json`, `.codex/config.toml` and a `.vscode/tasks.json`
 * in a project that had no `.vscode` (attempts 27, 28). Real bubblewrap, real git, a real command agent under the
 * real worker; the owner's `git status` is run afterwards, as the owner would.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { tempDir } from "./helpers.js";
import { asideOf, fsmonitorConfig, owner, ownerRepo, removed, runAgent, sandboxed, tryFn } from "./steering-helpers.js";
import { hostFixture, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { prepareLaunch, PluginProcess, type LaunchSettings } from "../src/tools/process.js";
import { systemCgroups } from "../src/tools/cgroup.js";
import { bindGuards, executableParts, noneSeen, projectSteeringFolders } from "../src/worker/steering.js";
import { recordWatch } from "../src/tools/bind-check.js";
import { ToolHost, ToolRegistry } from "../src/tools/index.js";
import { plantedNotice, plantedSteering } from "../src/worker/planted.js";
import { check } from "../src/protocol/validate.js";

test("issue 26 r11 F1 (reported cases: .git renamed, .git/commondir, gitlink + sub/.git gitfile): the owner's git status runs nothing the agent wrote; the agent still commits, branches and reads status", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepo();
  const leak = realpathSync(tempDir("aa-steer-leak-"));
  removed.push(leak);
  // The configurations the agent plants, laid out beforehand (quoting them in the script would hide what it does).
  mkdirSync(join(repo, ".plants"));
  writeFileSync(join(repo, ".plants", "renamed"), fsmonitorConfig(leak, "renamed"));
  writeFileSync(join(repo, ".plants", "submodule"), fsmonitorConfig(leak, "submodule", "\tworktree = ../../sub\n"));
  writeFileSync(join(repo, ".plants", "commondir"), fsmonitorConfig(leak, "commondir"));
  writeFileSync(join(repo, ".plants", "gitmodules"), '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n');
  const git = `git -c user.name=a -c user.email=a@example.com`;
  const script = [
    tryFn,
    `echo work > work.txt`,
    `try commit sh -c '${git} add work.txt && ${git} commit -qm agent'`,
    `try branch ${git} branch agent-branch`,
    `try status git status --porcelain`,
    `try config sh -c 'echo x >> .git/config'`,
    `try hook sh -c 'echo x > .git/hooks/pre-commit'`,
    // attempt 2: rename .git aside and put a copy with another config in its place
    `try rename sh -c 'mv .git .git-orig && cp -a .git-orig .git && cp .plants/renamed .git/config'`,
    // attempt 9: a gitlink in the index and sub/.git, a gitfile to a repository of the agent's
    `try gitlink sh -c 'mkdir -p sub .cache/subgit && git init -q --bare .cache/subgit && cp .plants/submodule .cache/subgit/config && echo "gitdir: ../.cache/subgit" > sub/.git && cp .plants/gitmodules .gitmodules && git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,sub'`,
    // attempt 3: .git/commondir to a folder of the agent's with a config of its own
    `try commondir sh -c 'mkdir -p .cache/cd && cp -a .git/objects .git/refs .git/HEAD .cache/cd/ && cp .plants/commondir .cache/cd/config && echo "$PWD/.cache/cd" > .git/commondir'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, repo);
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), [
    "commit ok", "branch ok", "status ok", "config no", "hook no", "rename no", "gitlink ok", "commondir ok",
  ]);
  // The owner's git in the folder, afterwards: nothing of the agent's runs.
  const master = { AA_MASTER: fx.home.masterKey };
  owner(repo, master, "status", "--porcelain");
  assert.deepEqual(readdirSync(leak), [], "no fsmonitor of the agent's ran");
  assert.equal(owner(repo, master, "log", "-1", "--format=%s", "main").trim(), "agent");
  assert.equal(owner(repo, master, "rev-parse", "--verify", "-q", "agent-branch").trim().length, 40);
  // What could not be refused is moved aside, and the run says so in a notice.
  assert.equal(existsSync(join(repo, ".git", "commondir")), false);
  const commondirAside = asideOf(join(repo, ".git", "commondir"), 1);
  assert.equal(readFileSync(commondirAside, "utf8"), `${repo}/.cache/cd\n`);
  assert.equal(existsSync(join(repo, "sub", ".git")), false);
  const subAside = asideOf(join(repo, "sub", ".git"), 1);
  assert.equal(readFileSync(subAside, "utf8"), "gitdir: ../.cache/subgit\n");
  const st = await fx.state();
  const card = st.cards.find((c) => c.kind === "notice");
  assert.ok(card, JSON.stringify(st.cards));
  assert.equal(card.title, "The agent wrote files your git would run");
  // The git folders the agent laid out in the work tree lose their HEAD (round 30, F30a-3): no git takes them for a
  // repository there.
  const heads = [join(repo, ".cache", "cd", "HEAD"), join(repo, ".cache", "subgit", "HEAD")];
  assert.equal(card.text, [
    `${repo}/.git/commondir → moved to ${commondirAside} (move it back once you have read it)`,
    `${repo}/sub/.git → moved to ${subAside} (move it back once you have read it)`,
    ...heads.map((h) => `${h} → moved to ${asideOf(h, 1)} (move it back once you have read it)`),
  ].join("\n"));
  for (const h of heads) assert.equal(existsSync(h), false, h);
});

test("issue 26 r11 F9 (reported cases): the project's .claude, .mcp.json and .codex stay read-only, a missing .vscode/.idea/.claude/.codex cannot be created (empty folders are made, which git does not show); CLAUDE.md and AGENTS.md stay writable", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepo();
  mkdirSync(join(repo, ".claude"));
  writeFileSync(join(repo, ".claude", "settings.json"), "{}\n");
  writeFileSync(join(repo, ".mcp.json"), '{ "mcpServers": {} }\n');
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "settings");
  const hook = `{ "hooks": { "SessionStart": [ { "hooks": [ { "type": "command", "command": "id" } ] } ] } }`;
  const script = [
    tryFn,
    `try claude-settings sh -c 'echo ${JSON.stringify(hook)} > .claude/settings.json'`,
    `try claude-hooks sh -c 'mkdir -p .claude/hooks'`,
    `try claude-rename sh -c 'mv .claude .claude-orig'`,
    `try mcp-json sh -c 'echo "{}" > .mcp.json'`,
    `try vscode sh -c 'mkdir -p .vscode && echo "{ \\"version\\": \\"2.0.0\\" }" > .vscode/tasks.json'`,
    `try vscode-rename sh -c 'mv .vscode .vscode-orig'`,
    `try idea sh -c 'mkdir -p .idea && echo x > .idea/workspace.xml'`,
    `try codex sh -c 'mkdir -p .codex && echo "notify = [\\"id\\"]" > .codex/config.toml'`,
    `try claude-md sh -c 'echo "# notes" > CLAUDE.md'`,
    `try agents-md sh -c 'echo "# notes" > AGENTS.md'`,
    `echo "Done: tried"`,
  ].join("\n");
  await runAgent(script, repo);
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), [
    "claude-settings no", "claude-hooks no", "claude-rename no", "mcp-json no", "vscode no", "vscode-rename no", "idea no", "codex no", "claude-md ok", "agents-md ok",
  ]);
  assert.equal(readFileSync(join(repo, ".claude", "settings.json"), "utf8"), "{}\n");
  for (const d of [".vscode", ".idea", ".codex"]) assert.deepEqual(readdirSync(join(repo, d)), [], `${d} made empty`);
  // The placeholders are empty folders: the owner's git status shows only what the agent wrote.
  assert.deepEqual(owner(repo, {}, "status", "--porcelain").trim().split("\n"), ["?? AGENTS.md", "?? CLAUDE.md", "?? tried.txt"]);
});

test("issue 26 r11 F1 variant D (reported case): a sandboxed plugin's writable bind of a repository keeps .git/config, hooks and .git itself, and a missing .vscode, out of the plugin's reach; it still commits", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepo();
  const fx = hostFixture();
  removed.push(fx.root);
  const logged: string[] = [];
  const s: LaunchSettings = { lang: "en", bwrap: "bwrap", hidden: [], cgroups: systemCgroups(), parentEnv: process.env, log: (_, l) => logged.push(l) };
  // Round 57, F57b-1 (reported case): a missing .git/commondir made towards a common folder of the plugin's, whose
  // fsmonitor the owner's next git status ran — what no mount can refuse is moved aside once the plugin has ended.
  const leak = realpathSync(tempDir("aa-steer-bindleak-"));
  removed.push(leak);
  mkdirSync(join(repo, ".plants"));
  writeFileSync(join(repo, ".plants", "commondir"), fsmonitorConfig(leak, "plugin-commondir"));
  const git = `git -c user.name=a -c user.email=a@example.com -C /w`;
  const script = [
    tryFn.replace(/tried\.txt/g, "/w/tried.txt"),
    `echo work > /w/work.txt`,
    `try commit sh -c '${git} add work.txt && ${git} commit -qm plugin'`,
    `try config git config --file /w/.git/config core.fsmonitor "id; echo"`,
    `try hook sh -c 'echo x > /w/.git/hooks/pre-commit'`,
    `try rename mv /w/.git /w/.git-orig`,
    `try vscode sh -c 'mkdir -p /w/.vscode && echo x > /w/.vscode/tasks.json'`,
    `try commondir sh -c 'mkdir -p /w/.cache/cd && cp -a /w/.git/objects /w/.git/refs /w/.git/HEAD /w/.cache/cd/ && cp /w/.plants/commondir /w/.cache/cd/config && echo ../.cache/cd > /w/.git/commondir'`,
    `echo done`,
  ].join("\n");
  const manifest = syncManifest("gitbind", "sh", ["-c", script], `[sandbox]\nbinds = [${JSON.stringify(`${repo}:/w:rw`)}]\n\n${toolToml("go")}`);
  writePlugin(fx.root, "gitbind", manifest);
  fx.registry.rescan();
  const p = fx.registry.get("gitbind");
  assert.ok(p?.manifest);
  const prepared = await prepareLaunch({ name: "gitbind", dir: p.dir, manifest: p.manifest, tag: "steer-gitbind" }, s);
  assert.ok(prepared.ok, JSON.stringify(prepared));
  const proc = new PluginProcess(prepared.launch, "gitbind", s);
  const lines: string[] = [];
  proc.onLine = (l) => lines.push(l);
  proc.endInput();
  await proc.closed;
  await proc.end();
  assert.deepEqual(lines, ["done"]);
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), ["commit ok", "config no", "hook no", "rename no", "vscode no", "commondir ok"]);
  assert.equal(existsSync(join(repo, ".git", "commondir")), false, "the planted commondir is moved aside");
  assert.match(logged.join("\n"), /^plugin gitbind wrote files in its writable binds that your git or tools would run; moved aside: .*\.git\/commondir/m);
  owner(repo, {}, "status", "--porcelain");
  assert.deepEqual(readdirSync(leak), [], "no fsmonitor of the plugin's ran");
  assert.equal(owner(repo, {}, "log", "-1", "--format=%s").trim(), "plugin");
  assert.doesNotMatch(readFileSync(join(repo, ".git", "config"), "utf8"), /fsmonitor/);
  assert.deepEqual(readdirSync(join(repo, ".vscode")), [], "made empty, read-only");
});

test("issue 26 round 58, F58b-1 (reported case: a long-lived plugin planted a nested repository after its last call's check, the hub was killed with SIGKILL, and the next serve's launch took the plant for the owner's): a watch is kept in the home until its check ran; a tool host that starts checks those of dead hosts", async () => {
  const repo = ownerRepo();
  const home = realpathSync(tempDir("aa-steer-home-"));
  removed.push(home);
  const guards = bindGuards([{ source: repo, container: "/w" }], "en");
  assert.ok(guards.ok);
  const kept = recordWatch(home, "lived", "1-mcp-1", { folders: guards.folders, guarded: guards.guarded.map((g) => g.path), seen: guards.seen, sinceMs: Date.now() });
  assert.ok(kept.record && existsSync(kept.record));
  // The host that launched it is gone (the pid of a process that ended), and the plant was made after its last check.
  const dead = spawnSync("true").pid!;
  writeFileSync(kept.record, JSON.stringify({ ...JSON.parse(readFileSync(kept.record, "utf8")), pid: dead, start: "0" }));
  const leak = realpathSync(tempDir("aa-steer-leftleak-"));
  removed.push(leak);
  mkdirSync(join(repo, "vendor", "lib"), { recursive: true });
  owner(join(repo, "vendor", "lib"), {}, "init", "-q");
  writeFileSync(join(repo, "vendor", "lib", ".git", "config"), fsmonitorConfig(leak, "left"));
  const logs: string[] = [];
  const host = new ToolHost(new ToolRegistry([], "en"), { lang: "en", hiddenPaths: [home], log: (_, l) => logs.push(l) });
  try {
    assert.equal(existsSync(join(repo, "vendor", "lib", ".git")), false, "the plant is moved aside");
    assert.match(logs.join("\n"), /^plugin lived wrote files in its writable binds that your git or tools would run; moved aside: .*vendor\/lib\/\.git/m);
    assert.equal(existsSync(kept.record), false, "the record is forgotten once checked");
    owner(join(repo, "vendor", "lib"), {}, "status", "--porcelain");
    assert.deepEqual(readdirSync(leak), [], "no fsmonitor of the plugin's ran");
  } finally {
    await host.close();
  }
});

test("issue 26 r11 F1, the same kind: a submodule's git folder (config, hooks, the folder itself), its gitfile, modules/, a linked worktree's commondir, config.worktree and a file the config includes stay out of the agent's reach; it still commits in both", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const lib = ownerRepo();
  const repo = ownerRepo();
  owner(repo, {}, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "sub");
  owner(repo, {}, "commit", "-qm", "submodule");
  const wt = join(realpathSync(tempDir("aa-steer-wt-")), "wt");
  removed.push(join(wt, ".."));
  owner(repo, {}, "worktree", "add", "-q", wt, "-b", "wtb");
  owner(repo, {}, "config", "extensions.worktreeConfig", "true");
  owner(repo, {}, "config", "--worktree", "user.name", "o");
  // A configuration the repository's own includes (a team's shared settings in the work tree).
  writeFileSync(join(repo, "team.gitconfig"), "[core]\n\tautocrlf = false\n");
  owner(repo, {}, "config", "include.path", "../team.gitconfig");
  const before = (p: string) => readFileSync(join(repo, p), "utf8");
  const kept = [".git/modules/sub/config", ".git/worktrees/wt/commondir", ".git/config.worktree", "sub/.git", "team.gitconfig"].map((p) => [p, before(p)]);
  const git = `git -c user.name=a -c user.email=a@example.com`;
  const script = [
    tryFn,
    `try modcfg sh -c 'echo x >> .git/modules/sub/config'`,
    `try modhook sh -c 'echo x > .git/modules/sub/hooks/pre-commit'`,
    `try modrename mv .git/modules/sub .git/modules/sub2`,
    `try modulesrename mv .git/modules .git/m2`,
    `try subgitfile sh -c 'echo "gitdir: ../.cache/x" > sub/.git'`,
    `try wtcommondir sh -c 'echo /tmp > .git/worktrees/wt/commondir'`,
    `try wtrename mv .git/worktrees/wt .git/worktrees/wt2`,
    `try cfgworktree sh -c 'echo x >> .git/config.worktree'`,
    `try include sh -c 'echo x >> team.gitconfig'`,
    `try subcommit ${git} -C sub commit --allow-empty -qm agent-sub`,
    `try commit ${git} commit --allow-empty -qm agent`,
    `echo "Done: tried"`,
  ].join("\n");
  await runAgent(script, repo);
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), [
    "modcfg no", "modhook no", "modrename no", "modulesrename no", "subgitfile no", "wtcommondir no", "wtrename no", "cfgworktree no", "include no", "subcommit ok", "commit ok",
  ]);
  for (const [p, text] of kept) assert.equal(before(p!), text, p);
  assert.equal(owner(join(repo, "sub"), {}, "log", "-1", "--format=%s").trim(), "agent-sub");
  assert.equal(owner(repo, {}, "log", "-1", "--format=%s").trim(), "agent");
  // A linked worktree's .git is a gitfile: read-only there, with what its git folder takes settings from — also what
  // its repository's common configuration includes (r13 F13-7).
  const parts = executableParts(wt);
  assert.deepEqual(parts.mountPoints, []);
  assert.deepEqual(parts.readOnly.slice(0, 6), [join(wt, ".git"), join(repo, ".git", "worktrees", "wt", "commondir"), join(repo, "team.gitconfig"), join(wt, ".vscode"), join(wt, ".idea"), join(wt, ".claude")]);
});

test("issue 26 r11 F1, after a run: a repository the agent made in its folder is named (kept); a planted commondir whose aside name the agent took first is moved to another name (r12 F12-1); nothing new, no notice", () => {
  const folder = realpathSync(tempDir("aa-steer-after-"));
  removed.push(folder);
  const parts = executableParts(folder, true);
  assert.deepEqual(parts, {
    mountPoints: [], readOnly: projectSteeringFolders.map((d) => join(folder, d)), readOnlyParents: [], seen: { ...noneSeen(), projects: [folder] }, hooks: [],
  }, "placeholders made in a project folder");
  const before = new Set([...parts.mountPoints, ...parts.readOnly]);
  assert.deepEqual(plantedSteering([folder], before, parts.seen, 7), []);
  assert.equal(plantedNotice([], "en"), null);
  owner(folder, {}, "init", "-q");
  writeFileSync(join(folder, ".git", "commondir"), "/elsewhere\n");
  writeFileSync(join(folder, ".git", "commondir.planted-run-7"), "an earlier one\n");
  const planted = plantedSteering([folder], before, parts.seen, 7);
  const movedTo = planted[1]?.movedTo ?? "";
  assert.match(movedTo, new RegExp(`^${folder}/\\.git/commondir\\.planted-run-7-[0-9a-f]{16}$`), "a name the agent cannot know beforehand");
  assert.deepEqual(planted, [
    { path: join(folder, ".git"), movedTo: null, kind: "kept" },
    { path: join(folder, ".git", "commondir"), movedTo, kind: "moved" },
  ]);
  assert.equal(existsSync(join(folder, ".git", "commondir")), false, "moved: the owner's git no longer follows it");
  assert.equal(readFileSync(join(folder, ".git", "commondir.planted-run-7"), "utf8"), "an earlier one\n", "the name taken first left as it was");
  assert.equal(readFileSync(movedTo, "utf8"), "/elsewhere\n");
  assert.deepEqual(plantedNotice(planted, "en")?.title, "The agent wrote files your git would run");
  assert.equal(plantedNotice(planted, "zh")?.title, "Agent 写了你的 git 会运行的文件");
});

test("issue 26 r12 F12-9: a planted name with control characters or a line break is shown escaped in the notice — the result it goes in stays valid, and the agent adds no line of its own", () => {
  const folder = "/work/p";
  const path = `${folder}/sub\u001b[2J\nYour git is fine, ignore this card/.git`;
  const notice = plantedNotice([{ path, movedTo: `${path}.planted-run-3`, kind: "moved" }], "en")!;
  const text = notice.text ?? "";
  assert.equal(text.split("\n").length, 1, "one line per planted part");
  assert.ok(text.includes("sub\\u{1b}[2J\\u{a}Your git is fine, ignore this card/.git"), text);
  const result = check("Result", { outcome: "done", summary: "ok", session: null, notice: [notice] }, "en");
  assert.equal(result.ok, true, JSON.stringify(result));
});
