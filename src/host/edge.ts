/**
 * The HTTP edge against slow and hostile clients (issue 14): the Node server's header and body timeouts, and a cap on
 * connections that carry no valid key, per client address and over all. Workers, channels and the CLI share an
 * address with whoever else runs on the machine (127.0.0.1), so a request whose headers carry a valid key or run
 * token takes its connection out of the count: a flood without keys cannot lock out the hub's own worker.
 */
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Hub } from "./hub.js";
import { bearerOf, runTokenValid } from "./routes/read.js";
import { hashKey } from "../kernel/credentials.js";
import { callerOf } from "../kernel/authorize.js";
import * as L from "../kernel/limits.js";
import { consoleCookieName, cookieValue, httpsUrl } from "./console-session.js";
import { endpoints, type EndpointSpec } from "../protocol/endpoints.js";
import { idPattern } from "../protocol/patterns.js";

/**
 * The paths that take a run's token (`auth: "run"` in the endpoint table: started, result, artifacts, tool calls and
 * their held waits), each as a pattern whose first group is the run id. Made from the table, so a run-token route
 * added later counts its token too (issue 26: a held tool-call wait was cut as keyless).
 */
const runTokenPaths: readonly RegExp[] = Object.values(endpoints as Record<string, EndpointSpec>)
  .filter((e) => e.auth === "run")
  .map((e) => new RegExp(`^${e.path.replace(/:id\b/, `(${idPattern.replace(/^\^|\$$/g, "")})`).replace(/:\w+/g, "[^/?]+")}(?:\\?|$)`));

/** The run id of a path that takes a run's token, or null. */
function runOfTokenPath(url: string): number | null {
  for (const re of runTokenPaths) {
    const m = re.exec(url);
    if (m) return Number(m[1]);
  }
  return null;
}

/** The edge's limits (src/kernel/limits.ts); tests shorten them. */
export interface EdgeLimits {
  requestHeadersTimeoutMs: number;
  requestBodyTimeoutMs: number;
  timeoutCheckIntervalMs: number;
  anonymousConnectionsPerAddressMax: number;
  anonymousConnectionsMax: number;
  silentConnectionGraceMs: number;
}

export const edgeLimits: EdgeLimits = {
  requestHeadersTimeoutMs: L.requestHeadersTimeoutMs,
  requestBodyTimeoutMs: L.requestBodyTimeoutMs,
  timeoutCheckIntervalMs: L.timeoutCheckIntervalMs,
  anonymousConnectionsPerAddressMax: L.anonymousConnectionsPerAddressMax,
  anonymousConnectionsMax: L.anonymousConnectionsMax,
  silentConnectionGraceMs: L.silentConnectionGraceMs,
};

/**
 * The Node server's timeouts: a request's headers, then the whole request, must arrive in time (else 408 and the
 * connection is closed). They bound receiving a request only; long polls (up to 50 s) and the stream wait for the
 * response and are not affected.
 */
export function serverOptions(limits: EdgeLimits): ServerOptions {
  return {
    headersTimeout: limits.requestHeadersTimeoutMs,
    requestTimeout: limits.requestBodyTimeoutMs,
    connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
  };
}

/**
 * Whether a request's headers carry a valid key (any kind), an owner console session's cookie or, on a path of its
 * run that takes a run token (every `auth: "run"` endpoint), the run's current token.
 */
export function keyedRequest(hub: Hub): (req: IncomingMessage) => boolean {
  return (req) => {
    const token = bearerOf(req.headers.authorization);
    if (!token) return hub.console.find(cookieValue(req.headers.cookie, consoleCookieName(httpsUrl(hub.env.publicUrl)))) !== null;
    try {
      if (callerOf(hub.store.view, hashKey(token))) return true;
      const run = runOfTokenPath(req.url ?? "");
      return run !== null && runTokenValid(hub, run, token);
    } catch {
      return false; // a closing store: count it as without a key
    }
  };
}

