/**
 * Issue 26 hostile round 23. F23-1: the check after a run ran git outside the sandbox with the configuration of a
 * repository the agent made, and a promisor remote's lazy fetch of a missing `.gitattributes` blob ran the agent's
 * `remote.origin.uploadpack` as the hub's user (it read master.key). The kind: git run by the worker with any
 * configuration an agent could have written — every program a configuration can name (uploadpack, `core.sshCommand`,
 * `ext::` URLs, credential helpers, `core.fsmonitor`). F23-3: the launch guard bound read-only the real paths of an
 * agent-made git folder's links (`.git/info -> /proc`) and of a gitfile's `gitdir:` (another repository's `config`),
 * mounted over the sandbox's hiding: the next run saw the host's /proc and the other repository's credentials.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, realpathSync, utimesSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { leakFolder, owner, ownerRepo, removed, runAgent, sandboxed } from "./steering-helpers.js";
import { tempDir, until } from "./helpers.js";
import { maskedChanges } from "../src/worker/index-stat.js";
import { gitlinks } from "../src/worker/git-read.js";

/**
 * A repository as the reported agent made it: `a.txt` changed behind an entry whose stat data still match (so the
 * check hashes it and asks git for its attributes), `.gitattributes` in the index naming an object that is not there,
 * and `config` lines that each make git start `leak`/`<name>`'s writer when it reads the index or fetches.
 */
function planted(leak: string, name: string, config: (run: string) => string): string {
  const repo = realpathSync(tempDir("aa-r23-repo-"));
  removed.push(repo);
  owner(repo, {}, "init", "-q");
  const old = new Date("2020-01-01T00:00:00Z");
  writeFileSync(join(repo, "a.txt"), "AAAA\n");
  utimesSync(join(repo, "a.txt"), old, old);
  owner(repo, {}, "add", "a.txt");
  writeFileSync(join(repo, "a.txt"), "BBBB\n");
  utimesSync(join(repo, "a.txt"), old, old);
  owner(repo, {}, "update-index", "--add", "--cacheinfo", `100644,${"1".repeat(40)},.gitattributes`);
  const run = `touch ${join(leak, name)}`;
  writeFileSync(join(repo, ".git", "config"), `[core]\n\trepositoryformatversion = 1\n\tbare = false\n${config(run)}`);
  return repo;
}

test("issue 26 r23 F23-1 (reported case and its kind): the check after a run reads an agent's repository with git, and no program its configuration names runs", () => {
  const leak = leakFolder();
  const promisor = (remote: string) => `[extensions]\n\tpartialClone = origin\n[remote "origin"]\n\tpromisor = true\n${remote}`;
  const repos: Record<string, string> = {
    uploadpack: planted(leak, "uploadpack", (run) => promisor(`\turl = /nonexistent-aa-origin\n\tuploadpack = "${run}; exit 1"\n`)),
    sshCommand: planted(leak, "sshCommand", (run) => `[core]\n\tsshCommand = "${run}; exit 1"\n${promisor("\turl = ssh://example.invalid/r.git\n")}`),
    ext: planted(leak, "ext", (run) => `[protocol "ext"]\n\tallow = always\n${promisor(`\turl = "ext::sh -c ${run.replaceAll(" ", "% ")}"\n`)}`),
    credential: planted(leak, "credential", (run) => `[credential]\n\thelper = "!${run}; echo"\n${promisor("\turl = https://127.0.0.1:9/r.git\n")}`),
    askPass: planted(leak, "askPass", (run) => `[core]\n\taskPass = "${run}"\n${promisor("\turl = https://127.0.0.1:9/r.git\n")}`),
    fsmonitor: planted(leak, "fsmonitor", (run) => `[core]\n\tfsmonitor = "${run}; echo"\n\tuntrackedCache = true\n`),
  };
  for (const [name, repo] of Object.entries(repos)) {
    const found = maskedChanges(join(repo, ".git"), repo, 0, { files: 100, bytes: 1_000_000 });
    // The attributes could not be read (the blob is missing, and nothing fetches it): the changed file is named.
    assert.deepEqual(found, { masked: [join(repo, "a.txt")], unhashed: [], cut: false }, name);
    assert.deepEqual(gitlinks(join(repo, ".git"), repo), { links: [], hidden: [] }, name);
  }
  assert.deepEqual(readdirSync(leak), []);
});

