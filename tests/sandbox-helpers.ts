/**
 * What the agent sandbox tests (agent-sandbox-writes, sandbox-tmp) share: runs whose sandboxed launch the worker
 * refuses before anything starts, each with the reason it gives.
 */
import type { Home } from "../src/host/home.js";
import { Worker } from "../src/worker/worker.js";
import { until, type Fixture } from "./helpers.js";

/**
 * Starts worker `w1` (capacity 1, its own `home`: as on another computer, so its path is known before the rules are)
 * on hub `fx`, kept in `workers` for the test to stop; posts one event per rule id (source shop, type `<id>.x`, the
 * rule of that name takes it) and waits until every run is back waiting, refused. @returns each rule's run error.
 */
export async function refusedRuns(fx: Fixture, ids: readonly string[], home: Home, workers: Worker[]): Promise<Record<string, string | null | undefined>> {
  const w = new Worker({ url: fx.url, key: fx.keys.worker, name: "w1", capacity: 1, home, lang: "en" });
  workers.push(w);
  void w.run();
  for (const id of ids) await fx.call("POST", "/v1/events", fx.keys.source, { id, type: `${id}.x` });
  let last: Awaited<ReturnType<Fixture["state"]>> | null = null;
  const st = await until(async () => {
    const s = last = await fx.state();
    return s.runs.length === ids.length && s.runs.every((r) => r.state === "waiting") && s;
  }, 60_000, () => `every run refused (not refused: ${last?.runs.filter((r) => r.state !== "waiting").map((r) => `${r.rule} ${r.state}`).join(", ") || "none"})`);
  return Object.fromEntries(st.runs.map((r) => [r.rule, r.error]));
}
