/**
 * The answers of the tool endpoints (issue 16): the tools a home offers, how the hub decided a call, and a parked
 * call's end. Part of the answer shapes (responses.ts re-exports them and publishes them among its definitions).
 */
import { Type, type Static } from "@sinclair/typebox";
import { bool, id, int, iso, oneOf, orNull, ref, str } from "./shapes.js";
import { toolPluginTypes } from "./patterns.js";
import { TextRef } from "./responses-texts.js";

/**
 * A tool the hub's home offers (issue 16; spec declarative-plugins.md's `/api/tools`): `name` is `<pluginId>.<tool>`,
 * `kind` its plugin's (`http` for a declarative plugin's HTTP tool), `parameters` the JSON Schema of its arguments,
 * `approval` the mode rules.json's `approvals` give it (exact plugin and tool, else the plugin, else `auto`; an agent's
 * first call of a plugin that is not built in still asks once), `disableModelInvocation` whether agents never see it.
 */
export const ToolView = Type.Object({
  name: str(), pluginId: str(), kind: oneOf(["http", ...toolPluginTypes] as const), description: str(),
  parameters: Type.Record(str(), Type.Unknown()), approval: oneOf(["auto", "prompt", "deny"] as const), disableModelInvocation: bool(),
}, { $id: "ToolView" });
export type ToolView = Static<typeof ToolView>;

/** GET /v1/tools (also `/api/tools`): every tool of the hub's home, by plugin then tool. */
export const Tools = Type.Array(ref(ToolView), { description: "GET /v1/tools" });
export type Tools = Static<typeof Tools>;


/** How the hub decided a tool call (issue 16): run it, refuse it, or wait for the owner's answer on an ask card. */
export const toolDecisions = ["allow", "deny", "prompt"] as const;
export type ToolDecision = (typeof toolDecisions)[number];

/**
 * POST /v1/runs/:id/tools/calls, POST /v1/tools/calls and GET /v1/runs/:id/tools/calls/:call: the call's id, its
 * session key and its decision now. `prompt`: the owner is asked on ask card `card` (allow once / always allow / deny); `waitUntil` is
 * when the hub stops holding the agent's call for it (then the agent is told to end its turn: the answer wakes the
 * lane). `deny`: `reason` says why, in the hub's language.
 */
export const ToolCallDecision = Type.Object({
  call: id(),
  decision: oneOf(toolDecisions),
  /** The call's session key (`<rule>:<lane>`, `owner:<key name>`): the `session_key` to send the plugin. */
  sessionKey: str(),
  card: Type.Optional(id()),
  reason: Type.Optional(str()),
  /** `reason` as a message id and params when the hub wrote it (issue 27 #2), for a client to show in its language. */
  reasonText: Type.Optional(TextRef),
  waitUntil: Type.Optional(iso()),
}, { $id: "ToolCallDecision", description: "POST /v1/runs/:id/tools/calls, POST /v1/tools/calls, GET /v1/runs/:id/tools/calls/:call" });
export type ToolCallDecision = Static<typeof ToolCallDecision>;

/** An error a tool call ended with: the plugin's JSON-RPC code (a number) or the host's (a string), and its message. */
export const ToolError = Type.Object({ code: Type.Union([Type.Integer(), str()]), message: str() }, { $id: "ToolError" });
export type ToolError = Static<typeof ToolError>;

/**
 * GET /v1/runs/:id/tools/calls/:call/result and GET /v1/tools/calls/:call/result: the end of a parked (async) call:
 * `pending` while its callback has not come and its deadline has not passed; `ok` with the callback's `result`;
 * `error` with its `error`; `timeout` when the deadline passed first. Kept by the hub, so it survives a restart.
 */
export const ToolCallResult = Type.Object({
  status: oneOf(["pending", "ok", "error", "timeout"] as const),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(ref(ToolError)),
}, { $id: "ToolCallResult", description: "GET /v1/runs/:id/tools/calls/:call/result, GET /v1/tools/calls/:call/result" });
export type ToolCallResult = Static<typeof ToolCallResult>;

/**
 * How the owner's call through the hub ended (`POST /v1/tools/invoke`): `ok` with the tool's `result`; `refused` —
 * nothing ran (the tool host's checks, the owner's approvals, a plugin that cannot be started) — with `code` and
 * `message`; `error`, `timeout`, `oom` with the code and message of the failure; `parked`: an async plugin accepted the
 * task, and its end is read at GET /v1/tools/calls/:call/result, at most `timeoutMs` from now.
 */
export const ToolInvokeEnd = Type.Object({
  status: oneOf(["ok", "refused", "error", "timeout", "oom", "parked"] as const),
  result: Type.Optional(Type.Unknown()),
  code: Type.Optional(Type.Union([Type.Integer(), str()])),
  message: Type.Optional(str()),
  call: Type.Optional(id()),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
}, { $id: "ToolInvokeEnd" });
export type ToolInvokeEnd = Static<typeof ToolInvokeEnd>;

/**
 * POST /v1/tools/invoke: one line of its answer (newline-delimited JSON; an empty line now and then only says the
 * call still runs). `call`: the hub's id of the call, once decided; `progress`: a progress notification of the
 * running tool; `end`: how it ended, the last line; `error`: the hub could not record the call (a refusal's body, as
 * any 4xx answer's), the last line too. An answer that ends without `end` or `error` lost its hub mid-call.
 */
export const ToolInvokeLine = Type.Object({
  call: Type.Optional(id()),
  progress: Type.Optional(Type.Object({ percent: Type.Optional(Type.Number()), message: Type.Optional(str()) })),
  end: Type.Optional(ref(ToolInvokeEnd)),
  error: Type.Optional(Type.Object({ error: str(), code: Type.Optional(str()), params: Type.Optional(Type.Unknown()) })),
}, { $id: "ToolInvokeLine", description: "POST /v1/tools/invoke, one line each" });
export type ToolInvokeLine = Static<typeof ToolInvokeLine>;