test("issue 26 r23 F23-1: a repository's own format, attributes and split index are still read without its configuration", () => {
  const repo = ownerRepo();
  writeFileSync(join(repo, ".git", "info", "attributes"), "*.bin filter=lfs\n");
  owner(repo, {}, "config", "core.splitIndex", "true");
  const old = new Date("2020-01-01T00:00:00Z");
  for (const f of ["a.bin", "b.txt"]) {
    writeFileSync(join(repo, f), "AAAA\n");
    utimesSync(join(repo, f), old, old);
  }
  owner(repo, {}, "add", "a.bin", "b.txt");
  owner(repo, {}, "update-index", "--split-index");
  assert.ok(readdirSync(join(repo, ".git")).some((n) => n.startsWith("sharedindex.")), "the index is split");
  for (const f of ["a.bin", "b.txt"]) {
    writeFileSync(join(repo, f), "BBBB\n");
    utimesSync(join(repo, f), old, old);
  }
  // a.bin goes through a filter (info/attributes): not checked; b.txt is named.
  assert.deepEqual(maskedChanges(join(repo, ".git"), repo, 0, { files: 100, bytes: 1_000_000 }), { masked: [join(repo, "b.txt")], unhashed: [], cut: false });

  const sha256 = realpathSync(tempDir("aa-r23-sha256-"));
  removed.push(sha256);
  owner(sha256, {}, "init", "-q", "--object-format=sha256");
  writeFileSync(join(sha256, "c.txt"), "AAAA\n");
  utimesSync(join(sha256, "c.txt"), old, old);
  owner(sha256, {}, "add", "c.txt");
  writeFileSync(join(sha256, "c.txt"), "BBBB\n");
  utimesSync(join(sha256, "c.txt"), old, old);
  assert.deepEqual(maskedChanges(join(sha256, ".git"), sha256, 0, { files: 100, bytes: 1_000_000 }), { masked: [join(sha256, "c.txt")], unhashed: [], cut: false });
  owner(sha256, {}, "update-index", "--assume-unchanged", "c.txt");
  assert.deepEqual(gitlinks(join(sha256, ".git"), sha256), { links: [], hidden: ["c.txt"] });
});

test("issue 26 r23 F23-3 (reported cases): links in a git folder the agent made and a gitfile's gitdir: are not bound into the next run — no host /proc, no other repository's config", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const cwd = realpathSync(tempDir("aa-r23-cwd-"));
  removed.push(cwd);
  const other = ownerRepo();
  owner(other, {}, "config", "remote.origin.url", "https://owner:secret-token-23@example.invalid/r.git");
  // Run 1 makes the cwd a repository whose .git/info leads to /proc, and b/ whose .git names the other repository;
  // run 2 says what it sees through them.
  const script = `
if [ -f planted ]; then
  { [ -e /proc/${process.pid}/cmdline ] && echo proc-seen || echo proc-hidden
    grep -q secret-token-23 ${join(other, ".git", "config")} 2>/dev/null && echo other-seen || echo other-hidden; } > seen.txt
else
  git init -q . && rm -rf .git/info && ln -s /proc .git/info && mkdir b && printf 'gitdir: %s\\n' ${join(other, ".git")} > b/.git && touch planted
fi
echo "Done: ok"`;
  const fx = await runAgent(script, cwd);
  assert.ok(existsSync(join(cwd, "planted")));
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e2", type: "alert.x" });
  await until(() => existsSync(join(cwd, "seen.txt")) && readFileSync(join(cwd, "seen.txt"), "utf8").includes("other-"), 30_000, "run 2 to say what it sees");
  assert.equal(readFileSync(join(cwd, "seen.txt"), "utf8"), "proc-hidden\nother-hidden\n");
});

test("issue 26 r25 F25a-3 (reported case: round 23's private git folder made in the shared /tmp, where an agent whose cwd was /tmp wrote core.fsmonitor into it): git's private folders are made in the folder given — the home's for a launch — never in the temporary folder", async () => {
  const { gitPrivateDir } = await import("../src/worker/git-isolated.js");
  const { tmpdir, homedir } = await import("node:os");
  const home = realpathSync(tempDir("aa-r25-home-"));
  const bin = realpathSync(tempDir("aa-r25-bin-"));
  const seen = join(bin, "seen.txt");
  removed.push(home, bin);
  assert.equal(gitPrivateDir(home), join(home, "worker", "git"));
  assert.equal(gitPrivateDir(), join(homedir(), ".agent-autoloop-git"));
  assert.ok(!gitPrivateDir().startsWith(tmpdir()));
  // A git on PATH that notes where its git folder is, then runs the real one.
  const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  writeFileSync(join(bin, "git"), `#!/bin/sh\necho "$GIT_DIR" >> ${seen}\nexec ${real} "$@"\n`, { mode: 0o755 });
  const repo = ownerRepo();
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  try {
    assert.deepEqual(gitlinks(join(repo, ".git"), repo, 10_000, gitPrivateDir(home)), { links: [], hidden: [] });
    writeFileSync(join(repo, "README.md"), "changed\n");
    maskedChanges(join(repo, ".git"), repo, 0, { files: 100, bytes: 1_000_000 }, gitPrivateDir(home));
  } finally {
    process.env.PATH = path;
  }
  const dirs = readFileSync(seen, "utf8").trim().split("\n").filter(Boolean);
  assert.ok(dirs.length >= 2, JSON.stringify(dirs));
  for (const d of dirs) assert.ok(d.startsWith(`${join(home, "worker", "git")}/read-`), d);
  assert.deepEqual(readdirSync(join(home, "worker", "git")), [], "each private folder removed after");
});

test("issue 26 r25 F25a-4 (reported case: a SessionStart hook planted in .qwen/settings.json ran at the owner's next qwen): Qwen Code's, iFlow's and Kilo Code's project parts are read-only like the other CLIs'", async () => {
  const { executableParts } = await import("../src/worker/steering.js");
  const repo = ownerRepo();
  writeFileSync(join(repo, "kilo.jsonc"), "{}\n");
  const parts = executableParts(repo, true);
  for (const d of [".qwen", ".iflow", ".kilocode", ".kilo", "kilo.jsonc"]) assert.ok(parts.readOnly.includes(join(repo, d)), d);
  assert.ok(existsSync(join(repo, ".qwen")), "made first, so no run creates it");
});
