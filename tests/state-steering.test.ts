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
import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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
