/**
 * The relay an agent's CLI starts as its stdio MCP server for a run's tools (issue 16; tool-bridge.ts):
 *
 *   agent-autoloop tools mcp --socket <socket> [--lang zh|en]
 *
 * It copies newline-delimited JSON-RPC between its stdin/stdout and the worker's socket of the run, unchanged. It
 * holds no secret and needs nothing of the worker's home but that socket, so it runs inside the agent's sandbox.
 *
 * A worker that restarts while the agent works (agents outlive their worker: supervise.ts) opens the run's socket
 * again; the relay then connects again, repeats the client's `initialize` and `notifications/initialized` (the new
 * server's answer to that `initialize` is not passed on), and carries on. Requests that were under way when the
 * connection broke, or that find no worker within `relayReconnectMs`, are answered with a JSON-RPC error the model
 * can read. The relay ends when its stdin ends.
 *
 * Before MCP, each connection proves that the relay is one of the run's processes (peer.ts): the relay shows the
 * worker's challenge in its own command line and says so; a worker that turns it away (it is not the run's) says why,
 * and the requests waiting get that reason as their error, without trying again for `relayReconnectMs`.
 */
import { connect, type Socket } from "node:net";
import { basename, dirname } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import { LineFramer } from "../common/lines.js";
import { admittedMethod, bridgeProofLineMaxBytes, bridgeProofTimeoutMs, notification, proofTitlePrefix, provedMethod, proveMethod, refusedMethod } from "./peer.js";

/** How long the relay tries to reach the worker's socket before it answers the waiting requests with an error, in ms. */
export const relayReconnectMs = 30_000;
/** Between two tries to reach the socket, in ms. */
const relayRetryMs = 250;
/** The longest line the relay passes on, in bytes (as the worker's side: tool-bridge.ts `bridgeLineMaxBytes`). */
const relayLineMaxBytes = 10 * 1024 * 1024;
/** The id of a repeated `initialize`, whose answer the relay keeps to itself. */
const reinitId = "agent-autoloop-relay-reinit";

type Id = string | number;
type Message = { id?: unknown; method?: unknown };

/** The relay's lines (common/lines.ts): at most `relayLineMaxBytes` (a longer one is null), blank ones left out. */
const lines = (onLine: (line: string | null) => void) =>
  new LineFramer(relayLineMaxBytes, (line) => void (line === null || line.trim() !== "" ? onLine(line) : undefined));

function parse(line: string): Message | null {
  try {
    const v = JSON.parse(line) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Message) : null;
  } catch {
    return null;
  }
}

const isId = (v: unknown): v is Id => typeof v === "string" || typeof v === "number";

/**
 * Relays between `input`/`output` (the agent's CLI) and the socket at `socketPath` until `input` ends.
 * @param lang the language of the errors it answers itself.
 */
