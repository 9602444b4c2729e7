/**
 * Tool call overhead (issue 16), for `npm run benchmark` (`npm run benchmark -- tools` measures only this): one sync
 * call of the example plugin hello-node (`node main.js`, one JSON-RPC line in, one out), medians of `toolCallRuns`
 * taken in turns so that a busy moment of the machine weighs on each alike:
 *
 * - bare: spawning `node main.js` in the plugin folder, writing the request, reading the answer;
 * - host: `ToolHost.call` (checks, spawn, the call, the end of the plugin's process), with no sandbox and with an
 *   empty `[sandbox]` (bubblewrap, every namespace unshared);
 * - bridge: an MCP `tools/call` of an agent through the relay process and the worker's tool bridge (the hub's
 *   decision and the outcome over HTTP to a real hub process, then the host's call), with and without the sandbox;
 * - once per agent launch: starting the relay, the MCP handshake and `tools/list` (median of 5).
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { writeFileAtomic } from "../src/host/home.js";
import { engineDir } from "../src/common/paths.js";
import { ToolHost, ToolRegistry } from "../src/tools/index.js";
import { pluginRoots } from "../src/plugins/index.js";
import { ToolBridges } from "../src/worker/tool-bridge.js";
import type { Job, State } from "../src/protocol/responses.js";
import { spawnHub } from "../sim/hub-process.js";
import { benchHome, call, median, stopHub } from "./measure.js";

/** Calls of each kind measured. */
const toolCallRuns = 21;
/** Relay starts (handshake and tool list) measured. */
const relayStartRuns = 5;

/** One call of hello-node's main.js as its own process: from the spawn to the answer (its exit is waited for after). */
function bareCall(dir: string): Promise<number> {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    // The environment a plugin gets (not this process's: tsx's NODE_OPTIONS would load tsx into the child).
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
    const child = spawn("node", ["main.js"], { cwd: dir, env, stdio: ["pipe", "pipe", "ignore"] });
    let out = "";
    let took = 0;
    child.stdout.on("data", (d) => {
      out += d;
      if (took === 0 && out.includes("\n")) {
        took = performance.now() - t;
        child.stdin.end();
      }
    });
    child.on("error", reject);
    child.on("exit", () => (out.includes("hello, Ada") ? resolve(took) : reject(new Error(`hello-node answered ${out}`))));
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "greet", arguments: { name: "Ada" } } }) + "\n");
  });
}

/** A home with hello-node installed twice (as `hello-node`, and with an empty `[sandbox]` as `hello-sandboxed`). */
function toolsHome(): ReturnType<typeof benchHome> {
  const made = benchHome("aa-bench-tools-");
  const { dir, home, keys } = made;
  writeFileSync(home.rules, JSON.stringify({
    timezone: "UTC", sources: { bench: { name: "Bench" } }, agents: { a: { worker: "w", use: "command", command: ["true"] } }, channels: {},
    rules: [{ name: "tools", when: { source: "bench", types: ["job.*"] }, to: "a", parallel: 100, cwd: "/tmp", tools: ["hello-node.greet", "hello-sandboxed.greet"] }],
  }));
  writeFileAtomic(home.config, JSON.stringify({ listen: "127.0.0.1:0", publicUrl: null, owner: keys.owner, worker: null, channels: {} }));
  const example = join(engineDir, "examples", "tool-plugins", "hello-node");
  cpSync(example, join(home.plugins, "hello-node"), { recursive: true });
  cpSync(example, join(home.plugins, "hello-sandboxed"), { recursive: true });
  const manifest = readFileSync(join(example, "manifest.toml"), "utf8").replace('name = "hello-node"', 'name = "hello-sandboxed"');
  writeFileSync(join(home.plugins, "hello-sandboxed", "manifest.toml"), `${manifest}\n[sandbox]\n`);
  mkdirSync(join(dir, "agent"));
  return made;
}

/** The medians (ms) of one sync tool call each way, as `measureToolCalls` returns them. */
export interface ToolCallFigures { bare: number; host: number; hostSandboxed: number; bridge: number; bridgeSandboxed: number }

