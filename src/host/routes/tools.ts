/**
 * Tools (issue 16). `GET /v1/tools` (also `/api/tools`, spec declarative-plugins.md's name) lists every tool of this
 * home's tool plugins for the owner — `<plugin>.<tool>`, the plugin's kind, the tool's description and JSON Schema,
 * and the approval mode the current rules give it. The folders are read again at each request (a changed manifest
 * shows at once); tools a manifest does not list are asked of the plugin the first time (tools/list, cached by
 * digest; an MCP server's list) — in the review sandbox unless the owner trusts the plugin at its digest (issue 26
 * round 11, F5: tools/review.ts) — as for a run's tool list. A plugin whose tools cannot be had, or are unknown, is
 * left out, and the hub's log says why (at most once a minute per plugin).
 *
 * Tool calls (TOOL-CALLS plan; src/kernel/tool-calls.ts decides): an agent run's calls with its token under
 * `/v1/runs/:id/tools/calls`, the owner's under `/v1/tools/calls`; a held GET of a call's decision while the owner is
 * asked, and of a parked call's result; and the async plugins' callback (no key: the task id is the credential).
 */
import { Hono, type Context } from "hono";
import type { Hub } from "../hub.js";
import { approvalDefault, approvalRuleFor, approvalsOf, pluginDenied } from "../../kernel/rules.js";
import { Ctx } from "../../kernel/context.js";
import { callDecisionOf, callResultOf } from "../../kernel/tool-calls.js";
import { toolCallArgumentsMaxCodepoints, toolCallWaitMaxSeconds } from "../../kernel/limits.js";
import { canonicalJson, toolArgsDigest } from "../../protocol/tool-calls.js";
import type { ToolCallBody } from "../../protocol/schema.js";
import type { Lang } from "../../i18n/messages.js";
import type { Fact, KnownPlugin, ToolCallRow } from "../../kernel/types.js";
import type { ToolView } from "../../protocol/responses.js";
import { callbackKeyPattern, taskIdPattern } from "../../protocol/patterns.js";
import { t, refusal, said, refusalBody, type Said } from "../../i18n/messages.js";
import { decide, queryNumber, refuse, reply, route } from "./endpoint.js";
import { idParam } from "./read.js";
import { toolInvokeRoute } from "./tools-invoke.js";

/**
 * How long (ms) a read of a call past its deadline waits for the timer's round it asked for to record that deadline,
 * before answering from the deadline alone (a stuck timer must not hold the read).
 */
const deadlineRecordWaitMs = 2_000;

const taskIdRe = new RegExp(taskIdPattern);
const callbackKeyRe = new RegExp(callbackKeyPattern);

/**
 * Resolves once a committed fact changes call `id`, or at `untilMs` (the hub's clock, ms), or when the client goes
 * away. Reads nothing itself: the caller reads the call again.
 */
