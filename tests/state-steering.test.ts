/**
 * Which parts of an agent CLI's state folder the sandbox keeps read-only at their own place (issue 26 round 11, F4;
 * src/worker/state-steering.ts), on real folders: the declared parts, scripts at the top (links to them too), and the
 * top entries that hold a file the settings name as a command — Claude Code's `statusLine`, hook commands,
 * `apiKeyHelper`, an MCP server's `command`; Codex's `notify` and `mcp_servers` — written with `~`, `$HOME` or the
 * state's variable. A folder where one of them is a link is a skeleton: its entries bound at their places, links
 * made again, a declared link's target shown.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { commandPaths, stateView } from "../src/worker/state-steering.js";

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh home (real path) with `~/.claude` made. */
function home(): { home: string; state: string } {
  const h = realpathSync(tempDir("aa-steering-"));
  dirs.push(h);
  mkdirSync(join(h, ".claude"));
  return { home: h, state: join(h, ".claude") };
}

test("Claude Code: the entries holding the status line, hook, apiKeyHelper and MCP server scripts the settings name are read-only in place; data folders stay writable", () => {
  const { home: h, state } = home();
  for (const d of ["projects", "scripts", "bin", "mcp", "todos"]) mkdirSync(join(state, d));
  writeFileSync(join(state, "settings.json"), JSON.stringify({
    statusLine: { type: "command", command: "bash ~/.claude/statusline.sh --short" },
    hooks: { Stop: [{ hooks: [{ type: "command", command: "$HOME/.claude/scripts/stop.sh && echo done" }] }] },
    apiKeyHelper: "${CLAUDE_CONFIG_DIR}/bin/key.sh",
    permissions: { allow: ["Read(~/.claude/projects/**)"] },
  }));
  writeFileSync(join(h, ".claude.json"), JSON.stringify({ mcpServers: { x: { command: join(state, "mcp", "server.js"), args: [] } } }));
  writeFileSync(join(state, "statusline.sh"), "echo ok\n");
  const declared = [join(state, "settings.json"), join(h, ".claude.json"), join(state, "hooks") + "/"];
  const view = stateView(declared, [state], { HOME: h, CLAUDE_CONFIG_DIR: state });
  assert.deepEqual(view.skeletons, []);
  assert.deepEqual([...view.readOnly].sort(), [join(h, ".claude.json"), ...["bin", "hooks", "mcp", "scripts", "settings.json", "statusline.sh"].map((n) => join(state, n))].sort());
});

test("a steering part that is a link, or a script at the top that is one, makes the folder a skeleton: each entry in place, links made again, the declared link's target shown", () => {
  const { home: h, state } = home();
  mkdirSync(join(h, "dotfiles"));
  mkdirSync(join(state, "projects"));
  writeFileSync(join(h, "dotfiles", "settings.json"), "{}");
  writeFileSync(join(h, "dotfiles", "status.sh"), "echo ok\n");
  writeFileSync(join(state, "history.jsonl"), "");
  symlinkSync(join(h, "dotfiles", "settings.json"), join(state, "settings.json"));
  symlinkSync(join(h, "dotfiles", "status.sh"), join(state, "status.sh"));
  const view = stateView([join(state, "settings.json"), join(state, "CLAUDE.md")], [state], { HOME: h });
  assert.deepEqual(view.skeletons, [state]);
  assert.deepEqual(view.readOnly, [join(state, "CLAUDE.md")]);
  assert.deepEqual([...view.writable].sort(), [join(state, "history.jsonl"), join(state, "projects")]);
  assert.deepEqual([...view.links].sort(), [[join(state, "settings.json"), join(h, "dotfiles", "settings.json")], [join(state, "status.sh"), join(h, "dotfiles", "status.sh")]]);
  assert.deepEqual(view.targets, [join(h, "dotfiles", "settings.json")]);
});

test("Codex: config.toml's notify and an MCP server's command and args name the scripts to keep; other strings do not", () => {
  const { home: h } = home();
  const codex = join(h, ".codex");
  mkdirSync(codex);
  writeFileSync(join(codex, "config.toml"), [
    'model = "gpt-5.5"',
    `notify = ["sh", "${join(codex, "scripts", "notify.sh")}"]`,
    "[mcp_servers.docs]",
    "command = '~/.codex/mcp/run'",
    'args = ["--root", "$CODEX_HOME/data/x"]',
    `instructions = "${join(codex, "sessions", "not-a-command")}"`,
  ].join("\n"));
  assert.deepEqual(commandPaths(join(codex, "config.toml"), { HOME: h, CODEX_HOME: codex }), [
    join(codex, "scripts", "notify.sh"), join(codex, "mcp", "run"), join(codex, "data", "x"),
  ]);
});

test("issue 26 r12 F12-3: commands named in a multi-line args array, a dotted key, an inline table (Codex) and shell words with quoted variables (Claude Code) are found", () => {
  const { home: h, state } = home();
  const codex = join(h, ".codex");
  mkdirSync(codex);
  writeFileSync(join(codex, "config.toml"), [
    'model = "gpt-5"',
    `mcp_servers.helper2.command = "${join(codex, "tools", "helper")}"`,
    'mcp_servers.inline = { command = "node", args = ["${CODEX_HOME}/inline/server.mjs"] }',
    'profiles.fast.notify = ["~/.codex/notify/n.sh"]',
    "",
    "[mcp_servers.helper]",
    'command = "node"',
    "args = [",
    `  "${join(codex, "mcp", "server.mjs")}",`,
    "]",
    'instructions = "/not/a/command"',
  ].join("\n"));
  assert.deepEqual(commandPaths(join(codex, "config.toml"), { HOME: h, CODEX_HOME: codex }).sort(), [
    join(codex, "tools", "helper"), join(codex, "inline", "server.mjs"), join(codex, "notify", "n.sh"), join(codex, "mcp", "server.mjs"),
  ].sort());
  writeFileSync(join(state, "settings.json"), JSON.stringify({
    hooks: {
      Notification: [{ hooks: [{ type: "command", command: 'bash "$HOME"/.claude/scripts/notify.sh' }] }],
      Stop: [{ hooks: [{ type: "command", command: "cd /tmp && sh \"${HOME}\"'/.claude/my scripts/stop.sh' --flag=~/x; ~/.claude/a\\ b/c.sh" }] }],
    },
  }));
  assert.deepEqual(commandPaths(join(state, "settings.json"), { HOME: h }).filter((p) => p.startsWith(state)).sort(), [
    join(state, "scripts", "notify.sh"), join(state, "my scripts", "stop.sh"), join(state, "a b", "c.sh"),
  ].sort());
});