/** Measures and prints the figures with `say`; returns their medians. */
export async function measureToolCalls(say: (k: string, v: string) => void): Promise<ToolCallFigures> {
  const { dir, home, keys } = toolsHome();
  const hub = await spawnHub(dir);
  const host = new ToolHost(new ToolRegistry(pluginRoots(home.plugins), "en"), { lang: "en", hiddenPaths: [dir] });
  host.registry.rescan();
  const bridges = new ToolBridges({ url: hub.url, home, lang: "en", log: () => {} });
  const clients: Client[] = [];
  try {
    await call(hub.url, keys.source, "POST", "/v1/events", { id: "t1", type: "job.tools", subject: "bench" });
    const job = (await call(hub.url, keys.worker, "GET", "/v1/work?claim=bench-tools&capacity=1")).job as Job;
    // The relays are this script's children: the run's processes, as far as the bridge can tell.
    const bridge = await bridges.open(job, join(dir, "agent"), () => [process.pid]);
    const [command, ...args] = bridge.offer.command;
    const connect = async () => {
      const c = new Client({ name: "bench", version: "1" });
      await c.connect(new StdioClientTransport({ command: command!, args }));
      clients.push(c);
      return c;
    };
    const starts: number[] = [];
    for (let i = 0; i < relayStartRuns; i++) {
      const t = performance.now();
      const c = await connect();
      await c.listTools();
      starts.push(performance.now() - t);
      await c.close();
    }
    const agent = await connect();
    // The first call of each plugin (not built in) asks the owner: "always allow", while the call is held.
    for (const plugin of ["hello-node", "hello-sandboxed"]) {
      const first = agent.callTool({ name: `${plugin}.greet`, arguments: { name: "Ada" } });
      for (;;) {
        const card = ((await call(hub.url, keys.owner, "GET", "/v1/state")) as State).cards.find((c) => c.state === "open" && c.title === `Allow ${plugin}.greet?`);
        if (card) {
          await call(hub.url, keys.owner, "POST", `/v1/cards/${card.id}/answer`, { choice: 1 });
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      await first;
    }
    const timed = async (f: () => Promise<unknown>) => {
      const t = performance.now();
      await f();
      return performance.now() - t;
    };
    const hostCall = (name: string) => async () => {
      const r = await host.call(name, { name: "Ada" }, { sessionKey: "bench" });
      if (r.status !== "ok") throw new Error(`${name}: ${JSON.stringify(r)}`);
    };
    const bridgeCall = (name: string) => async () => {
      const r = await agent.callTool({ name, arguments: { name: "Ada" } });
      if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
    };
    const m = { bare: [] as number[], host: [] as number[], hostSandboxed: [] as number[], bridge: [] as number[], bridgeSandboxed: [] as number[] };
    for (let i = 0; i < toolCallRuns; i++) {
      m.bare.push(await bareCall(join(home.plugins, "hello-node")));
      m.host.push(await timed(hostCall("hello-node.greet")));
      m.hostSandboxed.push(await timed(hostCall("hello-sandboxed.greet")));
      m.bridge.push(await timed(bridgeCall("hello-node.greet")));
      m.bridgeSandboxed.push(await timed(bridgeCall("hello-sandboxed.greet")));
    }
    const ms = (xs: number[]) => `${median(xs).toFixed(0)} ms`;
    say(`tool call: bare node main.js round trip (median of ${toolCallRuns})`, ms(m.bare));
    say("tool call: through the host, no sandbox / sandboxed", `${ms(m.host)} / ${ms(m.hostSandboxed)}`);
    say("tool call: through an agent's MCP bridge, no sandbox / sandboxed", `${ms(m.bridge)} / ${ms(m.bridgeSandboxed)}`);
    say(`tools server of a launch: relay, handshake, tools/list (${relayStartRuns})`, ms(starts));
    return { bare: median(m.bare), host: median(m.host), hostSandboxed: median(m.hostSandboxed), bridge: median(m.bridge), bridgeSandboxed: median(m.bridgeSandboxed) };
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    await bridges.close();
    await host.close();
    await stopHub(hub);
    rmSync(dir, { recursive: true, force: true });
  }
}