export function runRelay(socketPath: string, lang: Lang, input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stdout): Promise<void> {
  // A unix socket path is limited to about 107 bytes: connect by its name, from its folder.
  const folder = dirname(socketPath);
  const name = `./${basename(socketPath)}`;
  try {
    process.chdir(folder);
  } catch {
    // connect reports the missing folder
  }
  let socket: Socket | null = null;
  let connecting: Promise<Socket | null> | null = null;
  let ended = false;
  let initialize: Record<string, unknown> | null = null;
  let initialized: string | null = null;
  /** Requests written to the current connection and not answered yet. */
  const pending = new Set<Id>();
  let queue: string[] = [];
  const write = (line: string) => void output.write(line + "\n");
  /** Why the worker turned the last connection away (its words), or null. */
  let refusal: string | null = null;
  const fail = (id: Id) => write(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: refusal ?? t(lang, "bridge.gone") } }));

  const fromServer = lines((line) => {
    if (line === null) return;
    const m = parse(line);
    if (m && m.method === undefined && isId(m.id)) {
      if (m.id === reinitId) return;
      pending.delete(m.id);
    }
    write(line);
  });

  /**
   * Connects and proves this relay is the run's (peer.ts): the socket once the worker admitted it (what followed the
   * admission is passed on), `{ refused }` with the worker's reason, or null when the worker cannot be reached or the
   * exchange does not end within `bridgeProofTimeoutMs` and a second.
   */
  const open = (): Promise<Socket | { refused: string } | null> => new Promise((resolve) => {
    const s = connect(name);
    let settled = false;
    let admitted = false;
    const settle = (v: Socket | { refused: string } | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.off("data", onData);
      if (v !== s) s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => settle(null), bridgeProofTimeoutMs + 1000);
    // The handshake's lines are short (`bridgeProofLineMaxBytes`): a longer one is skipped, never held.
    const handshake = new LineFramer(bridgeProofLineMaxBytes, (line) => {
      const m = (line === null ? null : parse(line)) as (Message & { params?: { challenge?: unknown; message?: unknown } }) | null;
      if (m?.method === proveMethod && typeof m.params?.challenge === "string") {
        process.title = proofTitlePrefix + m.params.challenge;
        s.write(notification(provedMethod));
      } else if (m?.method === refusedMethod) {
        settle({ refused: typeof m.params?.message === "string" ? m.params.message : t(lang, "bridge.gone") });
        return "stop";
      } else if (m?.method === admittedMethod) {
        admitted = true;
        settle(s);
        return "stop";
      }
    });
    const onData = (d: Buffer) => {
      handshake.push(d);
      // What followed the admission in the same chunk is the server's first bytes.
      if (admitted && handshake.rest.length > 0) fromServer.push(handshake.rest);
    };
    s.on("data", onData);
    s.once("error", () => settle(null));
    s.once("close", () => settle(null));
  });

  /** Connects (again), repeating the handshake on a new connection; null when no worker answers in time. */
  const reach = (): Promise<Socket | null> => {
    connecting ??= (async () => {
      const deadline = Date.now() + relayReconnectMs;
      for (;;) {
        const opened = await open();
        if (opened && "refused" in opened) {
          refusal = opened.refused;
          return null;
        }
        const s = opened;
        if (s) {
          refusal = null;
          s.on("data", (d: Buffer) => fromServer.push(d));
          s.on("error", () => {});
          s.on("close", () => {
            if (socket === s) socket = null;
            for (const id of pending) fail(id);
            pending.clear();
            if (ended) finish();
          });
          if (initialize) s.write(JSON.stringify({ ...initialize, id: reinitId }) + "\n");
          if (initialized) s.write(initialized + "\n");
          return s;
        }
        if (ended || Date.now() >= deadline) return null;
        await new Promise((r) => setTimeout(r, relayRetryMs));
      }
    })().finally(() => {
      connecting = null;
    });
    return connecting;
  };

  const send = async (line: string): Promise<void> => {
    queue.push(line);
    if (connecting) return;
    const s = (socket && !socket.destroyed ? socket : null) ?? (socket = await reach());
    const lines = queue;
    queue = [];
    for (const l of lines) {
      const m = parse(l);
      const id = m && typeof m.method === "string" && isId(m.id) ? m.id : null;
      if (!s) {
        if (id !== null) fail(id);
        continue;
      }
      s.write(l + "\n", (err) => {
        // Not written (the worker had gone, and the relay had not heard yet): the server never got it, so it goes
        // again on a new connection. Written: it waits for its answer, or for the connection's end.
        if (!err) {
          if (id !== null) pending.add(id);
          return;
        }
        if (socket === s) socket = null;
        void send(l);
      });
    }
  };

  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const fromClient = lines((line) => {
    if (line === null) {
      write(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: `Parse error: line over ${relayLineMaxBytes} bytes, skipped` } }));
      return;
    }
    const m = parse(line);
    if (m?.method === "initialize" && isId(m.id)) initialize = m as Record<string, unknown>;
    if (m?.method === "notifications/initialized") initialized = line;
    void send(line);
  });
  input.on("data", (d: Buffer) => fromClient.push(d));
  input.on("end", () => {
    ended = true;
    if (socket) socket.end();
    else finish();
  });
  return done;
}
