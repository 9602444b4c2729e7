/**
 * The HTTP edge against slow and hostile clients (issue 14): the Node server's header and body timeouts, and a cap on
 * connections that carry no valid key, per client address and over all. Workers, channels and the CLI share an
 * address with whoever else runs on the machine (127.0.0.1), so a request whose headers carry a valid key or run
 * token takes its connection out of the count: a flood without keys cannot lock out the hub's own worker.
 */
import type { IncomingMessage, Server, ServerOptions } from "node:http";
import type { Socket } from "node:net";
import type { Hub } from "./hub.js";
import { bearerOf, runTokenValid } from "./http.js";
import { hashKey } from "../kernel/credentials.js";
import { callerOf } from "../kernel/decide.js";
import * as L from "../kernel/limits.js";

/** The edge's limits (src/kernel/limits.ts); tests shorten them. */
export interface EdgeLimits {
  requestHeadersTimeoutMs: number;
  requestBodyTimeoutMs: number;
  timeoutCheckIntervalMs: number;
  anonymousConnectionsPerAddressMax: number;
  anonymousConnectionsMax: number;
}

export const edgeLimits: EdgeLimits = {
  requestHeadersTimeoutMs: L.requestHeadersTimeoutMs,
  requestBodyTimeoutMs: L.requestBodyTimeoutMs,
  timeoutCheckIntervalMs: L.timeoutCheckIntervalMs,
  anonymousConnectionsPerAddressMax: L.anonymousConnectionsPerAddressMax,
  anonymousConnectionsMax: L.anonymousConnectionsMax,
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

/** Whether a request's headers carry a valid key (any kind) or, on its run's started/result path, the run's token. */
export function keyedRequest(hub: Hub): (req: IncomingMessage) => boolean {
  return (req) => {
    const token = bearerOf(req.headers.authorization);
    if (!token) return false;
    try {
      if (callerOf(hub.store.view, hashKey(token))) return true;
      const m = /^\/v1\/runs\/([1-9]\d{0,14})\/(?:started|result)(?:\?|$)/.exec(req.url ?? "");
      return m !== null && runTokenValid(hub, Number(m[1]), token);
    } catch {
      return false; // a closing store: count it as without a key
    }
  };
}

interface Connection {
  socket: Socket;
  address: string;
  /** Its current or last request carried a valid key: not counted. */
  keyed: boolean;
  /** It sent a request without a key (closed before ones that have not spoken yet). */
  spoke: boolean;
}

/**
 * Caps the connections without a key: a new connection, or a request without a key, that puts an address (or all
 * addresses) over its cap closes the oldest other such connection there — one that already sent a request without a
 * key first, else one that has not spoken yet (a worker's new connection is the newest, so it is the last to go).
 * A held long poll or stream with a key is never closed.
 */
export function guardConnections(server: Server, isKeyed: (req: IncomingMessage) => boolean, limits: EdgeLimits): void {
  const byAddress = new Map<string, Set<Connection>>();
  const all = new Set<Connection>();
  const bySocket = new WeakMap<Socket, Connection>();
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
  /** Closes the oldest connection of `set` other than `keep`, preferring one that spoke; false when there is none. */
  const closeOldest = (set: Set<Connection>, keep: Connection): boolean => {
    let pick: Connection | undefined;
    for (const c of set) {
      if (c === keep) continue;
      if (c.spoke) {
        pick = c;
        break;
      }
      pick ??= c;
    }
    if (!pick) return false;
    uncount(pick);
    pick.socket.destroy();
    return true;
  };
  const enforce = (c: Connection) => {
    while ((byAddress.get(c.address)?.size ?? 0) > limits.anonymousConnectionsPerAddressMax && closeOldest(byAddress.get(c.address)!, c));
    while (all.size > limits.anonymousConnectionsMax && closeOldest(all, c));
  };
  server.on("connection", (socket: Socket) => {
    const c: Connection = { socket, address: socket.remoteAddress ?? "", keyed: false, spoke: false };
    bySocket.set(socket, c);
    count(c);
    enforce(c);
    socket.once("close", () => uncount(c));
  });
  server.prependListener("request", (req: IncomingMessage) => {
    const c = bySocket.get(req.socket);
    if (!c || c.socket.destroyed) return;
    if (isKeyed(req)) {
      c.keyed = true;
      uncount(c);
      return;
    }
    c.keyed = false;
    c.spoke = true;
    count(c);
    enforce(c);
  });
}
