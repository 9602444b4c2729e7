/**
 * `npm run benchmark` and `npm run history` end every process they started when they are interrupted (issue 33):
 * Ctrl-C (SIGINT to the job's process group), SIGTERM to npm alone (`kill`), and npm killed outright (the script's
 * job gone). Each run gets a temporary folder of its own as TMPDIR; a process it left behind is one whose environment
 * names that folder or whose working folder is inside it (Linux /proc). `npm run benchmark` builds first: its build is
 * incremental (tsconfig.build.json), so on the suite's freshly built tree it writes nothing. It runs its `idle` part, which
 * starts a hub at once: the whole benchmark first spawns 42 processes to time the CLI's start, and its hubs, scratch
 * folders and signal handling are the same in every part (scripts/benchmark.ts, sim/children.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { engine, until } from "./helpers.js";

/** The processes whose environment or working folder names `marker`, with their command lines. */
function processesOf(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    if (Number(pid) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      let cwd = "";
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        // a zombie or a process of another user
      }
      if (environ.includes(marker) || cwd.startsWith(marker)) {
        found.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()}`);
      }
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

type Interruption = "SIGINT to the job" | "SIGTERM to npm" | "SIGKILL to npm";

/**
 * Starts `npm run <script>` in a process group of its own, waits until one of its hubs runs, interrupts it, and
 * returns what is left running 15 s later (nothing, when it works) and whether its scratch folders are gone.
 */
async function interrupt(script: string, args: string[], how: Interruption): Promise<{ left: string[]; files: string[] }> {
  const marker = mkdtempSync(join(tmpdir(), "aa-interrupt-"));
  try {
    const npm = spawn("npm", ["run", script, "--", ...args], {
      cwd: engine, detached: true, stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, TMPDIR: marker, AGENT_AUTOLOOP_LANG: "en", BENCH_OUTPUT_MB: "5" },
    });
    let out = "";
    npm.stdout!.on("data", (d) => (out += d));
    npm.stderr!.on("data", (d) => (out += d));
    const exited = new Promise((r) => npm.once("exit", r));
    await until(() => processesOf(marker).some((p) => p.includes(" serve ")), 180_000, () => `a hub of npm run ${script} (output: ${out})`);
    if (how === "SIGINT to the job") process.kill(-npm.pid!, "SIGINT");
    else if (how === "SIGTERM to npm") npm.kill("SIGTERM");
    else npm.kill("SIGKILL");
    await exited;
    let left: string[] = [];
    try {
      await until(() => (left = processesOf(marker)).length === 0, 15_000);
    } catch {
      // reported below with what is left
    }
    for (const p of left) process.kill(Number(p.split(" ")[0]), "SIGKILL"); // never leave them to the next test
    const files = existsSync(marker) ? readdirSync(marker).filter((n) => n.startsWith("aa-")) : [];
    return { left, files };
  } finally {
    rmSync(marker, { recursive: true, force: true });
  }
}

for (const how of ["SIGINT to the job", "SIGTERM to npm", "SIGKILL to npm"] as const) {
  test(`npm run benchmark interrupted by ${how} leaves no process and no home behind`, { timeout: 240_000 }, async () => {
    const { left, files } = await interrupt("benchmark", ["idle"], how);
    assert.deepEqual(left, []);
    assert.deepEqual(files, []);
  });
}

test("npm run history interrupted by SIGTERM to npm leaves no process and no home behind", { timeout: 240_000 }, async () => {
  const { left, files } = await interrupt("history", ["200"], "SIGTERM to npm");
  assert.deepEqual(left, []);
  assert.deepEqual(files, []);
});
