/**
 * The cost of one sync tool call through the tool host (issue 16; to be folded into `npm run benchmark`): from the
 * call to its result, for examples/tool-plugins/hello-node, beside a bare `node main.js` round trip (spawn, one
 * request line, the response line). Through the host: without a sandbox, in bubblewrap, and in bubblewrap with a
 * cgroup (memory limit). Medians and p90 of BENCH_TOOL_CALLS (default 20) calls each, one at a time; nothing asserted.
 *
 * Run: `npx tsx scripts/tools-benchmark.ts`
 */
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolHost, ToolRegistry, probeBwrap } from "../src/tools/index.js";
import { machine, median, pct } from "./measure.js";

const calls = Number(process.env.BENCH_TOOL_CALLS ?? 20);
const example = join(import.meta.dirname, "..", "examples", "tool-plugins", "hello-node");
const request = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "greet", arguments: { name: "Ada" }, session_key: "bench" } });

/** One bare round trip: spawn `node main.js`, write the request, wait for the first stdout line. */
function bare(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn("node", ["main.js"], { cwd: example, stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) {
        resolve(performance.now() - started);
        child.stdin.end();
      }
    });
    child.on("error", reject);
    child.stdin.write(request + "\n");
  });
}

async function series(name: string, f: () => Promise<number>): Promise<[string, string]> {
  await f(); // warm-up: file cache, the bubblewrap probe
  const xs: number[] = [];
  for (let i = 0; i < calls; i++) xs.push(await f());
  return [name, `median ${median(xs).toFixed(1)} ms, p90 ${pct(xs, 0.9).toFixed(1)} ms`];
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "aa-tools-bench-"));
  const manifest = readFileSync(join(example, "manifest.toml"), "utf8");
  const variants: [string, string][] = [["plain", ""], ["bwrap", '\n[sandbox]\nnetwork = "none"\n'], ["bwrapcg", '\n[sandbox]\nmemory = "256m"\npids = 64\n']];
  for (const [folder, extra] of variants) {
    cpSync(example, join(root, folder), { recursive: true });
    writeFileSync(join(root, folder, "manifest.toml"), manifest.replace('name = "hello-node"', `name = "${folder}"`) + extra);
  }
  const registry = new ToolRegistry([{ dir: root, origin: "home" }], "en");
  registry.rescan();
  const host = new ToolHost(registry, { lang: "en" });
  const through = (plugin: string) => async () => {
    const r = await host.call(`${plugin}.greet`, { name: "Ada" }, { sessionKey: "bench" });
    if (r.status !== "ok") throw new Error(JSON.stringify(r));
    return r.durationMs;
  };
  const out: [string, string][] = [];
  try {
    out.push(await series("bare node main.js round trip", bare));
    out.push(await series("tool host, no sandbox", through("plain")));
    if ((await probeBwrap("bwrap")).ok) {
      out.push(await series("tool host, bubblewrap", through("bwrap")));
      out.push(await series("tool host, bubblewrap + cgroup (memory, pids)", through("bwrapcg")));
    } else out.push(["tool host, bubblewrap", "skipped: bubblewrap cannot run here"]);
  } finally {
    await host.close();
    rmSync(root, { recursive: true, force: true });
  }
  console.log(machine());
  console.log(`one sync tool call, spawn to result (${calls} calls each, one at a time):`);
  for (const [k, v] of out) console.log(`  ${k.padEnd(48)} ${v}`);
}

await main();
