/**
 * Part of `npm run benchmark` (also runs alone: `npm run build && tsx scripts/output-watch.ts`): what watching an
 * agent with a large output costs the hub when hub and worker share a process, as `serve` runs them. A real `serve`
 * (hub + local worker) in this process runs one agent that prints BENCH_OUTPUT_MB (default 100) MB of Claude Code
 * stream-json lines at about 20 MB/s, then its result line; measured: the event-loop delay of this process
 * (perf_hooks, 10 ms resolution) from the event's post to the run's end, the run's end state and the time it took.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { writeFileAtomic } from "../src/host/home.js";
import { startServe } from "../src/host/serve.js";
import { benchHome, call } from "./measure.js";

const mib = 1024 * 1024;

/** An executable printing like `claude -p --output-format stream-json`: init, `mb` MiB of assistant lines, result. */
function printer(dir: string, mb: number): string {
  const file = join(dir, "claude");
  const init = JSON.stringify({ type: "system", subtype: "init", session_id: "bench", tools: [] });
  const result = JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "Done: printed a lot", session_id: "bench", usage: { input_tokens: 1, output_tokens: 1 } });
  writeFileSync(file, `#!/usr/bin/env node
const fs = require("fs");
fs.writeSync(1, ${JSON.stringify(init + "\n")});
const line = JSON.stringify({ type: "assistant", message: { content: [{ type: "text", text: "x".repeat(960) }] } }) + "\\n";
const chunk = Buffer.from(line.repeat(Math.floor(${mib} / line.length)));
let left = ${mb};
const tick = () => {
  if (left-- > 0) { fs.writeSync(1, chunk); setTimeout(tick, 50); }
  else fs.writeSync(1, ${JSON.stringify(result + "\n")});
};
tick();
`);
  chmodSync(file, 0o755);
  return file;
}

/** Measures and reports through `say` (label, value). */
export async function measureOutputWatch(say: (label: string, value: string) => void, mb = Number(process.env.BENCH_OUTPUT_MB ?? 100)): Promise<void> {
  const { dir, home, keys } = benchHome("aa-bench-out-");
  // The agent works in a folder of its own: the worker refuses a cwd inside its home, which the sandbox hides.
  const work = mkdtempSync(join(tmpdir(), "aa-bench-out-work-"));
  try {
    writeFileSync(home.rules, JSON.stringify({
      timezone: "UTC", sources: { bench: {} }, agents: { big: { worker: "w", use: "claude", program: printer(work, mb) } }, channels: {},
      rules: [{ name: "print", when: { source: "bench", types: ["print.*"] }, to: "big", cwd: work }],
    }));
    writeFileAtomic(home.config, JSON.stringify({ listen: "127.0.0.1:0", publicUrl: null, owner: keys.owner, worker: { name: "w", key: keys.worker, capacity: 1 }, channels: {} }));
    const running = await startServe(home, { lang: "en", log: () => {} });
    try {
      const delay = monitorEventLoopDelay({ resolution: 10 });
      const t0 = performance.now();
      delay.enable();
      await call(running.url, keys.source, "POST", "/v1/events", { id: "p1", type: "print.it" });
      let run: { state: string; error: string | null } | undefined;
      for (;;) {
        run = (await call(running.url, keys.owner, "GET", "/v1/state")).runs[0];
        if (run && ["done", "nothing", "waiting", "failed", "cancelled"].includes(run.state)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      delay.disable();
      const ms = (ns: number) => (ns / 1e6).toFixed(0);
      say(`hub event-loop delay while an agent prints ${mb} MB, p50 / p99 / max`, `${ms(delay.percentile(50))} / ${ms(delay.percentile(99))} / ${ms(delay.max)} ms`);
      say(`that run's end (${mb} MB of stream-json, then the result line)`, `${run.state}${run.error ? ` (${run.error})` : ""} after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } finally {
      await running.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  await measureOutputWatch((k, v) => console.log(`${k.padEnd(58)} ${v}`));
}
