/**
 * What the sandbox tests share: a hub and its worker for one test, the process variables a test sets (the hub's and
 * the worker's environment), folders and other things to remove after it — registered once per test file by
 * `sandboxKit()`, whose `afterEach` stops the workers, closes the hub, runs the clean-ups, puts the variables back
 * and removes the folders.
 */
import { afterEach } from "node:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { baseRules, hubFixture, type Fixture } from "./helpers.js";
import { Worker } from "../src/worker/worker.js";
import type { Home } from "../src/common/paths.js";

/** One test file's kit (see the module). */
export interface SandboxKit {
  /** Folders removed after each test. */
  removed: string[];
  /** The test's workers (stopped after it); a helper that starts its own pushes them here. */
  workers: Worker[];
  /** Run after each test (last added first), after the workers stop and the hub closes, before the folders go. */
  cleanups: (() => unknown)[];
  /** Sets variables of this process for one test (put back after it). */
  setEnv(vars: Record<string, string>): void;
  /** Keeps `fx` as the test's hub (closed after it). */
  hub(fx: Fixture): Fixture;
  /** Starts worker "w1" of `fx` (capacity 1, English, the fixture's home unless `home`). */
  worker(fx: Fixture, o?: { home?: Home; capacity?: number }): Worker;
  /** Stops the workers and closes the hub now (a test that makes several in turn). */
  end(): Promise<void>;
  /** A hub whose rule "alerts" runs `agent` (a rules.json agent entry) in `cwd`, and a worker for it. */
  setup(agent: Record<string, unknown>, cwd: string): Promise<Fixture>;
}

/** The kit of one test file; call it once at the file's top. */
/**
 * The quarantines of the workers the kits started, newest first: where their checks after runs moved what a run planted
 * (`<home.worker>/planted`, planted.ts `AsideTo`; issue 26 round 29, F29a-1). steering-helpers.ts `asideOf` looks there.
 */
export const quarantines: string[] = [];

/** What the kits' workers logged (the last `workerLogMax` lines), for a failure's message. */
export const workerLog: string[] = [];
const workerLogMax = 200;
/** The kits' workers' log so far, its last lines, as one text. */
export function workerLogText(): string {
  return workerLog.slice(-workerLogMax).join("\n");
}

export function sandboxKit(): SandboxKit {
  let f: Fixture | null = null;
  const workers: Worker[] = [];
  const saved: Record<string, string | undefined> = {};
  const kit: SandboxKit = {
    removed: [],
    workers,
    cleanups: [],
    setEnv(vars) {
      for (const [name, value] of Object.entries(vars)) {
        if (!(name in saved)) saved[name] = process.env[name];
        process.env[name] = value;
      }
    },
    hub(fx) {
      f = fx;
      return fx;
    },
    worker(fx, o = {}) {
      const w = new Worker({ url: fx.url, key: fx.keys.worker, name: "w1", capacity: o.capacity ?? 1, home: o.home ?? fx.home, lang: "en", log: (line) => void (workerLog.push(line) > 5 * workerLogMax && workerLog.splice(0, workerLog.length - workerLogMax)) });
      quarantines.unshift(join((o.home ?? fx.home).worker, "planted"));
      workers.push(w);
      void w.run();
      return w;
    },
    async end() {
      for (const w of workers.splice(0)) w.stop();
      await f?.close();
      f = null;
    },
    async setup(agent, cwd) {
      const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", ...agent } }, rules: [{ ...baseRules.rules[0], cwd }] };
      const fx = kit.hub(await hubFixture(rules));
      kit.worker(fx);
      return fx;
    },
  };
  afterEach(async () => {
    await kit.end();
    for (const c of kit.cleanups.splice(0).reverse()) await c();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
      delete saved[k];
    }
    for (const p of kit.removed.splice(0)) rmSync(p, { recursive: true, force: true });
  });
  return kit;
}
