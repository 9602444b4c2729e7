/**
 * The HTTP client every part of agent-autoloop uses to talk to a hub: worker, channels, CLI, MCP, conformance.
 * One bearer key (or run token) per call; JSON in, JSON out. Paths, bodies and answers come from the endpoint table
 * (endpoints.ts) and the protocol's definitions: every answer is checked against its published shape before a caller
 * sees it (response-check.ts), so callers get typed values and never cast a body. A non-2xx answer is a `HubError`;
 * a 2xx answer of the wrong shape is a `ProtocolError`.
 */
import { shown, type Lang } from "../i18n/messages.js";
import type { ErrorObject } from "ajv";
import { endpoints, pathOf, type BodyOf, type EndpointName, type EndpointSpec, type ParamsOf, type QueryOf } from "./endpoints.js";
import { checkResponse, type ResponseShape } from "./response-check.js";
import type { Answer, EventIn, PauseBody, PluginCallbackBody, Result, RunNowBody, Started, TellBody, ToolCallBody, ToolInvokeBody, ToolOutcomeBody } from "./schema.js";
import { toolInvokeLineMaxBytes } from "../kernel/limits.js";
import type { KeyKind } from "../kernel/states.js";

/** The hub refused a call (4xx, 5xx): its status, and its `{ error }` text when it sent one. */
export class HubError extends Error {
  /**
   * @param error the hub's text (its language), null when the body was no refusal
   * @param code the refusal's message id and `params` its parameters (issue 27 #2; a hub before it sends neither)
   */
  constructor(readonly status: number, readonly error: string | null, message: string, readonly code?: string, readonly params?: unknown) {
    super(message);
  }

  /** The refusal in `lang`: worded anew from `code` + `params` when this client knows the code, else the hub's words. */
  shownIn(lang: Lang): string {
    return shown(lang, { code: this.code, params: this.params }, this.message);
  }
}

/** A hub answered a call with a body that is not the endpoint's published shape (another version, or not a hub). */
export class ProtocolError extends Error {
  constructor(readonly endpoint: EndpointName, readonly field: string, readonly problem: ErrorObject) {
    super(`the answer to ${endpoints[endpoint].method} ${endpoints[endpoint].path} does not match the protocol: ${field}: ${problem.keyword} ${JSON.stringify(problem.params)}`);
  }
}

/** An answer's body as JSON: null when empty, `{ error: <the text> }` when it is not JSON. */
function jsonOf(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return { error: text };
  }
}

/** The HubError of a non-2xx answer: the refusal's text, message id and params when its body is one. */
function hubErrorOf(status: number, data: unknown): HubError {
  const refusal = checkResponse("ErrorBody", data);
  const error = refusal.ok ? refusal.value.error : null;
  return new HubError(status, error, error ?? `HTTP ${status}`, refusal.ok ? refusal.value.code : undefined, refusal.ok ? refusal.value.params : undefined);
}

/** How one call is made: with which credential, and a signal that aborts it (a long poll the caller gives up). */
export interface CallOptions {
  /** Bearer key or run token for this call; defaults to the client's key. */
  auth?: string | null;
  signal?: AbortSignal;
}

/** What one call of endpoint `E` sends: its path parameters, query string and body, as the table defines them. */
export type RequestOf<E extends EndpointName> =
  & (keyof ParamsOf<E> extends never ? { params?: undefined } : { params: ParamsOf<E> })
  & (QueryOf<E> extends undefined ? { query?: undefined } : { query: QueryOf<E> })
  & (BodyOf<E> extends undefined ? { body?: undefined } : { body: BodyOf<E> });

/** What endpoint `E` answers, as the client hands it on. */
export type AnswerOf<E extends EndpointName> = ResponseShape<(typeof endpoints)[E]["response"]>;

/** A client of one hub at `url` (e.g. `http://127.0.0.1:8787`) holding one key. */
export class HubClient {
  constructor(readonly url: string, readonly key: string | null) {}

