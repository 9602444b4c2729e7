/**
 * The hub's hot paths as instruction counts (issue 32): valgrind's callgrind counts the instructions a process runs,
 * which — unlike a time — do not move with the machine's load. scripts/instruction-probe.mjs runs one path `n` and
 * `2n` times on the same fixed set-up (`node --predictable`: one thread, fixed seeds); the difference over `n` is that
 * path's count per input, set-up, start and exit cancelled out. Seen here: two runs of the same path agree within about
 * 2 % (the JIT's and the collector's work is counted too).
 *
 * The counts depend on the set-up's size, so every run uses the same `instructionInputs` (the recorded counts in
 * scripts/instruction-counts.json are of it).
 *
 * `npx tsx scripts/instructions.ts` prints them (built dist/ first: `npm run build`).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Inputs of a path per probe run (and twice as many in the second run and in the set-up). */
export const instructionInputs = 50;

/** The paths counted, as the probe names them. */
export const instructionPaths = ["event", "claim", "result", "state"] as const;
export type InstructionPath = (typeof instructionPaths)[number];

const probe = fileURLToPath(new URL("./instruction-probe.mjs", import.meta.url));

/** Whether valgrind can be run here (Debian's `valgrind` package). */
export function valgrindPresent(): boolean {
  return spawnSync("valgrind", ["--version"], { encoding: "utf8" }).status === 0;
}

/** Instructions the probe ran for `path` done `count` times out of a set-up for `max` (callgrind's total `Ir`). */
async function totalInstructions(path: InstructionPath, count: number, max: number, dir: string): Promise<number> {
  const out = join(dir, `${path}-${count}.callgrind`);
  const child = spawn("valgrind", ["--tool=callgrind", `--callgrind-out-file=${out}`, process.execPath, "--predictable", probe, path, String(count), String(max)], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`instruction probe ${path} ${count}: exit ${code}: ${stderr}`);
  const summary = /^summary: (\d+)$/m.exec(readFileSync(out, "utf8"));
  if (!summary) throw new Error(`instruction probe ${path} ${count}: no summary in ${out}`);
  return Number(summary[1]);
}

/**
 * Instructions per input of each path in `paths`, counted as the module says, `n` inputs a run.
 * @throws Error when valgrind is missing or a probe fails (a count must never be made up)
 */
export async function instructionCounts(n = instructionInputs, paths: readonly InstructionPath[] = instructionPaths): Promise<Record<InstructionPath, number>> {
  if (!valgrindPresent()) throw new Error("valgrind is not installed (Debian: apt-get install valgrind)");
  const dir = mkdtempSync(join(tmpdir(), "aa-instructions-"));
  try {
    const out = {} as Record<InstructionPath, number>;
    for (const path of paths) {
      // The two runs at once: each is one thread under valgrind, and the machine has two cores.
      const [once, twice] = await Promise.all([totalInstructions(path, n, 2 * n, dir), totalInstructions(path, 2 * n, 2 * n, dir)]);
      out[path] = Math.round((twice - once) / n);
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(await instructionCounts()));
}