function callChanged(hub: Hub, id: number, untilMs: number, signal: AbortSignal): Promise<void> {
  const waitMs = untilMs - hub.now();
  if (waitMs <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      hub.listeners.delete(listener);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const listener = (facts: Fact[]) => {
      if (facts.some((f) => f.changes.some(([table, key]) => table === "calls" && Number(key) === id))) done();
    };
    const timer = setTimeout(done, waitMs);
    hub.listeners.add(listener);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** The call of the path for this caller: a call of run `run`, or (run null) one of the owner's; null when not found. */
function callOf(c: Context, hub: Hub, run: number | null): ToolCallRow | null {
  const id = idParam(c, "call");
  const call = id === null ? undefined : hub.store.view.get("calls", id);
  return call && call.run === run && (run !== null || call.caller === "owner") ? call : null;
}

/**
 * The call of the path, held while its status is `status` (asking for the owner, parked for a callback) up to
 * `waitSeconds` and never past its own deadline (`deadlineOf`: the hold's end, the task's); null when not found. A
 * deadline already past is the timer's to record (the hold ends, the task times out): its round is run now and waited
 * for up to `deadlineRecordWaitMs`, so that a caller acting on the answer (`status` after `plugins invoke`) finds it
 * among the facts (the CI run of a205e44 read the count before the timer had written it).
 */
async function heldWhile(c: Context, hub: Hub, run: number | null, status: ToolCallRow["status"], deadlineOf: (call: ToolCallRow) => number | null, waitSeconds: string | undefined): Promise<ToolCallRow | null> {
  let call = callOf(c, hub, run);
  if (!call) return null;
  const signal = c.req.raw.signal;
  const until = Math.min(waitEnd(hub, waitSeconds), deadlineOf(call) ?? 0);
  while (call.status === status && hub.now() < until && !signal.aborted) {
    await callChanged(hub, call.id, until, signal);
    call = callOf(c, hub, run);
    if (!call) return null;
  }
  const deadline = deadlineOf(call);
  if (call.status === status && deadline !== null && hub.now() >= deadline && !signal.aborted) {
    const recorded = callChanged(hub, call.id, hub.now() + deadlineRecordWaitMs, signal);
    hub.arm(0);
    await recorded;
    call = callOf(c, hub, run);
  }
  return call;
}

/** How long a held GET may wait, in ms from now: `waitSeconds` (default 0), at most `toolCallWaitMaxSeconds`. */
function waitEnd(hub: Hub, waitSeconds: string | undefined): number {
  return hub.now() + Math.min(queryNumber(waitSeconds, 0), toolCallWaitMaxSeconds) * 1000;
}

/**
 * What the hub's own registry knows of the plugin of `<plugin>.<tool>` (issue 26): a tool plugin in use under that
 * name (its folders read again, as for `GET /v1/tools`: an edited manifest counts at once) — built in when found in the
 * engine's own root, its `plugin_type`, its `disable_model_invocation` — else a declarative plugin's HTTP tools (kind
 * `http`, never built in, never hidden, with the tool's reach: hosts, `authRef`, whether the agent chooses the URL), as
 * the tool host itself resolves a name; null when the hub knows neither.
 */
async function knownPlugin(hub: Hub, tool: string): Promise<KnownPlugin | null> {
  const dot = tool.indexOf(".");
  const plugin = tool.slice(0, dot);
  const host = await hub.toolHost();
  host.registry.rescan();
  const rec = host.registry.get(plugin);
  if (rec?.manifest && rec.digest) {
    return { builtIn: rec.origin === "builtin", kind: rec.manifest.plugin_type, disableModelInvocation: rec.manifest.capabilities.disable_model_invocation, http: null };
  }
  const data = hub.declarative.toolsOf(plugin);
  if (!data) return null;
  // The tool's reach as the catalog holds it; a tool it does not have reaches nothing (its host refuses the call).
  const reach = data.tools.find((x) => x.name === tool.slice(dot + 1))?.reach ?? { network: [], authRef: null, anyUrl: false };
  return { builtIn: false, kind: "http", disableModelInvocation: false, http: reach };
}

/**
 * Why a call body's `arguments` and `argsLength` are not those of the arguments `argsDigest` names (issue 26 #5: the
 * owner's answer is bound to the digest, so what the card shows must be what was digested), or null. `arguments` must
 * be canonical JSON whose sha256 is the digest, `argsLength` its length in code points, and `arguments` is required
 * when `argsLength` says it is short enough to keep.
 */
export function argumentsProblem(body: ToolCallBody, lang: Lang): Said | null {
  if (body.refused) return null;
  if (body.arguments === undefined) {
    return body.argsLength !== undefined && body.argsLength <= toolCallArgumentsMaxCodepoints ? said("tools.calls.args.needed", { limit: toolCallArgumentsMaxCodepoints }) : null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.arguments);
  } catch {
    return said("tools.calls.args.notCanonical");
  }
  if (canonicalJson(parsed) !== body.arguments) return said("tools.calls.args.notCanonical");
  if (toolArgsDigest(parsed) !== body.argsDigest) return said("tools.calls.args.digest");
  const actual = [...body.arguments].length;
  if (body.argsLength !== undefined && body.argsLength !== actual) return said("tools.calls.args.length", { length: body.argsLength, actual });
  return null;
}

/** The routes of tools. */
export function toolRoutes(hub: Hub): Hono {
  const app = new Hono();

  route(app, hub, "tools", async (c) => {
    const host = await hub.toolHost();
    host.registry.rescan();
    const rules = hub.store.view.rules()?.rules;
    const approvals = rules ? approvalsOf(rules) : [];
    const { tools, problems } = await host.allTools((plugin) => pluginDenied(approvals, plugin));
    for (const p of problems) hub.logForCaller(`tools ${p.plugin}`, t(hub.env.lang, "tools.listFailed", { plugin: p.plugin, error: p.message }));
    const views: ToolView[] = tools.map((o) => ({
      name: o.qualifiedName, pluginId: o.plugin, kind: o.pluginType, description: o.tool.description, parameters: o.tool.parameters,
      approval: approvalRuleFor(approvals, o.plugin, o.qualifiedName)?.rule.mode ?? approvalDefault(o.pluginType), disableModelInvocation: o.disableModelInvocation,
    }));
    return reply(c, hub, "tools", views);
  });

  // Decided by what the hub's own registry knows of the plugin, not by what the run token's holder says of it (issue 26).
  route(app, hub, "toolCall", async (c, req) => {
    const problem = argumentsProblem(req.body, hub.env.lang);
    if (problem !== null) return refuse(c, 400, refusalBody(hub.env.lang, problem));
    const plugin = req.body.refused ? null : await knownPlugin(hub, req.body.tool);
    return decide(c, hub, "toolCall", { kind: "toolCall", run: req.run, token: req.token, body: req.body, plugin });
  });
  toolInvokeRoute(app, hub);
  route(app, hub, "ownerToolCall", (c, req) => {
    const problem = argumentsProblem(req.body, hub.env.lang);
    return problem !== null ? refuse(c, 400, refusalBody(hub.env.lang, problem)) : decide(c, hub, "ownerToolCall", { kind: "ownerToolCall", keyHash: req.keyHash, body: req.body });
  });

  // The decision now; a call held for the owner's answer is held here too, never past its own hold.
  route(app, hub, "toolCallGet", async (c, req) => {
    const notFound = () => refuse(c, 404, refusal(hub.env.lang, "tools.calls.notFound", { id: c.req.param("call") ?? "" }));
    const call = await heldWhile(c, hub, req.run, "asking", (row) => row.waitUntil, req.query.waitSeconds);
    if (!call) return notFound();
    return reply(c, hub, "toolCallGet", callDecisionOf(new Ctx(hub.store.view, hub.now(), hub.env), call));
  });

  // A path that names no call id is as unknown as a call that does not exist.
  const callId = (c: Context) => idParam(c, "call") ?? refuse(c, 404, refusal(hub.env.lang, "tools.calls.notFound", { id: c.req.param("call") ?? "" }));
  route(app, hub, "toolCallOutcome", (c, req) => {
    const call = callId(c);
    return call instanceof Response ? call : decide(c, hub, "toolCallOutcome", { kind: "toolOutcome", run: req.run, token: req.token, call, body: req.body });
  });
  route(app, hub, "ownerToolCallOutcome", (c, req) => {
    const call = callId(c);
    return call instanceof Response ? call : decide(c, hub, "ownerToolCallOutcome", { kind: "ownerToolOutcome", keyHash: req.keyHash, call, body: req.body });
  });

  // A parked call's end; while pending, held up to `waitSeconds`, never past the call's deadline.
  const result = async (c: Context, name: "toolCallResult" | "ownerToolCallResult", run: number | null, waitSeconds: string | undefined) => {
    const call = await heldWhile(c, hub, run, "parked", (row) => row.deadline, waitSeconds);
    if (!call) return refuse(c, 404, refusal(hub.env.lang, "tools.calls.notFound", { id: c.req.param("call") ?? "" }));
    const end = callResultOf(call, hub.now());
    return end ? reply(c, hub, name, end) : refuse(c, 409, refusal(hub.env.lang, "tools.calls.notParked", { id: call.id }));
  };
  route(app, hub, "toolCallResult", (c, req) => result(c, "toolCallResult", req.run, req.query.waitSeconds));
  route(app, hub, "ownerToolCallResult", (c, req) => result(c, "ownerToolCallResult", null, req.query.waitSeconds));

  // The callback_url's key is the credential (issue 34), bound to the call and its task id; on the legacy path, without
  // a key, the task id. One that cannot be a task id or a key is as unknown as any other.
  const unknown = (c: Context) => refuse(c, 404, refusal(hub.env.lang, "tools.callback.unknown"));
  route(app, hub, "pluginCallbackKeyed", (c, req) => {
    const key = c.req.param("key") ?? "";
    const task = c.req.param("task") ?? "";
    if (!callbackKeyRe.test(key) || !taskIdRe.test(task)) return unknown(c);
    return decide(c, hub, "pluginCallbackKeyed", { kind: "toolCallback", task, key, body: req.body });
  });
  route(app, hub, "pluginCallback", (c, req) => {
    const task = c.req.param("task") ?? "";
    if (!taskIdRe.test(task)) return unknown(c);
    return decide(c, hub, "pluginCallback", { kind: "toolCallback", task, key: null, body: req.body });
  });
  return app;
}
