/**
 * The output thread (see output.ts): keeps a bounded window of each watched launch's stdout and stderr, reads what
 * the agent appended, and calls the agent plugin's `read` on the window, off the hub's event loop. It answers each
 * `read` request with the plugin's reading (a reading of unchanged output from the last one), and each `message`
 * request with `readMessage` of its text.
 */
import { parentPort, workerData } from "node:worker_threads";
import { join } from "node:path";
import { PluginLoader } from "../plugins/index.js";
import type { AgentPlugin, AgentRead } from "../sdk/index.js";
import { readMessage } from "./receipt.js";
import { LaunchSteps } from "./transcript-lines.js";
import {
  OutputWindow, agentOutputHeadBytes, agentOutputTailBytes, agentStderrHeadBytes, agentStderrTailBytes,
  type OutputReply, type OutputRequest, type OutputThreadData,
} from "./output.js";

const { lang, plugins: roots } = workerData as OutputThreadData;
/** This thread's plugins (the worker's roots): each agent plugin is loaded once here, apart from the worker's own copy. */
const plugins = new PluginLoader(roots, lang);

interface Watched { stdout: OutputWindow; stderr: OutputWindow; steps: LaunchSteps; last: { use: string; code: number | null; read: AgentRead | null } | null }
const watched = new Map<string, Watched>();

async function answer(req: Extract<OutputRequest, { kind: "read" }>): Promise<AgentRead | null> {
  let w = watched.get(req.dir);
  if (!w) {
    const steps = new LaunchSteps();
    w = {
      stdout: new OutputWindow(join(req.dir, "stdout"), agentOutputHeadBytes, agentOutputTailBytes, lang, (b) => steps.stdout.push(b)),
      stderr: new OutputWindow(join(req.dir, "stderr"), agentStderrHeadBytes, agentStderrTailBytes, lang, (b) => steps.stderr.push(b)),
      steps,
      last: null,
    };
    watched.set(req.dir, w);
  }
  w.steps.secrets = req.secrets;
  // The plugin maps lines to transcript steps as they are read (issue 30): loaded before the first read.
  try {
    w.steps.plugin ??= await plugins.load<AgentPlugin>("agent", req.use);
  } catch {
    // read below says why (null)
  }
  let grew = true;
  try {
    grew = [w.stdout.update(), w.stderr.update()].some(Boolean);
  } catch {
    // a file that cannot be read now (too many open files): read the window as it is, look again next time
  }
  if (!grew && w.last && w.last.use === req.use && w.last.code === req.code) return w.last.read;
  let read: AgentRead | null;
  try {
    const plugin = await plugins.load<AgentPlugin>("agent", req.use);
    read = plugin.read(w.stdout.text(), req.code, w.stderr.text()) ?? null;
  } catch {
    read = null;
  }
  w.last = { use: req.use, code: req.code, read };
  if (req.code !== null) w.steps.ended(req.code, Boolean(read?.error), () => w.stderr.text());
  return read;
}

parentPort!.on("message", (req: OutputRequest) => {
  if (req.kind === "forget") {
    watched.delete(req.dir);
    return;
  }
  if (req.kind === "message") {
    let value: OutputReply["value"] = null;
    try {
      value = readMessage(req.text, lang);
    } catch {
      // answered with null: the worker reads the first line itself and asks for the receipt again
    }
    parentPort!.postMessage({ id: req.id, value } satisfies OutputReply);
    return;
  }
  void answer(req).catch(() => null).then((read) => {
    const steps = watched.get(req.dir)?.steps.take() ?? [];
    try {
      parentPort!.postMessage({ id: req.id, value: read, steps } satisfies OutputReply);
    } catch {
      // a reading that cannot be copied to the worker (a function, a symbol): not a valid reading
      parentPort!.postMessage({ id: req.id, value: null } satisfies OutputReply);
    }
  });
});