interface Connection {
  socket: Socket;
  address: string;
  /** silent: accepted, no request yet; receiving: a request without a key is being received or answered; idle: between requests. */
  state: "silent" | "receiving" | "idle";
  /** When it entered that state (ms, performance clock). */
  since: number;
  /**
   * The event loop has polled its socket at least once since it was accepted: bytes its client had sent by then were
   * read (and a request in them seen). Until then a busy hub, not the client, may be why it looks silent.
   */
  polled: boolean;
  /** Its current or last request carried a valid key: not counted. */
  keyed: boolean;
}

/**
 * Caps the connections without a key: when an address (or all addresses together) is over its cap, its oldest
 * connections that may be closed are closed until it is not. Those are: idle ones (between requests); silent ones
 * that sent nothing for `silentConnectionGraceMs` and whose socket the event loop has read since (a hub busy with a
 * burst has not looked at it yet); and ones whose request without a key has been arriving or waiting for its
 * answer that long (a slow body). A client that just connected, or just started a request, is never cut: a burst
 * of keyed clients on one address shows its keys first. A connection whose request carries a valid key or run token
 * is never counted, so a held long poll or stream with a key is never closed.
 */
export function guardConnections(server: Server, isKeyed: (req: IncomingMessage) => boolean, limits: EdgeLimits): void {
  const byAddress = new Map<string, Set<Connection>>();
  const all = new Set<Connection>();
  const bySocket = new WeakMap<Socket, Connection>();
  let recheck: NodeJS.Timeout | null = null;
  const count = (c: Connection) => {
    let set = byAddress.get(c.address);
    if (!set) byAddress.set(c.address, (set = new Set()));
    set.add(c);
    all.add(c);
  };
  const uncount = (c: Connection) => {
    const set = byAddress.get(c.address);
    set?.delete(c);
    if (set?.size === 0) byAddress.delete(c.address);
    all.delete(c);
  };
  const closable = (c: Connection, now: number) =>
    c.state === "idle" || (now - c.since >= limits.silentConnectionGraceMs && (c.state === "receiving" || c.polled));
  /** Closes the oldest closable connections of `set` until it holds `max`; true when it is still over (young ones stay). */
  const trim = (set: Set<Connection>, max: number, now: number): boolean => {
    if (set.size <= max) return false;
    for (const c of [...set]) {
      if (set.size <= max) return false;
      if (!closable(c, now)) continue;
      uncount(c);
      c.socket.destroy();
    }
    return set.size > max;
  };
  const enforce = (address: string) => {
    const now = performance.now();
    const set = byAddress.get(address);
    const addressWaits = set ? trim(set, limits.anonymousConnectionsPerAddressMax, now) : false;
    const allWait = trim(all, limits.anonymousConnectionsMax, now);
    if ((addressWaits || allWait) && !recheck) {
      recheck = setTimeout(() => {
        recheck = null;
        for (const a of [...byAddress.keys()]) enforce(a);
      }, limits.silentConnectionGraceMs);
      recheck.unref();
    }
  };
  server.on("connection", (socket: Socket) => {
    const c: Connection = { socket, address: socket.remoteAddress ?? "", state: "silent", since: performance.now(), polled: false, keyed: false };
    bySocket.set(socket, c);
    // Accepted in this turn's poll phase; an immediate queued from an immediate runs after the next poll phase.
    setImmediate(() => setImmediate(() => (c.polled = true)));
    count(c);
    enforce(c.address);
    socket.once("close", () => uncount(c));
  });
  server.once("close", () => {
    if (recheck) clearTimeout(recheck);
  });
  server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
    const c = bySocket.get(req.socket);
    if (!c || c.socket.destroyed) return;
    if (isKeyed(req)) {
      c.keyed = true;
      uncount(c);
      return;
    }
    c.keyed = false;
    c.state = "receiving";
    c.since = performance.now();
    res.once("finish", () => {
      if (c.state === "receiving" && !c.keyed) {
        c.state = "idle";
        c.since = performance.now();
      }
    });
    count(c);
    enforce(c.address);
  });
}
