/**
 * The `acp` bridge (protocol.md ACP 和 MCP): one launch of an ACP agent, as one process the worker supervises.
 *
 *   node client.js --access <read|edit|full> --prompt-file <file> [--resume <session>] [--tools <json>] -- <agent command…>
 *
 * It starts the agent command in its own process group (the supervisor's), speaks ACP v1 over the agent's stdio
 * with newline framing (`@agentclientprotocol/sdk`), and prints what happens as JSON lines (lines.ts):
 * `initialize`; then `session/new`, or for a resumed run `session/load` when the agent declares `loadSession`, else
 * `session/resume` when it declares `sessionCapabilities.resume`; then one `session/prompt`. The history a load
 * replays is not the reply; the reply is the last agent text message of the turn, and the turn is done only when it
 * stops with `end_turn` and has one. Permission requests are answered from `--access` (permission.ts).
 *
 * Only an explicit refusal of the old session (an error answer to load/resume, or neither capability) is printed as
 * `refused`, so the worker opens a new session; an agent that does not start, fails to initialize or dies while
 * loading stays on its session and is retried. An error whose `data.reason` is `thread_active_writer` (the session
 * is open in another program) is a failure in the agent's own words, never a refusal. A line from the agent that is
 * not JSON fails the launch. When the turn is over (done or not), the bridge says so at once, closes the agent's
 * stdin and gives it 30 s to leave; then it stops the whole process group (SIGTERM, SIGKILL 10 s later), which also
 * reaches agents whose wrappers do not pass signals on (codex-acp's). The prompt comes from a file, so it is not
 * visible in process listings.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, realpathSync, writeSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { client, methods, ndJsonStream, PROTOCOL_VERSION, RequestError, type McpServer } from "@agentclientprotocol/sdk";
import { launchArgv } from "agent-autoloop/sdk";
import { choosePermission, type Access, type ToolFacts } from "./permission.js";
import { TurnLog, type UpdateLike } from "./turn.js";
import type { BridgeLine, LaunchUsage } from "./lines.js";

/** 接一个新 Agent: an agent still there 30 s after its turn ended is stopped with its process group. */
const leaveGraceMs = 30_000;
/** Agent：领活、干活、交回执: a stopped group gets SIGTERM, then SIGKILL 10 s later. */
const killGraceMs = 10_000;
/** How much of an unreadable line or a tool title goes into the log lines. */
const quoteMaxChars = 200;

/** The bridge's command line. */
export interface BridgeOptions {
  access: Access;
  /** The file holding the prompt (UTF-8). */
  promptFile: string;
  /** The session to continue, or null for a new one. */
  resume: string | null;
  /** The agent command and its arguments. */
  command: string[];
  /** The run's tools server (issue 16), given to every session/new, load and resume as an ACP stdio MCP server. */
  tools: { server: string; command: string[] } | null;
}

/** Reads the bridge's arguments; returns what is wrong as a string. */
export function parseArgs(argv: string[]): BridgeOptions | string {
  const split = argv.indexOf("--");
  if (split < 0 || split === argv.length - 1) return "no agent command after --";
  const flags = argv.slice(0, split);
  const command = argv.slice(split + 1);
  let access: Access | null = null;
  let promptFile: string | null = null;
  let resume: string | null = null;
  let tools: BridgeOptions["tools"] = null;
  for (let i = 0; i < flags.length; i += 2) {
    const [k, v] = [flags[i], flags[i + 1]];
    if (v === undefined) return `${k} needs a value`;
    if (k === "--access" && (v === "read" || v === "edit" || v === "full")) access = v;
    else if (k === "--prompt-file") promptFile = v;
    else if (k === "--resume" && v.length > 0) resume = v;
    else if (k === "--tools" && (tools = toolsOf(v))) continue;
    else return `unknown argument ${k} ${v}`;
  }
  if (!access) return "--access read|edit|full is required";
  if (!promptFile) return "--prompt-file is required";
  return { access, promptFile, resume, command, tools };
}

