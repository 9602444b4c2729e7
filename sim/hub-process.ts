/** A real hub process for the crash test and the benchmark: `serve` on a free port of 127.0.0.1. */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { engineDir } from "../src/host/home.js";
import { endWithScript } from "./children.js";

export interface HubProcess {
  child: ChildProcess;
  url: string;
  /** From spawning to the "listening on" line, in ms. */
  startMs: number;
}

/**
 * Starts `agent-autoloop serve --listen 127.0.0.1:0` on a home and resolves with its URL once it listens. The hub is
 * killed when this script is interrupted or exits (children.ts).
 * @throws Error with its output when the process exits before it listens.
 */
export function spawnHub(homeDir: string): Promise<HubProcess> {
  const t0 = performance.now();
  const child = endWithScript(spawn(process.execPath, [join(engineDir, "bin", "agent-autoloop.js"), "serve", "--listen", "127.0.0.1:0"], {
    env: { ...process.env, AGENT_AUTOLOOP_HOME: homeDir, AGENT_AUTOLOOP_LANG: "en" },
    stdio: ["ignore", "pipe", "pipe"],
  }));
  let out = "";
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        child.off("exit", onExit);
        resolve({ child, url: m[1]!, startMs: performance.now() - t0 });
      }
    };
    const onExit = (code: number | null) => reject(new Error(`the hub exited (${code}) before listening: ${out}`));
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d: Buffer) => (out += d));
    child.once("exit", onExit);
  });
}