test("issue 26 r12 F12-3: with the CLI's writes listed, every other entry at the state's top is read-only; in a skeleton the listed folders are made first", () => {
  const { home: h, state } = home();
  for (const d of ["projects", "scripts", "tools", "sessions-old"]) mkdirSync(join(state, d));
  writeFileSync(join(state, "history.jsonl"), "");
  writeFileSync(join(state, "state_5.sqlite"), "");
  writeFileSync(join(state, "notes.txt"), "");
  const writes = ["projects/", "sessions/", "history.jsonl", "*.sqlite"];
  const view = stateView([join(state, "settings.json")], [state], { HOME: h }, writes);
  assert.deepEqual(view.skeletons, []);
  assert.deepEqual([...view.readOnly].sort(), ["notes.txt", "scripts", "sessions-old", "settings.json", "tools"].map((n) => join(state, n)));
  mkdirSync(join(h, "dotfiles"));
  writeFileSync(join(h, "dotfiles", "settings.json"), "{}");
  rmSync(join(state, "settings.json"));
  symlinkSync(join(h, "dotfiles", "settings.json"), join(state, "settings.json"));
  const skeleton = stateView([join(state, "settings.json")], [state], { HOME: h }, writes);
  assert.deepEqual(skeleton.skeletons, [state]);
  assert.deepEqual([...skeleton.writable].sort(), ["history.jsonl", "projects", "sessions", "state_5.sqlite"].map((n) => join(state, n)));
  assert.deepEqual([...skeleton.readOnly].sort(), ["notes.txt", "scripts", "sessions-old", "tools"].map((n) => join(state, n)));
});

test("issue 26 r12 F12-3: an entry the settings name a command in that is not there yet is made first (a folder, or an empty file) and read-only, so no run creates the script", () => {
  const { home: h, state } = home();
  mkdirSync(join(state, "projects"));
  writeFileSync(join(state, "settings.json"), JSON.stringify({
    hooks: { Stop: [{ hooks: [{ type: "command", command: '[ -x "$HOME/.claude/later/x.sh" ] && "$HOME/.claude/later/x.sh"; sh ~/.claude/top.sh' }] }] },
  }));
  const view = stateView([join(state, "settings.json")], [state], { HOME: h }, ["projects/"]);
  assert.deepEqual([...view.readOnly].sort(), ["later", "settings.json", "top.sh"].map((n) => join(state, n)));
  assert.equal(statSync(join(state, "later")).isDirectory(), true);
  assert.equal(readdirSync(join(state, "later")).length, 0);
  assert.equal(readFileSync(join(state, "top.sh"), "utf8"), "");
});

test("issue 26 r12 F12-4: the entries the CLI writes and runs in the same run are the run's own (tmpfs) — made first when missing, never bound or protected; one that is a link or a file makes the folder a skeleton, where it is neither bound nor made again", () => {
  const { home: h, state } = home();
  mkdirSync(join(state, "projects"));
  mkdirSync(join(state, "shell-snapshots"));
  writeFileSync(join(state, "shell-snapshots", "snapshot-bash-1-a.sh"), "alias ll='ls -l'\n");
  const writes = ["projects/", "shell-snapshots/", "session-env/"];
  const own = ["shell-snapshots/", "session-env/"];
  const view = stateView([join(state, "settings.json")], [state], { HOME: h }, writes, own);
  assert.deepEqual(view.skeletons, []);
  assert.deepEqual(view.privates, [join(state, "shell-snapshots"), join(state, "session-env")]);
  assert.deepEqual(view.readOnly, [join(state, "settings.json")]);
  assert.equal(statSync(join(state, "session-env")).isDirectory(), true, "made first");
  // Not among `writes`: the run's own still, not read-only (a tmpfs lies over it).
  assert.deepEqual(stateView([], [state], { HOME: h }, ["projects/"], own).readOnly, [join(state, "settings.json")]);
  // A link (a run replaced the folder before, or the owner's dotfiles) or a file: a skeleton, the entry a tmpfs in it.
  mkdirSync(join(h, "elsewhere"));
  rmSync(join(state, "session-env"), { recursive: true });
  symlinkSync(join(h, "elsewhere"), join(state, "session-env"));
  rmSync(join(state, "shell-snapshots"), { recursive: true });
  writeFileSync(join(state, "shell-snapshots"), "");
  const skeleton = stateView([join(state, "settings.json")], [state], { HOME: h }, writes, own);
  assert.deepEqual(skeleton.skeletons, [state]);
  assert.deepEqual(skeleton.privates, [join(state, "shell-snapshots"), join(state, "session-env")]);
  assert.deepEqual(skeleton.links, []);
  assert.deepEqual(skeleton.writable, [join(state, "projects")]);
  assert.deepEqual(skeleton.readOnly, [join(state, "settings.json")]);
});