/** `--tools`: `{"server": <name>, "command": [<program>, …args]}` as JSON, or null when it is not that. */
function toolsOf(v: string): BridgeOptions["tools"] {
  try {
    const t = JSON.parse(v) as { server?: unknown; command?: unknown };
    const ok = typeof t.server === "string" && t.server.length > 0 && Array.isArray(t.command) && t.command.length > 0 && t.command.every((a) => typeof a === "string");
    return ok ? { server: t.server as string, command: t.command as string[] } : null;
  } catch {
    return null;
  }
}

/** A launch that ended without the agent saying so; `message` is for the owner. */
class BridgeFailure extends Error {}

function cut(s: string): string {
  return s.length <= quoteMaxChars ? s : s.slice(0, quoteMaxChars) + "…";
}

/** Whether a JSON-RPC error says the session is open in another program. */
function isBusy(e: RequestError): boolean {
  const data = e.data as { reason?: unknown } | null | undefined;
  return !!data && typeof data === "object" && data.reason === "thread_active_writer";
}

/** The agent's own words in an error answer: its message, and a message or details string in `data` when it adds one. */
function agentWords(e: RequestError): string {
  const data = e.data as { message?: unknown; details?: unknown } | null | undefined;
  const more = data && typeof data === "object" ? [data.message, data.details].find((x): x is string => typeof x === "string" && x.trim().length > 0) : undefined;
  return more && !e.message.includes(more) ? `${e.message}: ${more}` : e.message;
}

/**
 * Passes the agent's stdout through unchanged while checking that every non-empty line (LF-framed, an optional CR
 * before it) is JSON; the first line that is not errors the stream, which closes the connection.
 */
function checkLines(input: ReadableStream<Uint8Array>, onBad: (line: string) => void): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  let pending = "";
  const check = (line: string, c: TransformStreamDefaultController<Uint8Array>): boolean => {
    const t = line.replace(/\r$/, "").trim();
    if (!t) return true;
    try {
      JSON.parse(t);
      return true;
    } catch {
      onBad(t);
      c.error(new BridgeFailure(`the agent wrote a line that is not JSON: ${cut(t)}`));
      return false;
    }
  };
  return input.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, c) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (!check(line, c)) return;
      }
      c.enqueue(chunk);
    },
    flush(c) {
      check(pending + decoder.decode(), c);
    },
  }));
}

/** Lets notifications that arrived before a response finish their (asynchronous) handlers. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((r) => setImmediate(r));
}

function tokensOf(usage: unknown): LaunchUsage {
  const u = usage as { inputTokens?: unknown; outputTokens?: unknown; cachedReadTokens?: unknown; cachedWriteTokens?: unknown } | null | undefined;
  if (!u || typeof u !== "object") return {};
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
  if (typeof u.inputTokens !== "number" && typeof u.outputTokens !== "number") return {};
  // As the claude plugin counts: input includes cache reads and writes; `cached` is the reads.
  return { input: n(u.inputTokens) + n(u.cachedReadTokens) + n(u.cachedWriteTokens), output: n(u.outputTokens), cached: n(u.cachedReadTokens) };
}

/**
 * Runs one launch. Resolves with the bridge's exit code (0: the turn is done with a reply) once the agent has left.
 * @param write prints one line (synchronously).
 */
