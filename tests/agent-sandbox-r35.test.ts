/**
 * Issue 26 hostile round 35 (the agent sandbox): F35a-3 (the run left `.gitattributes` and `tools/.gitignore` as FIFOs:
 * the owner's `git status`, `diff`, `add` and `commit` waited on them until killed, and no card said so) and F35a-2
 * (a file the guard keeps read-only was written through a second name the agent had made for it, a hard link). The
 * guard and the check after a run called directly, as in agent-sandbox-r30.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { linkSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { owner, ownerRepo, removed, sandboxed } from "./steering-helpers.js";
import { tempDir, untilLatestRun } from "./helpers.js";
import { sandboxKit } from "./sandbox-kit.js";
import { hardLinked } from "../src/worker/hard-links.js";
import { executableParts } from "../src/worker/steering.js";
import { plantedSteering } from "../src/worker/planted.js";

const kit = sandboxKit();
const guardedOf = (parts: ReturnType<typeof executableParts>) => new Set([...parts.mountPoints, ...parts.readOnlyParents, ...parts.readOnly]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("issue 26 r35 F35a-3 (reported case: .gitattributes and tools/.gitignore made FIFOs, the owner's git status held): a FIFO made during the run is moved aside and named; one of the owner's from before stays", async () => {
  const repo = ownerRepo();
  execFileSync("mkfifo", [join(repo, "owner.fifo")]);
  await sleep(1_100); // past the kernel clock's slack: older than the launch
  const sinceMs = Date.now();
  const parts = executableParts(repo, true, false);
  execFileSync("mkfifo", [join(repo, ".gitattributes")]);
  mkdirSync(join(repo, "tools"));
  execFileSync("mkfifo", [join(repo, "tools", ".gitignore")]);
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 35, { sinceMs });
  assert.deepEqual(planted.map((p) => [p.path, p.kind]).sort(), [[join(repo, ".gitattributes"), "moved"], [join(repo, "tools", ".gitignore"), "moved"]]);
  assert.equal(lstatSync(join(repo, "owner.fifo")).isFIFO(), true);
  // The owner's git, with a deadline: it would wait on a FIFO left there.
  execFileSync("git", ["status", "--short"], { cwd: repo, timeout: 10_000 });
});

test("issue 26 r35 F35a-2 (reported case: .mcp.json and its second name docs-cache.json, made by one run; the owner moved .mcp.json back from the quarantine, and the next run wrote it through the other name): a launch whose read-only files have another name is refused, naming the file and how to find the others", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepo();
  writeFileSync(join(repo, ".mcp.json"), '{"mcpServers":{}}\n');
  linkSync(join(repo, ".mcp.json"), join(repo, "docs-cache.json"));
  const fx = await kit.setup({ use: "command", command: ["sh", "-c", `printf '{"mcpServers":{"x":{"command":"sh"}}}' > docs-cache.json; echo "Done: wrote"`] }, repo);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const st = await untilLatestRun(fx, "waiting", 30_000);
  assert.equal(st.runs[0].error, `${join(repo, ".mcp.json")} has 2 names (hard links): the sandbox keeps it read-only for agent bot, but another name of it in a folder the agent writes would let the agent change it, so the launch is refused; find its other names with find ${repo} -samefile ${join(repo, ".mcp.json")}, look at them and remove them, or make the file a copy of its own (cp --remove-destination)`);
  assert.equal(readFileSync(join(repo, ".mcp.json"), "utf8"), '{"mcpServers":{}}\n', "nothing ran");
  assert.equal(readFileSync(join(repo, "docs-cache.json"), "utf8"), '{"mcpServers":{}}\n');
});

test("hardLinked: a file with another name, in the paths or in their folders at any depth; links and one-name files are not", () => {
  const dir = tempDir("aa-hardlinks-");
  removed.push(dir);
  mkdirSync(join(dir, "hooks", "deep"), { recursive: true });
  writeFileSync(join(dir, "hooks", "deep", "pre-commit"), "#!/bin/sh\n");
  writeFileSync(join(dir, "one"), "");
  symlinkSync("one", join(dir, "link"));
  assert.equal(hardLinked([join(dir, "one"), join(dir, "link"), join(dir, "hooks"), join(dir, "missing")]), null);
  // pnpm's way: a package file in node_modules is a hard link of the store.
  mkdirSync(join(dir, "node_modules", "lefthook", "bin"), { recursive: true });
  writeFileSync(join(dir, "store-lefthook"), "");
  linkSync(join(dir, "store-lefthook"), join(dir, "node_modules", "lefthook", "bin", "lefthook"));
  assert.equal(hardLinked([join(dir, "node_modules", "lefthook", "bin", "lefthook"), join(dir, "node_modules")]), null);
  linkSync(join(dir, "hooks", "deep", "pre-commit"), join(dir, "elsewhere"));
  assert.deepEqual(hardLinked([join(dir, "one"), join(dir, "hooks")]), { file: join(dir, "hooks", "deep", "pre-commit"), links: 2 });
});

test("issue 26 r35 F35a-1 (reported cases: a rule's cwd app/tools while the top's .husky/pre-commit runs `sh tools/fmt.sh` and .pre-commit-config.yaml's entry is tools/fmt2.sh; a cwd lib/scripts while .git/hooks/pre-commit runs scripts/check.sh): what the hooks and hook managers of a repository holding the cwd run in it is read-only, as with the cwd at its top", () => {
  const app = ownerRepo();
  mkdirSync(join(app, "tools"));
  mkdirSync(join(app, ".husky"));
  for (const f of ["fmt.sh", "fmt2.sh", "other.sh"]) writeFileSync(join(app, "tools", f), "#!/bin/sh\necho ok\n", { mode: 0o755 });
  writeFileSync(join(app, ".husky", "pre-commit"), "npm test\nsh tools/fmt.sh\n");
  owner(app, {}, "config", "core.hooksPath", ".husky");
  writeFileSync(join(app, ".pre-commit-config.yaml"), "repos:\n- repo: local\n  hooks:\n  - id: fmt2\n    name: fmt2\n    entry: tools/fmt2.sh\n    language: script\n");
  const tools = executableParts(join(app, "tools"), true, false);
  assert.deepEqual(tools.readOnly.filter((p) => p.startsWith(join(app, "tools") + "/")).sort(), [join(app, "tools", "fmt.sh"), join(app, "tools", "fmt2.sh")]);
  const lib = ownerRepo();
  mkdirSync(join(lib, "scripts"));
  writeFileSync(join(lib, "scripts", "check.sh"), "#!/bin/sh\necho check\n", { mode: 0o755 });
  writeFileSync(join(lib, ".git", "hooks", "pre-commit"), "#!/bin/sh\nsh scripts/check.sh\n", { mode: 0o755 });
  const scripts = executableParts(join(lib, "scripts"), true, false);
  assert.deepEqual(scripts.readOnly.filter((p) => p.startsWith(join(lib, "scripts") + "/")), [join(lib, "scripts", "check.sh")]);
});
