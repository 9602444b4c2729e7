/**
 * The HTTP client every part of agent-autoloop uses to talk to a hub: worker, channels, CLI, MCP, conformance.
 * One bearer key (or run token) per call; JSON in, JSON out; non-2xx answers become `HubError`.
 */

export class HubError extends Error {
  constructor(readonly status: number, readonly body: unknown, message: string) {
    super(message);
  }
}

export interface CallOptions {
  method?: "GET" | "POST" | "DELETE";
  body?: unknown;
  /** Bearer key or run token for this call; defaults to the client's key. */
  auth?: string | null;
  signal?: AbortSignal;
}

/** A client of one hub at `url` (e.g. `http://127.0.0.1:8787`) holding one key. */
export class HubClient {
  constructor(readonly url: string, readonly key: string | null) {}

  /**
   * Calls `path` and returns the parsed JSON answer.
   * @throws HubError for an HTTP error answer (with the hub's `error` text); the fetch error when unreachable.
   */
  async call<T = unknown>(path: string, opts: CallOptions = {}): Promise<T> {
    const auth = opts.auth === undefined ? this.key : opts.auth;
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = `Bearer ${auth}`;
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(this.url.replace(/\/$/, "") + path, {
      method: opts.method ?? (opts.body === undefined ? "GET" : "POST"),
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
    });
    const text = await res.text();
    let data: unknown = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = { error: text };
    }
    if (!res.ok) {
      const msg = (data as { error?: string } | null)?.error ?? `HTTP ${res.status}`;
      throw new HubError(res.status, data, msg);
    }
    return data as T;
  }

  postEvent(event: unknown) {
    return this.call<{ event: number; duplicate: boolean; routed: string[]; paused: string[] }>("/v1/events", { body: event });
  }

  work(q: { claim: string; wait: number; running: number[]; capacity: number }, signal?: AbortSignal) {
    const qs = new URLSearchParams({ claim: q.claim, wait: String(q.wait), running: q.running.join(","), capacity: String(q.capacity) });
    return this.call<{ job: WorkJob | null; cancel: number[] }>(`/v1/work?${qs}`, { signal });
  }

  started(run: number, token: string, body: { session?: string | null; link?: string | null }) {
    return this.call(`/v1/runs/${run}/started`, { body, auth: token });
  }

  result(run: number, token: string, body: unknown) {
    return this.call<{ rejected: unknown[] }>(`/v1/runs/${run}/result`, { body, auth: token });
  }

  nextCard(wait: number, signal?: AbortSignal) {
    return this.call<{ card: ChannelCardView | null }>(`/v1/cards/next?wait=${wait}`, { signal });
  }

  delivered(card: number, version: number, ref: string) {
    return this.call(`/v1/cards/${card}/delivered`, { body: { version, ref } });
  }

  failed(card: number, version: number, error: string) {
    return this.call(`/v1/cards/${card}/failed`, { body: { version, error } });
  }

  answer(card: number, body: { choice?: number; text?: string; by?: string; ref?: string }) {
    return this.call(`/v1/cards/${card}/answer`, { body });
  }

  resolve(card: number, reason?: string) {
    return this.call<{ ok: boolean; changed: boolean }>(`/v1/cards/${card}/resolve`, { body: reason ? { reason } : {} });
  }

  cancel(run: number) {
    return this.call<{ ok: boolean; changed: boolean; state: string }>(`/v1/runs/${run}/cancel`, { body: {} });
  }

  state(before?: number) {
    return this.call<Record<string, unknown>>(`/v1/state${before ? `?before=${before}` : ""}`);
  }

  pause(rule: string, body: { reason?: string; until?: string }) {
    return this.call<{ changed: boolean; rule: string; paused: Record<string, unknown> }>(`/v1/rules/${encodeURIComponent(rule)}/pause`, { body });
  }

  resume(rule: string) {
    return this.call<{ changed: boolean; rule: string }>(`/v1/rules/${encodeURIComponent(rule)}/resume`, { body: {} });
  }

  runNow(rule: string, body: { subject?: string; reason?: string }) {
    return this.call<{ event: number; run: number }>(`/v1/rules/${encodeURIComponent(rule)}/run`, { body });
  }

  keyNew(kind: string, name: string) {
    return this.call<{ key: string }>(`/v1/keys/${encodeURIComponent(kind)}/${encodeURIComponent(name)}`, { method: "POST" });
  }

  keyRemove(kind: string, name: string) {
    return this.call<{ ok: boolean; changed: boolean }>(`/v1/keys/${encodeURIComponent(kind)}/${encodeURIComponent(name)}`, { method: "DELETE" });
  }
}

/** The job as a worker receives it (protocol.md Job). */
export interface WorkJob {
  run: number;
  token: string;
  attempt: number;
  rule: { name: string; cwd: string | null; skill: string | null; prompt: string | null };
  agent: {
    id: string; name: string; use: string; model: string | null; effort: string | null; access: string;
    command: string[] | null; program: string | null;
    /** Hide the worker's home from the agent with bubblewrap where it can (absent: true). */
    sandbox?: boolean;
    /** Names of the worker's environment variables the agent also gets (`NAME_*`: a prefix; absent: none). */
    env?: string[];
  };
  session: string | null;
  askFirst: string[];
  context: Record<string, unknown[]>;
}

/** The card as a channel receives it (protocol.md 通道). */
export interface ChannelCardView {
  id: number; version: number; ref: string | null; kind: "ask" | "notice"; fyi: boolean; state: string;
  title: string; text: string; options: string[]; recommend: number | null; choice: number | null;
  answer: string | null; by: string | null; result: string | null; link: string | null; rule: string | null; at: string;
}