export async function runBridge(opts: BridgeOptions, write: (line: BridgeLine) => void): Promise<number> {
  let prompt: string;
  try {
    prompt = readFileSync(opts.promptFile, "utf8");
  } catch (e) {
    write({ acp: "failed", error: `cannot read the prompt file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` });
    return 1;
  }
  const cwd = process.cwd();
  let folderReal = cwd;
  try {
    folderReal = realpathSync(cwd);
  } catch {
    // keep cwd as it is
  }
  // Windows: PATH + PATHEXT, npm's .cmd shims run by their JS entry, other batch files refused (the SDK's launchArgv).
  const launch = launchArgv(opts.command, { cwd });
  if ("error" in launch) {
    write({ acp: "failed", error: launch.error });
    return 1;
  }
  const agent = spawn(launch.argv[0]!, launch.argv.slice(1), { cwd, env: process.env, stdio: ["pipe", "pipe", "inherit"] });
  let startError: Error | null = null;
  let exit: { code: number | null; signal: string | null } | null = null;
  const gone = new Promise<void>((r) => {
    agent.on("error", (e) => {
      startError = e;
      r();
    });
    agent.on("exit", (code, signal) => {
      exit = { code, signal };
      r();
    });
  });
  agent.stdin!.on("error", () => {}); // the agent may close its stdin before we do

  const log = new TurnLog();
  let prompted = false;
  let code = 1;
  const app = client({ name: "agent-autoloop" })
    .onRequest(methods.client.session.requestPermission, (ctx) => {
      const call = ctx.params.toolCall;
      const known = log.toolFacts(call.toolCallId);
      const facts: ToolFacts = {
        kind: call.kind ?? known.kind ?? null,
        title: call.title ?? known.title ?? null,
        locations: call.locations && call.locations.length > 0 ? call.locations : known.locations ?? null,
      };
      const choice = choosePermission(opts.access, folderReal, facts, ctx.params.options, opts.tools?.server ?? null);
      write({
        acp: "permission", tool: cut(facts.title ?? call.toolCallId), kind: facts.kind ?? null, decision: choice.decision,
        option: choice.outcome.outcome === "selected" ? choice.outcome.optionId : null, why: choice.why,
      });
      return { outcome: choice.outcome };
    })
    .onNotification(methods.client.session.update, (ctx) => {
      // Steps first: a tool call ends the message being written, which `update` would then start anew.
      const steps = log.steps(ctx.params.update as UpdateLike);
      log.update(ctx.params.update);
      for (const step of steps) write({ acp: "step", step });
    });

  const input = checkLines(Readable.toWeb(agent.stdout!) as ReadableStream<Uint8Array>, () => {});
  const output = Writable.toWeb(agent.stdin!) as WritableStream<Uint8Array>;
  try {
    code = await app.connectWith(ndJsonStream(output, input), async (ctx) => {
      const init = await ctx.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "agent-autoloop", version: "1" },
      });
      const caps = init.agentCapabilities ?? {};
      const canLoad = caps.loadSession === true;
      const canResume = !!caps.sessionCapabilities?.resume;
      write({
        acp: "agent", name: String(init.agentInfo?.name ?? ""), version: String(init.agentInfo?.version ?? ""),
        protocolVersion: Number(init.protocolVersion), loadSession: canLoad, resume: canResume,
      });
      if (init.protocolVersion !== PROTOCOL_VERSION) {
        throw new BridgeFailure(`the agent speaks ACP version ${String(init.protocolVersion)}; this bridge speaks ${PROTOCOL_VERSION}`);
      }
      // The run's tools (issue 16), as an ACP stdio MCP server; (claude-agent-acp and codex-acp take stdio servers).
      const mcpServers: McpServer[] = opts.tools ? [{ name: opts.tools.server, command: opts.tools.command[0]!, args: opts.tools.command.slice(1), env: [] }] : [];
      // claude-agent-acp 0.49.0 connects MCP servers in the background, so a quick first turn finds the tools "still
      // connecting"; its session options (`_meta.claudeCode.options`, ignored by other agents) make Claude Code wait.
      const meta = opts.tools ? { _meta: { claudeCode: { options: { env: { MCP_CONNECTION_NONBLOCKING: "0" } } } } } : {};
      let session: string;
      let via: "new" | "load" | "resume";
      if (opts.resume) {
        session = opts.resume;
        via = canLoad ? "load" : "resume";
        if (!canLoad && !canResume) {
          write({ acp: "refused", session, error: "the agent can neither load nor resume a session (no loadSession, no sessionCapabilities.resume)" });
          return 1;
        }
        try {
          if (via === "load") await ctx.request(methods.agent.session.load, { sessionId: session, cwd, mcpServers, ...meta });
          else await ctx.request(methods.agent.session.resume, { sessionId: session, cwd, mcpServers, ...meta });
        } catch (e) {
          if (!(e instanceof RequestError)) throw e;
          if (isBusy(e)) write({ acp: "failed", error: agentWords(e), busy: true });
          else write({ acp: "refused", session, error: agentWords(e) });
          return 1;
        }
      } else {
        const created = await ctx.request(methods.agent.session.new, { cwd, mcpServers, ...meta });
        if (typeof created?.sessionId !== "string" || !created.sessionId) throw new BridgeFailure("session/new answered without a sessionId");
        session = created.sessionId;
        via = "new";
      }
      write({ acp: "session", session, via });
      await settle(); // the replayed history is handled before the reply starts
      log.beginPrompt();
      prompted = true;
      write({ acp: "prompt" });
      let result: { stopReason?: unknown; usage?: unknown };
      try {
        result = await ctx.request(methods.agent.session.prompt, { sessionId: session, prompt: [{ type: "text", text: prompt }] });
      } catch (e) {
        if (!(e instanceof RequestError)) throw e;
        await settle();
        write({ acp: "failed", error: agentWords(e), ...(isBusy(e) ? { busy: true } : {}), usage: withCost({}, log.cost()) });
        return 1;
      }
      await settle();
      const stopReason = typeof result?.stopReason === "string" ? result.stopReason : "unknown";
      const text = log.reply();
      for (const step of log.steps(null, true)) write({ acp: "step", step });
      write({ acp: "end", stopReason, text, usage: withCost(tokensOf(result?.usage), log.cost()) });
      return stopReason === "end_turn" && text !== null ? 0 : 1;
    });
  } catch (e) {
    await Promise.race([gone, new Promise((r) => setTimeout(r, 1000))]);
    const failure = e instanceof BridgeFailure ? e.message
      : startError ? `could not start ${opts.command[0]}: ${(startError as Error).message}`
      : exit ? `the agent exited (${exitText(exit)}) before its turn ended`
      : `the connection to the agent failed: ${e instanceof RequestError ? agentWords(e) : (e as Error).message}`;
    write({ acp: "failed", error: failure, ...(prompted ? { usage: withCost({}, log.cost()) } : {}) });
    code = 1;
  }
  await leave(agent, gone);
  return code;
}

