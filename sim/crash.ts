/**
 * `npm run sim:crash -- <n> <seed>`: n real SIGKILLs of a real hub process under HTTP load, on a real SQLite file
 * (WAL + synchronous=FULL). After each kill: the database passes `PRAGMA integrity_check`, the projection equals a
 * replay of the log, the restarted hub still knows every event it acknowledged (sending it again answers
 * `duplicate: true` with the same number), and nothing unacknowledged is half-applied. It tests the process
 * dying, not the whole machine losing power.
 */
import { mkdtempSync, rmSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { homePaths, newKey, readMasterKey, writeFileAtomic } from "../src/host/home.js";
import { registerKeysLocally } from "../src/host/serve.js";
import { Store } from "../src/host/store.js";
import { rng, replayDiff } from "./simulation.js";
import { spawnHub } from "./hub-process.js";

export interface CrashReport { kills: number; acknowledged: number; checkedAgain: number }

/**
 * Runs `kills` crash cycles. @throws Error naming the cycle and what was lost or broken.
 */
export async function crash(kills: number, seed: number, log: (s: string) => void = () => {}): Promise<CrashReport> {
  const r = rng(seed);
  const dir = mkdtempSync(join(tmpdir(), "aa-crash-"));
  const home = homePaths(dir);
  mkdirSync(home.dir, { recursive: true });
  const master = readMasterKey(home, true);
  const source = newKey();
  registerKeysLocally(home, [{ kind: "source", name: "shop", key: source }, { kind: "owner", name: "owner", key: newKey() }], "en");
  writeFileSync(home.rules, JSON.stringify({
    timezone: "UTC", sources: { shop: {} }, agents: { a: { worker: "w", use: "command", command: ["true"] } },
    rules: [{ name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "a", parallel: 4 }],
  }));
  writeFileAtomic(home.config, JSON.stringify({ listen: "127.0.0.1:0", publicUrl: null, owner: "unused", worker: null, channels: {} }));
  const acked = new Map<string, number>();
  let n = 0;
  let checkedAgain = 0;
  try {
    for (let k = 0; k < kills; k++) {
      const { child, url } = await spawnHub(dir);
      const exited = new Promise((res) => child.once("exit", res));
      // Every acknowledged event of earlier cycles is still known, with the same number.
      const sample = [...acked].filter(() => r() < Math.min(1, 50 / Math.max(1, acked.size)));
      for (const [id, num] of sample) {
        const res = await fetch(`${url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${source}`, "content-type": "application/json" }, body: JSON.stringify({ id, type: "alert.x", subject: `#${id.length % 7}` }) });
        const body = (await res.json()) as { event: number; duplicate: boolean };
        if (!body.duplicate || body.event !== num) throw new Error(`cycle ${k}: acknowledged event ${id} (#${num}) came back as ${JSON.stringify(body)}`);
        checkedAgain++;
      }
      // Load: 8 clients post new events until the hub is killed at a random moment.
      let stop = false;
      const client = async () => {
        while (!stop) {
          const id = `e${seed}-${n++}`;
          try {
            const res = await fetch(`${url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${source}`, "content-type": "application/json" }, body: JSON.stringify({ id, type: "alert.x", subject: `#${id.length % 7}` }) });
            const body = (await res.json()) as { event: number; duplicate: boolean };
            if (res.ok) acked.set(id, body.event);
          } catch {
            return; // the hub is gone: this request was never acknowledged
          }
        }
      };
      const clients = Array.from({ length: 8 }, client);
      await new Promise((res) => setTimeout(res, 20 + Math.floor(r() * 300)));
      child.kill("SIGKILL");
      await exited;
      stop = true;
      await Promise.all(clients);
      // The file as the kill left it: intact, and its projection equal to a replay of its log.
      const raw = new Database(home.database);
      const integrity = (raw.pragma("integrity_check") as { integrity_check: string }[])[0]!.integrity_check;
      raw.close();
      if (integrity !== "ok") throw new Error(`cycle ${k}: integrity_check said ${integrity}`);
      const store = new Store({ path: home.database, master });
      try {
        const diff = replayDiff(store);
        if (diff) throw new Error(`cycle ${k}: the projection's ${diff} differs from a replay of the log`);
      } finally {
        store.close();
      }
      log(`cycle ${k + 1}/${kills}: ${acked.size} events acknowledged so far`);
    }
    // A last start: every event acknowledged in any cycle is there, with its number.
    const { child, url } = await spawnHub(dir);
    try {
      for (const [id, num] of acked) {
        const res = await fetch(`${url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${source}`, "content-type": "application/json" }, body: JSON.stringify({ id, type: "alert.x" }) });
        const body = (await res.json()) as { event: number; duplicate: boolean };
        if (!body.duplicate || body.event !== num) throw new Error(`after all cycles: acknowledged event ${id} (#${num}) came back as ${JSON.stringify(body)}`);
        checkedAgain++;
      }
    } finally {
      child.kill("SIGKILL");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { kills, acknowledged: acked.size, checkedAgain };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kills = Number(process.argv[2] ?? 10);
  const seed = Number(process.argv[3] ?? 12648430);
  const t0 = performance.now();
  crash(kills, seed, (s) => process.stderr.write(s + "\r"))
    .then((rep) => console.log(`\n${rep.kills} SIGKILLs, ${rep.acknowledged} events acknowledged, ${rep.checkedAgain} re-sent after restarts and all found; integrity and replay held; ${((performance.now() - t0) / 1000).toFixed(1)} s`))
    .catch((e: Error) => {
      console.error(`\n${e.message}`);
      process.exit(1);
    });
}
