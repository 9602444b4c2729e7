/** `npm run sim -- <seed> <steps>`: runs the seeded simulation and prints what it did (sim/simulation.ts). */
import { simulate } from "./simulation.js";

const seed = Number(process.argv[2] ?? 24301);
const steps = Number(process.argv[3] ?? 200_000);
if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(steps) || steps < 1) {
  process.stderr.write("usage: npm run sim -- <seed> <steps>\n");
  process.exit(2);
}
const t0 = performance.now();
const report = simulate(seed, steps);
const s = (performance.now() - t0) / 1000;
console.log(`seed ${report.seed}: ${report.steps} steps, ${report.scenarios} scenarios, ${report.facts} facts, ${report.replays} replays equal to the live projection, ${report.deadlineFailures} failed ticks of broken deadlines (${report.deadlineCards} cards); ${s.toFixed(1)} s, ${Math.round(report.steps / s)} steps/s`);
