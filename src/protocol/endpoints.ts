/**
 * Every /v1 endpoint once (protocol.md): its method and path, who may call it, the definitions of its query string,
 * body and answer (definitions.ts), and the protocol section it belongs to. The hub's routes (src/host/routes/),
 * its one validating middleware and the client (client.ts) all read this table, so a path, a permission or a shape
 * is written in one place. Plain data: loading it loads no schema library.
 */
import type { Static } from "@sinclair/typebox";
import type { KeyKind } from "../kernel/states.js";
import type { Validated } from "./validate.js";
import type { ResponseName } from "./responses.js";
import type { definitions } from "./definitions.js";

/** Who may call an endpoint (protocol.md 谁能做什么). */
export type Auth =
  /** A key of one of these kinds, checked before the body is read: none → 401, unknown → 401, another kind → 403. */
  | readonly KeyKind[]
  /** The run's current token (path `:id`), checked before the body is read: none → 401, no run → 404, wrong → 403. */
  | "run"
  /** A webhook: the source's adapter checks the signature; every refusal before the body is the same 401. */
  | "webhook"
  /** Anyone. */
  | "none";

/** The sections of the protocol, one route module each (src/host/routes/<section>.ts). */
export type Section = "events" | "work" | "cards" | "owner" | "stream" | "keys" | "tools" | "console" | "plugins" | "metrics";

/** One endpoint of the table. */
export interface EndpointSpec {
  section: Section;
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** The path, with `:name` for a path parameter. */
  path: string;
  /** Other paths the same endpoint answers at (the names other specifications give it). */
  aliases?: readonly string[];
  auth: Auth;
  /** The definition of the query string (all values strings), when it has one. */
  query?: Validated;
  /** A query value a request header gives instead, when present: query field → header name. */
  queryHeaders?: Readonly<Record<string, string>>;
  /** The definition of the JSON body, when it has one; bodies of endpoints without one are not read. */
  body?: Validated;
  /** An empty body counts as `{}` (protocol.md: 请求体可以为空). */
  emptyBody?: boolean;
  /**
   * Any JSON value is a body (issue 34 #4, corlinman's callbacks): one that is not an object whose `status` is
   * `success` or `error` is taken as `{"status": "success", "result": <the body>}`, then checked as `body`.
   */
  anyJson?: boolean;
  /** The definition of a 2xx answer; for the stream, of each event's data. */
  response: ResponseName;
  /** The answer is a stream of server-sent events, not one JSON body. */
  stream?: boolean;
  /** The answer is newline-delimited JSON (NDJSON), one `response` per line, written as it happens; not one JSON body. */
  lines?: boolean;
  /**
   * The owner console's session cookie stands for the owner key that made it (issue 17; src/host/console-session.ts).
   * Only owner endpoints the console uses have it (its Plugins view reads plugins, tools, panels and settings): keys and console sign-in take the
   * key itself, and every other endpoint ignores the cookie.
   */
  cookie?: boolean;
}

