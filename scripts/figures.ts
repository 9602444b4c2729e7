/**
 * The figures of `npm run benchmark -- --json` (issue 32, pinned): each entry
 * `{ name, value, unit, limit, limitUnit, ratio, goal, met }`, where `limit` is what this machine does at best,
 * measured in the same run by a small program of scripts/ (machine-limits.ts; null where the goal is absolute),
 * `ratio` = value / limit (null without a limit), `goal` the goal's text in issue 32's table and `met` whether the
 * numbers meet it. Kept apart from the measuring so that the shape is tested without measuring anything
 * (tests/benchmark-json.test.ts).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** One figure as the JSON array holds it. */
export interface Figure {
  name: string;
  value: number;
  unit: string;
  limit: number | null;
  limitUnit: string | null;
  ratio: number | null;
  goal: string;
  met: boolean;
}

/** How a figure is judged: its units, its goal's text and the test of its numbers. */
interface Goal {
  unit: string;
  limitUnit: string | null;
  goal: string;
  /** `scale`: how many times smaller the measured case was than the goal's (the `--quick` rebuild: 10). */
  met: (value: number, ratio: number | null, scale: number) => boolean;
}

/**
 * The instruction counts recorded as the regression guard (scripts/instruction-counts.json, measured by
 * scripts/instructions.ts): a path's count may grow at most 10 % over it — more than the ~2 % two runs differ by.
 */
const recordedInstructions = JSON.parse(readFileSync(fileURLToPath(new URL("./instruction-counts.json", import.meta.url)), "utf8")) as { counts: Record<string, number> };
const instructions = (path: string): Goal => {
  const recorded = recordedInstructions.counts[path];
  if (!(typeof recorded === "number" && recorded > 0)) throw new Error(`scripts/instruction-counts.json: no count for ${path}`);
  return { unit: "instructions", limitUnit: null, goal: `≤ 1.1 × ${recorded} (recorded in scripts/instruction-counts.json)`, met: (v) => v <= 1.1 * recorded };
};

/** A figure measured without a goal of its own in issue 32's table: met when the run behind it had no failure. */
const reportedGoal = "reported (issue 32 sets no figure; met: the run had no failed request)";
const reported = (unit: string): Goal => ({ unit, limitUnit: null, goal: reportedGoal, met: () => true });

/** Every figure, by name, in the order the array lists them. */
export const goals = {
  "idle-rss": { unit: "MB", limitUnit: "MB", goal: "≤ 60 MB", met: (v) => v <= 60 },
  "rss-1000-polls": { unit: "MB", limitUnit: "MB", goal: "≤ 80 MB", met: (v) => v <= 80 },
  start: { unit: "ms", limitUnit: "ms", goal: "≤ 1.6× bare Node in the same run", met: (_v, r) => r !== null && r <= 1.6 },
  "claim-median": { unit: "ms", limitUnit: "ms", goal: "≤ 0.3 ms", met: (v) => v <= 0.3 },
  "events-1-client": { unit: "events/s", limitUnit: "commits/s", goal: "≥ 60 % of the one-commit rate measured in the same run", met: (_v, r) => r !== null && r >= 0.6 },
  "events-32-clients": { unit: "events/s", limitUnit: "rows/s", goal: "≥ 10k/s by group commit, each answer still after its commit", met: (v) => v >= 10_000 },
  "rebuild-1.1m-seconds": { unit: "s", limitUnit: "s", goal: "≤ 15 s", met: (v, _r, scale) => v * scale <= 15 },
  "rebuild-1.1m-rss": { unit: "MB", limitUnit: "MB", goal: "≤ 150 MB", met: (v) => v <= 150 },
  "tool-call-bridge": { unit: "ms", limitUnit: "ms", goal: "≤ 1.2× sandboxed, through the bridge", met: (_v, r) => r !== null && r <= 1.2 },
  "sim-steps": { unit: "steps/s", limitUnit: null, goal: "≥ 5k", met: (v) => v >= 5000 },
  "capacity-claim-p99": reported("ms"),
  "capacity-claim-p50": reported("ms"),
  "capacity-event-p50": reported("ms"),
  "capacity-event-p99": reported("ms"),
  "capacity-result-p50": reported("ms"),
  "capacity-result-p99": reported("ms"),
  "capacity-runs-per-hour": reported("runs/h"),
  "capacity-hub-cpu": reported("% of a core"),
  "capacity-hub-rss": reported("MB"),
  "metrics-scrape": reported("ms"),
  "instructions-event": instructions("event"),
  "instructions-claim": instructions("claim"),
  "instructions-result": instructions("result"),
  "instructions-state": instructions("state"),
} satisfies Record<string, Goal>;

/** The name of a figure. */
export type FigureName = keyof typeof goals;
/** Every name, in order. */
export const figureNames = Object.keys(goals) as FigureName[];

/**
 * One figure from its measured numbers.
 * @param limit what the machine does at best in the same run, or null where the goal is absolute
 * @param o `scale` (see `Goal.met`); `failed`: the run behind a reported figure had failures (it is then not met)
 * @throws Error when a number is not finite (a measurement went wrong and must not pass as a figure)
 */
export function figure(name: FigureName, value: number, limit: number | null, o: { scale?: number; failed?: boolean } = {}): Figure {
  const g: Goal = goals[name];
  if (!Number.isFinite(value) || (limit !== null && !(Number.isFinite(limit) && limit > 0))) throw new Error(`${name}: value ${value}, limit ${limit}`);
  // The ratio of the numbers as printed, so that a reader who divides them gets it.
  const v = round(value);
  const l = limit === null ? null : round(limit);
  const ratio = l === null ? null : round(v / l);
  return { name, value: v, unit: g.unit, limit: l, limitUnit: l === null ? null : g.limitUnit, ratio, goal: g.goal, met: g.met(v, ratio, o.scale ?? 1) && !o.failed };
}

/** Four significant digits at most: what the figures can tell apart on a shared machine. */
const round = (x: number) => Number(x.toPrecision(4));

/**
 * What is wrong with an array printed as the benchmark's JSON (empty: nothing): each entry must have exactly the eight
 * fields with their types, `ratio` = value / limit, and `met` the goal's test of the numbers.
 */
export function figureProblems(parsed: unknown, scale = 1): string[] {
  if (!Array.isArray(parsed)) return ["not an array"];
  const problems: string[] = [];
  const fields = ["name", "value", "unit", "limit", "limitUnit", "ratio", "goal", "met"];
  for (const [i, e] of (parsed as Record<string, unknown>[]).entries()) {
    const at = `[${i}] ${String(e?.name)}`;
    if (JSON.stringify(Object.keys(e ?? {})) !== JSON.stringify(fields)) problems.push(`${at}: fields ${Object.keys(e ?? {}).join(",")}`);
    const g = (goals as Record<string, Goal>)[String(e.name)];
    if (!g) { problems.push(`${at}: unknown name`); continue; }
    if (typeof e.value !== "number" || e.unit !== g.unit || e.goal !== g.goal || typeof e.met !== "boolean") problems.push(`${at}: value, unit, goal or met`);
    // A reported figure is met when its run had no failure, which the numbers do not show; the others are recomputed.
    else if (g.goal !== reportedGoal && e.met !== g.met(e.value, e.ratio as number | null, scale)) problems.push(`${at}: met is not the goal's test`);
    if (e.limit === null ? e.limitUnit !== null || e.ratio !== null : typeof e.limit !== "number" || e.limitUnit !== g.limitUnit || e.ratio !== round((e.value as number) / e.limit)) {
      problems.push(`${at}: limit, limitUnit or ratio`);
    }
  }
  return problems;
}