function withCost(u: LaunchUsage, cost: number | undefined): LaunchUsage {
  return cost === undefined ? u : { ...u, cost };
}

function exitText(x: { code: number | null; signal: string | null }): string {
  return x.signal ? `signal ${x.signal}` : `code ${x.code}`;
}

/** Closes the agent's stdin and waits up to 30 s for it to exit; then stops the whole process group. */
async function leave(agent: ChildProcess, gone: Promise<void>): Promise<void> {
  agent.stdin?.end();
  if (agent.exitCode !== null || agent.signalCode !== null || agent.pid === undefined) return;
  const timer = (ms: number) => new Promise<"late">((r) => setTimeout(() => r("late"), ms).unref());
  if ((await Promise.race([gone, timer(leaveGraceMs)])) !== "late") return;
  // This bridge leads the group the supervisor made; the agent and its children are in it. Stay alive through
  // the SIGTERM (the supervisor records our exit), then SIGKILL whatever is left, this process included.
  process.on("SIGTERM", () => {});
  signalGroup(agent, "SIGTERM");
  if ((await Promise.race([gone, timer(killGraceMs)])) === "late") signalGroup(agent, "SIGKILL");
}

function signalGroup(agent: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-process.pid, signal);
  } catch {
    // not a group leader (started by hand): the agent alone
    try {
      agent.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** Prints one line on stdout, synchronously, retrying while a non-blocking pipe is full. */
function writeLine(line: BridgeLine): void {
  const buf = Buffer.from(JSON.stringify(line) + "\n");
  for (let off = 0; off < buf.length;) {
    try {
      off += writeSync(1, buf, off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") return;
    }
  }
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  if (typeof opts === "string") {
    writeLine({ acp: "failed", error: `acp bridge: ${opts}` });
    process.exit(2);
  }
  process.exit(await runBridge(opts, writeLine));
}

/** Whether this module is the program being run (not imported). */
function isMain(): boolean {
  try {
    return !!process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}

if (isMain()) void main();
