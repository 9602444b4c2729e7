/**
 * Part of `npm run benchmark` (alone: `npm run benchmark -- plugins`): what declarative plugins cost a hub (issue 18).
 * A home with BENCH_PLUGINS (default 100) plugins of 20 assets each (5 HTTP tools with their own parameters, 5 panels
 * using every UI node type, 5 cards, 5 prompts) served by a real hub process; measured: its start (which loads them
 * all) and RSS, a `POST /v1/plugins/reload` after every plugin changed (all read again) and one with nothing changed,
 * the RSS after, and GET /v1/health latency while a full reload runs (how long a reload holds other requests up; the
 * loader yields every `reloadSliceMaxMs`).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../src/host/home.js";
import { spawnHub } from "../sim/hub-process.js";
import { benchHome, call, healthMs, median, pct, statusMb, stopHub } from "./measure.js";
import { reloadSliceMaxMs } from "../src/declarative/limits.js";

const example = join(import.meta.dirname, "..", "examples", "declarative-plugins", "example");

/** Writes `count` plugins of 20 assets into `plugins`, each plugin.json with `version`. */
function writePlugins(plugins: string, count: number, version: string): void {
  const tool = JSON.parse(readFileSync(join(example, "tools", "http_fetch.json"), "utf8"));
  const panel = JSON.parse(readFileSync(join(example, "panels", "main.json"), "utf8"));
  const names = ["a0", "a1", "a2", "a3", "a4"];
  for (let i = 0; i < count; i++) {
    const d = join(plugins, `p${i}`);
    for (const k of ["tools", "panels", "cards", "prompts"]) mkdirSync(join(d, k), { recursive: true });
    writeFileSync(join(d, "plugin.json"), JSON.stringify({
      id: `p${i}`, name: `Plugin ${i}`, version, apiVersion: "1.0", requires: { network: ["127.0.0.1"] },
      provides: { tools: names, panels: names, cards: names, prompts: names },
    }));
    for (const n of names) {
      const parameters = { type: "object", properties: { url: { type: "string" }, [`${n}_${i}`]: { type: "integer", minimum: i } }, required: ["url"] };
      writeFileSync(join(d, "tools", `${n}.json`), JSON.stringify({ ...tool, $schema: undefined, name: n, parameters }));
      writeFileSync(join(d, "panels", `${n}.json`), JSON.stringify({ ...panel, $schema: undefined, id: n }));
      writeFileSync(join(d, "cards", `${n}.json`), JSON.stringify({ kind: n, data: panel.body }));
      writeFileSync(join(d, "prompts", `${n}.md`), `Prompt ${n} of plugin ${i}.\n`.repeat(20));
    }
  }
}

/** Measures and reports each figure through `say`. */
export async function measurePluginReload(say: (what: string, value: string) => void): Promise<void> {
  const count = Number(process.env.BENCH_PLUGINS ?? 100);
  const { dir, home, keys } = benchHome("aa-bench-plugins-");
  const owner = keys.owner;
  writeFileSync(home.rules, JSON.stringify({ sources: {}, agents: {}, channels: {}, rules: [] }));
  writeFileAtomic(home.config, JSON.stringify({ listen: "127.0.0.1:0", publicUrl: null, owner, worker: null, channels: {} }));
  writePlugins(home.plugins, count, "1.0.0");
  const hub = await spawnHub(dir);
  try {
    const listed = await call(hub.url, owner, "GET", "/v1/plugins");
    const loaded = (listed as { kind: string; status: string }[]).filter((p) => p.kind === "declarative" && p.status === "loaded").length;
    say(`hub start with ${count} plugins × 20 assets (all loaded: ${loaded === count})`, `${hub.startMs.toFixed(0)} ms`);
    await new Promise((r) => setTimeout(r, 1500));
    say("RSS after start", `${statusMb(hub.child.pid!).toFixed(1)} MB`);
    writePlugins(home.plugins, count, "2.0.0");
    // GET /v1/health without pause while the reload runs: how long other requests wait.
    let reloading = true;
    const health: number[] = [];
    const probe = (async () => {
      while (reloading) health.push(await healthMs(hub.url));
    })();
    const t0 = performance.now();
    const report = await call(hub.url, owner, "POST", "/v1/plugins/reload");
    const full = performance.now() - t0;
    reloading = false;
    await probe;
    say(`POST /v1/plugins/reload, every plugin changed (replaced: ${report.replaced.length})`, `${full.toFixed(0)} ms`);
    say(`GET /v1/health during it: n / p50 / max (slice ${reloadSliceMaxMs} ms)`, `${health.length} / ${median(health).toFixed(1)} / ${Math.max(...health).toFixed(1)} ms`);
    const unchanged: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await call(hub.url, owner, "POST", "/v1/plugins/reload");
      unchanged.push(performance.now() - t);
    }
    say("POST /v1/plugins/reload, nothing changed (median of 5)", `${median(unchanged).toFixed(0)} ms (p80 ${pct(unchanged, 0.8).toFixed(0)})`);
    say("RSS after the reloads", `${statusMb(hub.child.pid!).toFixed(1)} MB`);
  } finally {
    await stopHub(hub);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await measurePluginReload((k, v) => console.log(`${k.padEnd(58)} ${v}`));
