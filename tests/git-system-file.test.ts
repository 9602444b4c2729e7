/**
 * Hostile round 47, F47a-3: the guard of what the owner's git reads took the system configuration for
 * `/etc/gitconfig` whenever that file was missing or empty, but a git installed elsewhere (`~/miniconda3/bin/git`)
 * reads `<its prefix>/etc/gitconfig`: an agent made that file and the owner's next `git status` ran its
 * `core.fsmonitor`. Each case runs a real git, behind a wrapper on PATH that gives it another system file (as a git
 * built with another prefix has) and, for the empty file, another exec path; each in a process of its own (the answer
 * is asked once per process).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engine, tempDir } from "./helpers.js";

/** What `defaultSystemFile()` answers in a new process whose PATH starts with `bin` (null: no wrapper, no git). */
function systemFileWith(bin: string | null): string {
  const code = `import { defaultSystemFile } from ${JSON.stringify(join(engine, "src", "worker", "git-config.ts"))}; console.log(defaultSystemFile());`;
  const path = bin === null ? "/nonexistent" : `${bin}:${process.env.PATH ?? ""}`;
  return execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { cwd: engine, env: { PATH: path, HOME: process.env.HOME ?? "/" } }).toString().trim();
}

test("issue 26 round 47, F47a-3 (reported case: git in a prefix whose etc/gitconfig is missing) and the kind (empty, present, no git): the system file is where that git reads it", () => {
  const git = execFileSync("sh", ["-c", "command -v git"]).toString().trim();
  const base = tempDir("aa-git-prefix-");
  try {
    const prefix = join(base, "miniconda3");
    const bin = join(base, "wrapper");
    mkdirSync(join(prefix, "etc"), { recursive: true });
    mkdirSync(bin);
    const file = join(prefix, "etc", "gitconfig");
    writeFileSync(join(bin, "git"), `#!/bin/sh\nGIT_CONFIG_SYSTEM=${file} GIT_EXEC_PATH=${join(prefix, "libexec", "git-core")} exec ${git} "$@"\n`);
    chmodSync(join(bin, "git"), 0o755);
    const seen: Record<string, string> = {};
    seen.missing = systemFileWith(bin);
    writeFileSync(file, "");
    seen.empty = systemFileWith(bin);
    writeFileSync(file, "[core]\n\tfsmonitor = false\n");
    seen.present = systemFileWith(bin);
    seen.noGit = systemFileWith(null);
    assert.deepEqual(seen, { missing: file, empty: file, present: file, noGit: "/etc/gitconfig" });
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
