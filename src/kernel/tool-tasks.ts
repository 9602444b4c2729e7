/**
 * The end of a parked async tool call (issue 16; issue 34): its plugin's callback, or its deadline. The call was parked
 * by `toolOutcome` (tool-calls.ts) with the HMAC of its task id and, when its caller gave one, of its callback key.
 */
import type { Ctx } from "./context.js";
import { approvalsOf } from "./rules.js";
import { safeEqual, toolCallbackKeyHash, toolTaskHash } from "./credentials.js";
import { relayed } from "./text.js";
import { assert } from "./assert.js";
import { done, refuse as err, type Reply } from "./reply.js";
import { toolErrorMessageMaxCodepoints, toolTaskIdLegacyMinChars } from "./limits.js";
import { endCall, moveParked } from "./tool-calls.js";
import type { PluginCallbackBody } from "../protocol/schema.js";
import type { Ok } from "../protocol/responses.js";

/**
 * POST /v1/plugins/callback/:key/:task (the `callback_url` the call was given, plus the task id) or the legacy
 * /v1/plugins/callback/:task and /plugin-callback/:task (`key` null): an async plugin completes its task (spec
 * tool-plugins.md §5; issue 34). The key is the credential, bound to the call and to its task id. On the legacy path
 * the credential is the task id alone, which the plugin chose (and may be predictable, however long): it is taken only
 * for a plugin whose approvals entry says `legacy_callbacks` (hostile round 37, F37b-3), and an id shorter than
 * `toolTaskIdLegacyMinChars` only where it says `legacy_callback_short_ids` (which implies the former); else 403,
 * naming the fix. Unknown → 404; a task that is not
 * parked (it ended, or its deadline passed: the call failed with a timeout) → 410, before those checks. Otherwise the
 * call ends `ok` with the `result` (the shell checked its size and depth) or `error` (`{"status":"error"}` without
 * `error`: code `error`, a message saying the plugin gave none).
 */
export function toolCallback(c: Ctx, task: string, key: string | null, body: PluginCallbackBody): Reply<Ok> {
  const taskHash = toolTaskHash(c.env.master, task);
  const row = c.tx.get("tasks", key === null ? taskHash : toolCallbackKeyHash(c.env.master, key));
  const bound = key === null || (row?.task !== undefined && safeEqual(row.task, taskHash));
  const call = row && bound ? c.tx.get("calls", row.call) : undefined;
  if (!call) return err(404, c.say("tools.callback.unknown"));
  assert(call.deadline !== null, "task-call-parked");
  // a task that is not parked says only that (410), as with a key: the refusal below names the plugin, which a local
  // caller guessing ids must not learn of tasks that ended
  if (call.status === "timeout" || (call.status === "parked" && c.now >= call.deadline)) return err(410, c.say("tools.callback.late"));
  if (call.status !== "parked") return err(410, c.say("tools.callback.ended", { status: call.status }));
  if (key === null) {
    const entry = approvalsOf(c.rules).find((r) => r.plugin === call.plugin && r.tool === null);
    const short = [...task].length < toolTaskIdLegacyMinChars;
    if (short && entry?.legacy_callback_short_ids !== true) return err(403, c.say("tools.callback.legacyShort", { plugin: call.plugin, min: toolTaskIdLegacyMinChars }));
    if (!short && entry?.legacy_callbacks !== true) return err(403, c.say("tools.callback.legacyOff", { plugin: call.plugin }));
  }
  c.undue("toolTask", call.id);
  moveParked(c, -1);
  if (body.status === "success") {
    call.result = { status: "ok", result: body.result ?? null };
    endCall(c, call, "ok");
  } else {
    // `{"status":"error"}` alone is an error without details, as corlinman passes any body on (issue 34 #4)
    const e = body.error ?? { code: "error", message: c.msg("tools.callback.noDetails") };
    call.result = { status: "error", error: { code: e.code, message: relayed(e.message, false, toolErrorMessageMaxCodepoints) } };
    endCall(c, call, "error");
  }
  return done();
}

/** The deadline `toolTask` of a parked call came before its callback: the call fails with a timeout. */
export function toolTaskDue(c: Ctx, id: number): void {
  const call = c.tx.get("calls", id);
  if (call?.status !== "parked") return;
  moveParked(c, -1);
  call.result = { status: "timeout" };
  endCall(c, call, "timeout");
}