  /**
   * Calls endpoint `name` and returns its answer, checked against the endpoint's published shape.
   * @throws HubError for an HTTP error answer (with the hub's `error` text); ProtocolError for a 2xx answer of
   *   another shape; the fetch error when the hub cannot be reached.
   */
  async request<E extends EndpointName>(name: E, req: RequestOf<E>, opts: CallOptions = {}): Promise<AnswerOf<E>> {
    const spec: EndpointSpec = endpoints[name];
    const qs = new URLSearchParams(Object.entries(req.query ?? {}).filter((e): e is [string, string] => typeof e[1] === "string")).toString();
    const query = qs ? `?${qs}` : "";
    const auth = opts.auth === undefined ? this.key : opts.auth;
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = `Bearer ${auth}`;
    if (req.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(this.url.replace(/\/$/, "") + pathOf(spec.path, req.params ?? {}) + query, {
      method: spec.method,
      headers,
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal: opts.signal,
    });
    const data = jsonOf(await res.text());
    if (!res.ok) throw hubErrorOf(res.status, data);
    const response = endpoints[name].response;
    const checked = checkResponse(response, data);
    if (!checked.ok) throw new ProtocolError(name, checked.field, checked.error);
    return checked.value;
  }

  /** GET /v1/health (no key needed). */
  health() {
    return this.request("health", {});
  }

  /** POST /v1/events with a source key (protocol.md 来源). */
  postEvent(event: EventIn) {
    return this.request("postEvent", { body: event });
  }

  /** POST /v1/tell with a source or worker key. */
  tell(body: TellBody) {
    return this.request("tell", { body });
  }

  /** GET /v1/work: heartbeat and long poll for a job (`wait` in seconds). */
  work(q: { claim: string; wait: number; running: number[]; capacity: number; seq?: number }, signal?: AbortSignal) {
    const query = { claim: q.claim, wait: String(q.wait), running: q.running.join(","), capacity: String(q.capacity), ...(q.seq === undefined ? {} : { seq: String(q.seq) }) };
    return this.request("work", { query }, { signal });
  }

  /** POST /v1/runs/:id/started with the run's token. */
  started(run: number, token: string, body: Started) {
    return this.request("started", { params: { id: run }, body }, { auth: token });
  }

  /** POST /v1/runs/:id/result with the run's token; a lost answer is replayed with the same body. */
  result(run: number, token: string, body: Result) {
    return this.request("result", { params: { id: run }, body }, { auth: token });
  }

  /** PUT /v1/runs/:id/artifacts/:file with the run's token: a file the run's workflow wrote (issue 18); the same file again replaces it. */
  artifactPut(run: number, token: string, file: string, text: string) {
    return this.request("artifactPut", { params: { id: run, file }, body: { text } }, { auth: token });
  }
  /** GET /v1/cards/next: long poll for the card to send or update (`wait` in seconds). */
  nextCard(wait: number, signal?: AbortSignal) {
    return this.request("cardsNext", { query: { wait: String(wait) } }, { signal });
  }

  /** POST /v1/cards/:id/delivered: the channel sent `version` of the card as its message `ref`. */
  delivered(card: number, version: number, ref: string) {
    return this.request("delivered", { params: { id: card }, body: { version, ref } });
  }

  /** POST /v1/cards/:id/failed: the channel could not send `version` of the card. */
  failed(card: number, version: number, error: string) {
    return this.request("failed", { params: { id: card }, body: { version, error } });
  }

  /** POST /v1/cards/:id/answer: a channel relays an answer ({choice|text, by, ref}) or the owner answers. */
  answer(card: number, body: Answer) {
    return this.request("answer", { params: { id: card }, body });
  }

  /** POST /v1/cards/:id/resolve: the owner closes a card. */
  resolve(card: number, reason?: string) {
    return this.request("resolve", { params: { id: card }, body: reason ? { reason } : {} });
  }

  /** POST /v1/runs/:id/cancel: the owner stops a run. */
  cancel(run: number) {
    return this.request("cancel", { params: { id: run }, body: {} });
  }

  /** GET /v1/state: the owner's whole picture; `before` pages to older runs. */
  state(before?: number) {
    return this.request("state", { query: before ? { before: String(before) } : {} });
  }

  /** GET /v1/cards/:id: one card as the owner sees it, whatever its state. */
  card(id: number) {
    return this.request("card", { params: { id } });
  }

  /** GET /v1/runs/:id/why: the facts about one run. */
  why(run: number) {
    return this.request("why", { params: { id: run } });
  }

  /** POST /v1/rules/:name/pause. */
  pause(rule: string, body: PauseBody) {
    return this.request("pause", { params: { name: rule }, body });
  }

  /** POST /v1/rules/:name/resume. */
  resume(rule: string) {
    return this.request("resume", { params: { name: rule }, body: {} });
  }

  /** POST /v1/rules/:name/run: run a rule now through normal dispatch. */
  runNow(rule: string, body: RunNowBody) {
    return this.request("runNow", { params: { name: rule }, body });
  }

  /** POST /v1/keys/:kind/:name: a new key (shown once). */
  keyNew(kind: KeyKind, name: string) {
    return this.request("keyNew", { params: { kind, name } });
  }

  /** DELETE /v1/keys/:kind/:name. */
  keyRemove(kind: KeyKind, name: string) {
    return this.request("keyRemove", { params: { kind, name } });
  }

  /** GET /v1/tools: the tools of the hub's home, with their plugin, kind and approval mode. */
  tools() {
    return this.request("tools", {});
  }

  /** POST /v1/console/sign-in: a one-time sign-in link to the owner console (issue 17). */
  consoleSignIn() {
    return this.request("consoleSignIn", {});
  }

  /** DELETE /v1/console/sessions: ends every owner console session. */
  consoleEnd() {
    return this.request("consoleEnd", {});
  }

  /** GET /v1/console/sessions: the live owner console sessions (issue 30). */
  consoleSessions() {
    return this.request("consoleSessions", {});
  }

  /** DELETE /v1/console/sessions/:session: ends one owner console session by its name; `ended` 0 when none has it. */
  consoleEndOne(session: string) {
    return this.request("consoleEndOne", { params: { session } });
  }

  /**
   * POST /v1/runs/:id/tools/calls with the run's token: asks the hub to decide an agent's tool call before it runs
   * (issue 16). Answers `{call, decision, card?, reason?, waitUntil?}`; run the tool only on `allow`.
   */
  toolCall(run: number, token: string, body: ToolCallBody) {
    return this.request("toolCall", { params: { id: run }, body }, { auth: token });
  }

  /**
   * GET /v1/runs/:id/tools/calls/:call with the run's token: the call's decision now; while it is `prompt` the hub
   * holds the answer up to `waitSeconds` (and never past the call's `waitUntil`) for the owner's answer.
   */
  toolCallWait(run: number, token: string, call: number, waitSeconds: number, signal?: AbortSignal) {
    return this.request("toolCallGet", { params: { id: run, call }, query: { waitSeconds: String(waitSeconds) } }, { auth: token, signal });
  }

  /** POST /v1/runs/:id/tools/calls/:call/outcome with the run's token: how an allowed call ended (`parked`: with its task id). */
  toolCallOutcome(run: number, token: string, call: number, body: ToolOutcomeBody) {
    return this.request("toolCallOutcome", { params: { id: run, call }, body }, { auth: token });
  }

  /** GET /v1/runs/:id/tools/calls/:call/result with the run's token: a parked call's end, held up to `waitSeconds` while pending. */
  toolCallResult(run: number, token: string, call: number, waitSeconds: number, signal?: AbortSignal) {
    return this.request("toolCallResult", { params: { id: run, call }, query: { waitSeconds: String(waitSeconds) } }, { auth: token, signal });
  }

  /** POST /v1/tools/calls with an owner key: the owner's own call (`plugins invoke`, session key `owner:<key name>`). */
  ownerToolCall(body: ToolCallBody) {
    return this.request("ownerToolCall", { body });
  }

  /** POST /v1/tools/calls/:call/outcome with an owner key: how the owner's call ended. */
  ownerToolCallOutcome(call: number, body: ToolOutcomeBody) {
    return this.request("ownerToolCallOutcome", { params: { call }, body });
  }

  /** GET /v1/tools/calls/:call/result with an owner key: the end of the owner's parked call, held up to `waitSeconds`. */
  ownerToolCallResult(call: number, waitSeconds: number, signal?: AbortSignal) {
    return this.request("ownerToolCallResult", { params: { call }, query: { waitSeconds: String(waitSeconds) } }, { signal });
  }

  /**
   * POST /v1/tools/invoke with an owner key: the owner's call run by the hub's tool host (`plugins invoke`). Hands each
   * line of the answer to `onLine` as it comes, checked against its published shape (empty lines, which only say the
   * call still runs, are skipped); resolves when the answer ends — with its last line having been `end` or `error`, or
   * cut short (a hub that stopped mid-call: the caller tells by what it was handed).
   * @param lang sent as Accept-Language: the hub words what it says of this call in it
   * @throws HubError when the hub refuses the request (4xx, 5xx); ProtocolError for a line of another shape or one
   *   longer than `toolInvokeLineMaxBytes`; the fetch error when the hub cannot be reached.
   */
  async ownerToolInvoke(body: ToolInvokeBody, lang: Lang, onLine: (line: AnswerOf<"ownerToolInvoke">) => void): Promise<void> {
    const spec = endpoints.ownerToolInvoke;
    const headers: Record<string, string> = { "content-type": "application/json", "accept-language": lang };
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    const res = await fetch(this.url.replace(/\/$/, "") + spec.path, { method: spec.method, headers, body: JSON.stringify(body) });
    if (!res.ok || !res.body) {
      // Read as any other answer: the refusal's text, code and params.
      throw hubErrorOf(res.status, jsonOf(await res.text()));
    }
    const decoder = new TextDecoder("utf-8", { fatal: true });
    let pending = "";
    const take = (text: string) => {
      if (text.trim() === "") return;
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch {
        data = text;
      }
      const checked = checkResponse(spec.response, data);
      if (!checked.ok) throw new ProtocolError("ownerToolInvoke", checked.field, checked.error);
      onLine(checked.value);
    };
    try {
      for await (const chunk of res.body) {
        pending += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = pending.indexOf("\n")) >= 0) {
          take(pending.slice(0, nl));
          pending = pending.slice(nl + 1);
        }
        // In UTF-16 units, each at least one byte of UTF-8: never over the limit when this is not.
        if (pending.length > toolInvokeLineMaxBytes) {
          throw new ProtocolError("ownerToolInvoke", "", { keyword: "maxLength", params: { limit: toolInvokeLineMaxBytes }, instancePath: "", schemaPath: "", message: `a line longer than ${toolInvokeLineMaxBytes} bytes` });
        }
      }
    } catch (e) {
      // The answer was cut (the hub stopped): what came is what the caller has; a bad line is the caller's to hear.
      if (e instanceof ProtocolError) throw e;
      return;
    }
    take(pending);
  }

  /** POST /v1/plugins/callback/:task (no key: the task id is the credential): an async plugin completes its task. */
  pluginCallback(task: string, body: PluginCallbackBody) {
    return this.request("pluginCallback", { params: { task }, body }, { auth: null });
  }

  /**
   * POST /v1/plugins/callback/:key/:task (no bearer key: the `callback_url`'s key, bound to the call and its task id, is
   * the credential): an async plugin completes its task.
   */
  pluginCallbackKeyed(key: string, task: string, body: PluginCallbackBody) {
    return this.request("pluginCallbackKeyed", { params: { key, task }, body }, { auth: null });
  }

  /** GET /v1/plugins: every plugin of the hub's home, of every kind, with its status and errors. */
  plugins() {
    return this.request("plugins", {});
  }

  /** POST /v1/plugins/reload: rescan the plugin folders of every kind; what was loaded, replaced, unloaded since last asked, and what is refused. */
  pluginsReload() {
    return this.request("pluginsReload", {});
  }

  /** GET /v1/plugins/:id/settings: a declarative plugin's settings and values (secrets masked). */
  pluginSettings(plugin: string) {
    return this.request("pluginSettings", { params: { id: plugin } });
  }

  /** POST /v1/plugins/:id/settings/:key: set a setting from its text (null removes it). */
  pluginSettingSet(plugin: string, key: string, value: string | null) {
    return this.request("pluginSettingSet", { params: { id: plugin, key }, body: { value } });
  }

  /** GET /v1/plugins/:id/ui: a declarative plugin's panels and card templates. */
  pluginUi(plugin: string) {
    return this.request("pluginUi", { params: { id: plugin } });
  }

  /** POST /v1/plugins/:id/events: press a panel's (or card's) button, or submit its form: an event from `plugin:<id>`. */
  pluginEvent(plugin: string, body: BodyOf<"pluginEvent">) {
    return this.request("pluginEvent", { params: { id: plugin }, body });
  }
}
