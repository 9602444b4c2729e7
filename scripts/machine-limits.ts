/**
 * What this machine can do at best, measured in the same run as the hub (issue 32: "the limits are measured by small
 * programs in scripts/, not copied numbers"). Each figure is the floor or ceiling of one of the benchmark's figures:
 * the same work done by bare Node with nothing of the hub, each in a child process of its own so that one measurement's
 * memory does not weigh on another. `npx tsx scripts/machine-limits.ts` prints them.
 *
 * - `start`: spawning `node` until its HTTP server listens (ms, median)
 * - `idleRss`: RSS of Node with better-sqlite3 open on a WAL file and an HTTP server listening (MB)
 * - `connectionKb`: RSS per held keep-alive HTTP request of a bare server (KB)
 * - `roundTripMs`: a bare HTTP round trip on a kept-alive connection, the answer a small JSON (ms, median)
 * - `commitsPerSecond`: one-row transactions, WAL + synchronous=FULL, one at a time (per second)
 * - `commitsPerSecondConcurrent`: the same row count written by 32 writers' worth of rows per transaction — the best a
 *   group commit can do (rows per second)
 * - `insertRowsPerSecond`: rows written by prepared statements in 8,192-row transactions (a rebuild's floor)
 * - `spawnMs`: spawning `node` on a file that answers one JSON line on stdin (a sync tool call's floor; ms, median)
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The figures, as `machineLimits()` returns them. */
export interface MachineLimits {
  start: number;
  idleRss: number;
  connectionKb: number;
  roundTripMs: number;
  commitsPerSecond: number;
  commitsPerSecondConcurrent: number;
  insertRowsPerSecond: number;
  spawnMs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const betterSqlite = fileURLToPath(import.meta.resolve("better-sqlite3"));

/** Runs `code` (an ES module) in a fresh `node` and returns what it printed on its last line, parsed as JSON. */
function inChild<T>(code: string, dir: string): T {
  const file = join(dir, `m-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, code);
  const r = spawnSync(process.execPath, [file], { encoding: "utf8", cwd: dir, timeout: 300_000 });
  if (r.status !== 0) throw new Error(`machine limit ${file} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as T;
}

/** Median ms from spawning `node` on a server script until it prints "listening". */
async function bareStart(dir: string, runs = 11): Promise<number> {
  const file = join(dir, "listen.mjs");
  writeFileSync(file, `import { createServer } from "node:http"; createServer().listen(0, "127.0.0.1", () => console.log("listening"));`);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const child = spawn(process.execPath, [file], { stdio: ["ignore", "pipe", "ignore"] });
    await new Promise<void>((resolve) => child.stdout!.on("data", (d: Buffer) => d.toString().includes("listening") && resolve()));
    times.push(performance.now() - t0);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
  }
  return median(times);
}

/** Median ms of spawning `node` on a script that reads one JSON line and answers one (a sync tool call's floor). */
async function bareSpawn(dir: string, runs = 11): Promise<number> {
  const file = join(dir, "tool.mjs");
  writeFileSync(file, `process.stdin.once("data", (d) => { const req = JSON.parse(d); process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result: { content: "hello" } }) + "\\n"); process.exit(0); });`);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const child = spawn(process.execPath, [file], { stdio: ["pipe", "pipe", "ignore"] });
    child.stdin!.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "greet", arguments: { name: "Ada" } } }) + "\n");
    await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
    await new Promise((r) => child.once("exit", r));
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** Measures every limit (about half a minute on 2 cores). */
export async function machineLimits(): Promise<MachineLimits> {
  const dir = mkdtempSync(join(tmpdir(), "aa-limits-"));
  try {
    const start = await bareStart(dir);
    const spawnMs = await bareSpawn(dir);
    const idleRss = inChild<number>(`
      import { createRequire } from "node:module"; import { createServer } from "node:http"; import { readFileSync } from "node:fs";
      const Database = createRequire(import.meta.url)(${JSON.stringify(betterSqlite)});
      const db = new Database("idle.db"); db.pragma("journal_mode = WAL"); db.pragma("synchronous = FULL");
      db.exec("CREATE TABLE IF NOT EXISTS t (a INTEGER PRIMARY KEY, b TEXT)"); db.prepare("SELECT * FROM t").all();
      const server = createServer((q, s) => s.end("ok")); await new Promise((r) => server.listen(0, "127.0.0.1", r));
      await new Promise((r) => setTimeout(r, 500));
      const rss = Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]) / 1024;
      server.close(); console.log(JSON.stringify(rss));`, dir);
    const connectionKb = inChild<number>(`
      import { createServer, request, Agent } from "node:http"; import { readFileSync } from "node:fs";
      const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]);
      const held = [];
      const server = createServer((q, s) => held.push(s)); await new Promise((r) => server.listen(0, "127.0.0.1", r));
      const port = server.address().port; const agent = new Agent({ keepAlive: true, maxSockets: 2000 });
      await new Promise((r) => setTimeout(r, 300)); const before = rss(); const n = 1000;
      for (let i = 0; i < n; i++) request({ port, host: "127.0.0.1", agent, path: "/v1/work?wait=50" }).on("error", () => {}).end();
      while (held.length < n) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 500));
      // The server's side only: the clients live in this process too, so half of the growth is theirs.
      console.log(JSON.stringify((rss() - before) / n / 2)); process.exit(0);`, dir);
    const roundTripMs = inChild<number>(`
      import { createServer, request, Agent } from "node:http";
      const server = createServer((q, s) => { s.setHeader("content-type", "application/json"); s.end('{"job":null,"cancel":[]}'); });
      await new Promise((r) => server.listen(0, "127.0.0.1", r)); const port = server.address().port;
      const agent = new Agent({ keepAlive: true, maxSockets: 1 }); const times = [];
      for (let i = 0; i < 2000; i++) {
        const t0 = performance.now();
        await new Promise((res) => request({ port, host: "127.0.0.1", agent, path: "/v1/work" }, (r) => { r.resume(); r.on("end", res); }).end());
        if (i >= 200) times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b); console.log(JSON.stringify(times[Math.floor(times.length / 2)])); process.exit(0);`, dir);
    const commits = inChild<{ one: number; grouped: number; insert: number }>(`
      import { createRequire } from "node:module";
      const Database = createRequire(import.meta.url)(${JSON.stringify(betterSqlite)});
      const open = (name) => { const db = new Database(name); db.pragma("journal_mode = WAL"); db.pragma("synchronous = FULL");
        db.exec("CREATE TABLE facts (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL)"); return db; };
      const body = JSON.stringify({ changes: [["events", 1, { id: "e1", type: "alert.x", subject: "s1" }]] });
      const rate = (db, perTx, seconds) => { const ins = db.prepare("INSERT INTO facts (at, kind, body) VALUES (?, ?, ?)");
        const tx = db.transaction((n) => { for (let i = 0; i < n; i++) ins.run("2026-12-03T00:00:00.000Z", "event", body); });
        let rows = 0; const t0 = performance.now(); while (performance.now() - t0 < seconds * 1000) { tx(perTx); rows += perTx; }
        return rows / ((performance.now() - t0) / 1000); };
      const one = rate(open("one.db"), 1, 3);
      const grouped = rate(open("grouped.db"), 32, 3);
      const insert = rate(open("insert.db"), 8192, 3);
      console.log(JSON.stringify({ one, grouped, insert }));`, dir);
    return {
      start, idleRss, connectionKb, roundTripMs, spawnMs,
      commitsPerSecond: commits.one, commitsPerSecondConcurrent: commits.grouped, insertRowsPerSecond: commits.insert,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const l = await machineLimits();
  for (const [k, v] of Object.entries(l)) console.log(`${k.padEnd(28)} ${v.toFixed(k.endsWith("Second") || k.endsWith("Concurrent") ? 0 : 2)}`);
}