/** The /v1 endpoints, by name. */
export const endpoints = {
  health: { section: "owner", method: "GET", path: "/v1/health", auth: "none", response: "Health" },

  postEvent: { section: "events", method: "POST", path: "/v1/events", auth: ["source"], body: "EventIn", response: "EventAccepted" },
  webhook: { section: "events", method: "POST", path: "/v1/in/:source", auth: "webhook", response: "EventsAccepted" },
  tell: { section: "events", method: "POST", path: "/v1/tell", auth: ["source", "worker"], body: "TellBody", response: "TellAnswer" },

  work: { section: "work", method: "GET", path: "/v1/work", auth: ["worker"], query: "WorkQuery", response: "WorkAnswer" },
  started: { section: "work", method: "POST", path: "/v1/runs/:id/started", auth: "run", body: "Started", emptyBody: true, response: "Ok" },
  result: { section: "work", method: "POST", path: "/v1/runs/:id/result", auth: "run", body: "Result", response: "ResultAnswer" },

  cardsNext: { section: "cards", method: "GET", path: "/v1/cards/next", auth: ["channel"], query: "CardsNextQuery", response: "CardNext" },
  delivered: { section: "cards", method: "POST", path: "/v1/cards/:id/delivered", auth: ["channel"], body: "Delivered", response: "Ok" },
  failed: { section: "cards", method: "POST", path: "/v1/cards/:id/failed", auth: ["channel"], body: "Failed", response: "Ok" },
  answer: { section: "cards", method: "POST", path: "/v1/cards/:id/answer", auth: ["channel", "owner"], body: "Answer", response: "AnswerAnswer", cookie: true },
  card: { section: "cards", method: "GET", path: "/v1/cards/:id", auth: ["owner"], response: "CardAnswer", cookie: true },
  resolve: { section: "cards", method: "POST", path: "/v1/cards/:id/resolve", auth: ["owner"], body: "ResolveCard", emptyBody: true, response: "Changed", cookie: true },

  state: { section: "owner", method: "GET", path: "/v1/state", auth: ["owner"], query: "StateQuery", response: "State", cookie: true },
  events: { section: "owner", method: "GET", path: "/v1/events", auth: ["owner"], query: "EventsQuery", response: "EventsPage", cookie: true },
  search: { section: "owner", method: "GET", path: "/v1/search", auth: ["owner"], query: "SearchQuery", response: "SearchAnswer", cookie: true },
  cancel: { section: "owner", method: "POST", path: "/v1/runs/:id/cancel", auth: ["owner"], body: "CancelRun", emptyBody: true, response: "CancelAnswer", cookie: true },
  pause: { section: "owner", method: "POST", path: "/v1/rules/:name/pause", auth: ["owner"], body: "PauseBody", emptyBody: true, response: "PauseAnswer", cookie: true },
  resume: { section: "owner", method: "POST", path: "/v1/rules/:name/resume", auth: ["owner"], body: "ResumeBody", emptyBody: true, response: "ResumeAnswer", cookie: true },
  runNow: { section: "owner", method: "POST", path: "/v1/rules/:name/run", auth: ["owner"], body: "RunNowBody", emptyBody: true, response: "RunNowAnswer", cookie: true },

  stream: { section: "stream", method: "GET", path: "/v1/stream", auth: ["owner"], query: "StreamQuery", queryHeaders: { after: "last-event-id" }, response: "Fact", stream: true, cookie: true },
  why: { section: "stream", method: "GET", path: "/v1/runs/:id/why", auth: ["owner"], response: "Why", cookie: true },
  artifactPut: { section: "work", method: "PUT", path: "/v1/runs/:id/artifacts/:file", auth: "run", body: "ArtifactBody", response: "ArtifactStored" },
  transcriptPost: { section: "work", method: "POST", path: "/v1/runs/:id/transcript", auth: "run", body: "TranscriptBody", response: "TranscriptStored" },
  transcript: { section: "stream", method: "GET", path: "/v1/runs/:id/transcript", auth: ["owner"], query: "TranscriptQuery", response: "Transcript", cookie: true },
  artifact: { section: "stream", method: "GET", path: "/v1/runs/:id/artifacts/:file", auth: ["owner"], response: "ArtifactText", cookie: true },

  keyNew: { section: "keys", method: "POST", path: "/v1/keys/:kind/:name", auth: ["owner"], response: "KeyNew" },
  keyRemove: { section: "keys", method: "DELETE", path: "/v1/keys/:kind/:name", auth: ["owner"], response: "Changed" },

  tools: { section: "tools", method: "GET", path: "/v1/tools", aliases: ["/api/tools"], auth: ["owner"], response: "Tools", cookie: true },
  toolCall: { section: "tools", method: "POST", path: "/v1/runs/:id/tools/calls", auth: "run", body: "ToolCallBody", response: "ToolCallDecision" },
  toolCallGet: { section: "tools", method: "GET", path: "/v1/runs/:id/tools/calls/:call", auth: "run", query: "ToolWaitQuery", response: "ToolCallDecision" },
  toolCallOutcome: { section: "tools", method: "POST", path: "/v1/runs/:id/tools/calls/:call/outcome", auth: "run", body: "ToolOutcomeBody", response: "Ok" },
  toolCallResult: { section: "tools", method: "GET", path: "/v1/runs/:id/tools/calls/:call/result", auth: "run", query: "ToolWaitQuery", response: "ToolCallResult" },
  ownerToolCall: { section: "tools", method: "POST", path: "/v1/tools/calls", auth: ["owner"], body: "ToolCallBody", response: "ToolCallDecision" },
  ownerToolCallOutcome: { section: "tools", method: "POST", path: "/v1/tools/calls/:call/outcome", auth: ["owner"], body: "ToolOutcomeBody", response: "Ok" },
  ownerToolCallResult: { section: "tools", method: "GET", path: "/v1/tools/calls/:call/result", auth: ["owner"], query: "ToolWaitQuery", response: "ToolCallResult" },
  ownerToolInvoke: { section: "tools", method: "POST", path: "/v1/tools/invoke", auth: ["owner"], body: "ToolInvokeBody", response: "ToolInvokeLine", lines: true },
  pluginCallback: { section: "tools", method: "POST", path: "/v1/plugins/callback/:task", aliases: ["/plugin-callback/:task"], auth: "none", body: "PluginCallbackBody", anyJson: true, response: "Ok" },
  pluginCallbackKeyed: { section: "tools", method: "POST", path: "/v1/plugins/callback/:key/:task", auth: "none", body: "PluginCallbackBody", anyJson: true, response: "Ok" },

  consoleSignIn: { section: "console", method: "POST", path: "/v1/console/sign-in", auth: ["owner"], response: "ConsoleLink" },
  consoleEnd: { section: "console", method: "DELETE", path: "/v1/console/sessions", auth: ["owner"], response: "ConsoleEnded" },
  consoleSessions: { section: "console", method: "GET", path: "/v1/console/sessions", auth: ["owner"], response: "ConsoleSessions" },
  consoleEndOne: { section: "console", method: "DELETE", path: "/v1/console/sessions/:session", auth: ["owner"], response: "ConsoleEnded" },

  plugins: { section: "plugins", method: "GET", path: "/v1/plugins", aliases: ["/api/plugins"], auth: ["owner"], response: "Plugins", cookie: true },
  pluginsReload: { section: "plugins", method: "POST", path: "/v1/plugins/reload", aliases: ["/api/plugins/reload"], auth: ["owner"], response: "PluginsReload", cookie: true },
  pluginSettings: { section: "plugins", method: "GET", path: "/v1/plugins/:id/settings", auth: ["owner"], response: "PluginSettings", cookie: true },
  pluginSettingSet: { section: "plugins", method: "POST", path: "/v1/plugins/:id/settings/:key", auth: ["owner"], body: "PluginSettingBody", response: "PluginSettingAnswer", cookie: true },
  pluginUi: { section: "plugins", method: "GET", path: "/v1/plugins/:id/ui", auth: ["owner"], response: "PluginUi", cookie: true },
  pluginEvent: { section: "plugins", method: "POST", path: "/v1/plugins/:id/events", auth: ["owner"], body: "PluginEventBody", response: "EventAccepted", cookie: true },

  // Outside /v1, where Prometheus looks by default; a `metrics` key reads this and nothing else (issue 32).
  metrics: { section: "metrics", method: "GET", path: "/metrics", auth: ["owner", "metrics"], response: "MetricsText" },
} as const satisfies Record<string, EndpointSpec>;

