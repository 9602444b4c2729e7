/**
 * The owner's own call of a tool (`plugins invoke`; issue 16 Contract, spec tool-plugins.md §3.5, §9), from the tool
 * host's check to the outcome's report, the same wherever it runs: in the hub's tool host (`POST /v1/tools/invoke`,
 * issue 34 #5: its real plugin roots, PATH and HOME decide what a sandbox may bind) or, with no hub running, in the
 * CLI's own (src/cli/invoke.ts). Where the decision and the audit go is the caller's `OwnerCallAudit`.
 *
 *   check      the tool host checks name, plugin, tool and arguments without running any of the plugin: refused →
 *              recorded all the same (a `refused` call body: denied, with its code and reason)
 *   decide     decided as the owner's call (session `owner:<key name>`): never prompted; `deny` → refused
 *   list       only now, when only the plugin can say what its tools are, its tool list is asked for and the tool and
 *              arguments checked again: no → the call ends `error` (refused when nothing was called)
 *   run        progress goes to `onProgress`
 *   outcome    reported; an async plugin's accepted task is reported `parked` and its end is the caller's to wait for
 */
import type { ToolHost } from "./host.js";
import type { CallCheck, CallProgress } from "./types.js";
import { shown, type Lang } from "../i18n/messages.js";
import { newCallbackKey, toolArgsFields, toolRefusalBody } from "../protocol/tool-calls.js";
import type { ToolCallBody, ToolOutcomeBody } from "../protocol/schema.js";
import type { ToolCallDecision, ToolInvokeEnd } from "../protocol/responses.js";

/** Where the owner's call is decided and recorded: the hub's kernel, or the home's database (src/cli/invoke.ts). */
export interface OwnerCallAudit {
  /** Decides the call (a refused body: records it denied). @throws when it cannot be recorded. */
  decide(body: ToolCallBody): Promise<ToolCallDecision>;
  /** Records how the allowed call ended. @throws when it cannot be recorded. */
  outcome(call: number, body: ToolOutcomeBody): Promise<void>;
  /** The callback URL of a call with key `key`, when a hub is there to take it. */
  callbackUrl(key: string): Promise<string | undefined>;
}

/** What else an owner's call is given. */
export interface OwnerCallOptions {
  lang: Lang;
  onProgress?: (p: CallProgress) => void;
  /** Hears the call's id once it is decided. */
  onCall?: (call: number) => void;
  /** Stops the running call (the caller went away, or its time is up). */
  signal?: AbortSignal;
  /** A refusal of a checked call before it is decided, recorded as any refusal (a service with no hub to run it). */
  refuse?: (check: Extract<CallCheck, { ok: true }>) => { code: string; message: string } | null;
}

/**
 * The owner's call of `qualified` with `args` through `host`, decided and recorded by `audit`. Never throws for a
 * refusal or a tool's failure (they are its end).
 * @returns how it ended (`parked`: the call's id and how long its result may take, in ms).
 * @throws what `audit` throws: the call could not be recorded.
 */
export async function ownerCall(host: ToolHost, audit: OwnerCallAudit, qualified: string, args: unknown, o: OwnerCallOptions): Promise<ToolInvokeEnd> {
  const refusedAudited = async (code: string, message: string): Promise<ToolInvokeEnd> => {
    const body = toolRefusalBody(qualified, args, code, message);
    if (body) await audit.decide(body);
    return { status: "refused", code, message };
  };
  // Nothing of the plugin runs before the approvals allowed the call: its tool list, when only the plugin can give
  // it, is asked for after the decision (a denied plugin is never started).
  const check = await host.check(qualified, args, { startPlugin: false });
  if (!check.ok) return check.status === "refused" ? refusedAudited(String(check.code), check.message) : { status: "error", code: check.code, message: check.message };
  const refusal = o.refuse?.(check) ?? null;
  if (refusal) return refusedAudited(refusal.code, refusal.message);
  const decision = await audit.decide({
    tool: qualified, ...toolArgsFields(args), manifestDigest: check.digest,
    builtIn: check.builtIn, disableModelInvocation: check.disableModelInvocation, kind: check.pluginType,
  });
  if (decision.decision !== "allow") return { status: "refused", code: "tools.denied", message: shown(o.lang, decision.reasonText ?? {}, decision.reason ?? decision.decision) };
  o.onCall?.(decision.call);
  if (!check.toolChecked) {
    // Allowed, then the plugin's own tool list says no (no such tool, arguments that do not fit, a list that failed):
    // the call ends `error` in the audit; said as a refusal (nothing was called) or as the plugin's error.
    const listed = await host.check(qualified, args);
    if (!listed.ok) {
      await audit.outcome(decision.call, { status: "error", durationMs: 0 });
      return listed.status === "refused" ? { status: "refused", code: String(listed.code), message: listed.message } : { status: "error", code: listed.code, message: listed.message };
    }
  }
  const callbackKey = newCallbackKey();
  const out = await host.call(qualified, args, {
    sessionKey: decision.sessionKey, callbackUrl: await audit.callbackUrl(callbackKey),
    ...(o.onProgress ? { onProgress: o.onProgress } : {}), ...(o.signal ? { signal: o.signal } : {}),
    decidedDigest: check.digest, // what was decided runs, or nothing (issue 26 round 24, F24-2)
  });
  const report = (status: ToolOutcomeBody["status"]) => audit.outcome(decision.call, { status, durationMs: out.durationMs });
  switch (out.status) {
    case "ok":
      await report("ok");
      return { status: "ok", result: out.result };
    case "error":
      await report("error");
      return { status: "error", code: out.code, message: out.message };
    case "timeout":
    case "oom":
      await report(out.status);
      return { status: out.status, code: out.status, message: out.message };
    case "refused":
      // Allowed, but the host could not start it (no sandbox, a service that is not running): nothing ran.
      await report("error");
      return { status: "refused", code: out.code, message: out.message };
    case "awaiting_approval":
      // A service plugin's own approval step: the owner is not asked about their own call.
      await report("error");
      return { status: "error", code: "awaiting_approval", message: out.reason };
    case "accepted":
      await audit.outcome(decision.call, { status: "parked", durationMs: out.durationMs, taskId: out.taskId, timeoutMs: check.timeoutMs, callbackKey });
      return { status: "parked", call: decision.call, timeoutMs: check.timeoutMs };
  }
}
