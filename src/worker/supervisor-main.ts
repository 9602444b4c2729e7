/**
 * The supervisor of one agent process (protocol.md 结构与实测: each run is supervised so its output and exit code
 * survive a worker restart). Started detached by the worker with the run folder as its only argument; reads
 * `spec.json` ({argv, cwd, env}), starts the agent in its own process group with stdout and stderr going to
 * files, writes `pid.json` ({supervisor, pgid}) and, when the agent exits, `exit.json` ({code, signal}).
 */
import { spawn } from "node:child_process";
import { openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileDurable } from "./files.js";

const dir = process.argv[2];
if (!dir) {
  process.stderr.write("usage: supervisor-main <run folder>\n");
  process.exit(2);
}
const spec = JSON.parse(readFileSync(join(dir, "spec.json"), "utf8")) as { argv: string[]; cwd: string; env: Record<string, string> };

function writeJson(name: string, value: unknown): void {
  writeFileDurable(join(dir!, name), JSON.stringify(value));
}

// The worker stops the agent's process group, not this one; stay alive to record the exit.
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => {});

const out = openSync(join(dir, "stdout"), "a", 0o600);
const err = openSync(join(dir, "stderr"), "a", 0o600);
let child;
try {
  child = spawn(spec.argv[0]!, spec.argv.slice(1), { cwd: spec.cwd, env: spec.env, stdio: ["ignore", out, err], detached: true });
} catch (e) {
  writeJson("exit.json", { code: 127, signal: null, error: (e as Error).message });
  process.exit(0);
}
child.on("error", (e) => {
  writeJson("exit.json", { code: 127, signal: null, error: e.message });
  process.exit(0);
});
if (child.pid !== undefined) writeJson("pid.json", { supervisor: process.pid, pgid: child.pid });
child.on("exit", (code, signal) => {
  writeJson("exit.json", { code, signal, error: null });
  process.exit(0);
});