/** The name of an endpoint. */
export type EndpointName = keyof typeof endpoints;

type Spec<E extends EndpointName> = (typeof endpoints)[E];
/** The value a definition describes, by its name. */
type Shape<N> = N extends keyof typeof definitions ? Static<(typeof definitions)[N]> : never;
/** The JSON body endpoint `E` takes (undefined: it reads none). */
export type BodyOf<E extends EndpointName> = Spec<E> extends { body: infer B } ? Shape<B> : undefined;
/** The query string of endpoint `E`, each value a string (undefined: it reads none). */
export type QueryOf<E extends EndpointName> = Spec<E> extends { query: infer Q } ? Shape<Q> : undefined;
/** What endpoint `E` answers with 2xx (for the stream: each event's data). */
export type ResponseOf<E extends EndpointName> = Shape<Spec<E>["response"]>;
/** The path parameters of endpoint `E`. */
export type ParamsOf<E extends EndpointName> = PathParams<Spec<E>["path"]>;

/** The path parameters of a path pattern: `/v1/runs/:id/why` → `{ id }`. */
export type PathParams<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? { [K in Name]: string | number } & PathParams<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? { [K in Name]: string | number }
    : Record<never, never>;

/**
 * The path of an endpoint with its parameters filled in, each URL-encoded.
 * @throws Error when a parameter is missing (a bug of the caller: the types require every one).
 */
export function pathOf(pattern: string, params: Record<string, string | number>): string {
  return pattern.replace(/:(\w+)/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined) throw new Error(`${pattern}: no value for :${name}`);
    return encodeURIComponent(String(v));
  });
}
