/**
 * `agent-autoloop plugins invoke <plugin>.<tool> --args JSON [--json]` (issue 16 Contract; spec tool-plugins.md §3.5,
 * §9): the owner's own call, through the same tool host the agents use, no model involved.
 *
 *   check      the tool host checks name, plugin, tool and arguments (JSON Schema) without running any of the
 *              plugin: refused → exit 2, nothing started; the refusal is recorded all the same (a `refused` call
 *              body: denied, with its code and reason)
 *   decide     the hub decides the call as the owner's (`POST /v1/tools/calls`, session `owner:<key name>`): never
 *              prompted; `deny` → exit 2, nothing started. Audited: the call is a fact.
 *   list       only now, when only the plugin can say what its tools are (an MCP server, a manifest that lists
 *              none), its tool list is asked for and the tool and arguments checked: no → the call ends `error`,
 *              exit 2 (nothing was called) or 1 (the list itself failed)
 *   run        the tool runs here; its progress goes to stderr, one line each
 *   outcome    reported (`POST /v1/tools/calls/:call/outcome`); ok → the result on stdout as one line of JSON, exit 0;
 *              a tool error, timeout or out of memory → code and message on stderr, exit 1. An async plugin's task is
 *              parked and its result waited for (`GET /v1/tools/calls/:call/result`), at most the tool's timeout.
 *
 * The plugin is the one the hub uses (issue 27): the same loaders over the hub's roots, and after a broken edit the
 * last good version the home keeps (src/plugins/last-good.ts); a declarative tool that is gone is "definition missing".
 * When no hub runs, the same inputs are decided against the home's database under the home's lock (connect.ts
 * `throughHome`, as `key new` does), so the call is recorded all the same, never silently unaudited. An async task's
 * callback needs a hub to arrive at: without one the CLI waits for one to start until the task's deadline.
 * `--json` prints what went wrong on stdout too, as one JSON line (`{"status":"error","code":…,"message":…}`,
 * `{"status":"timeout",…}`, `{"status":"refused",…}`); a success prints the result alone either way.
 */
import { ToolHost, type CallProgress } from "../tools/index.js";
import { hubPluginViews, localPlugins, serveDirsOf } from "./plugin-home.js";
import { readCodeFolders } from "../host/code-folders.js";
import type { Config, Home } from "../host/home.js";
import { hashKey } from "../kernel/credentials.js";
import type { Input } from "../kernel/types.js";
import { readRulesInput } from "../host/rules-file.js";
import { callResultOf } from "../kernel/tool-calls.js";
import { callbackUrlOf, newCallbackKey, toolArgsFields, toolRefusalBody } from "../protocol/tool-calls.js";
import type { ToolCallBody, ToolOutcomeBody } from "../protocol/schema.js";
import type { ToolCallDecision, ToolCallResult } from "../protocol/responses.js";
import { shown, t, type Lang } from "../i18n/messages.js";
import { findHub, throughHome } from "./connect.js";
import { CliError } from "./print.js";

/** Where invoke writes: stdout lines and stderr lines (the CLI makes them printable). */
export interface InvokeOutput {
  out(line: string): void;
  err(line: string): void;
}

/** Exit codes of `plugins invoke` (issue 16 Contract). */
export const invokeExit = { ok: 0, failed: 1, refused: 2 } as const;

/** How long one held GET of a parked call's result waits before the CLI asks again (s): a hub may restart meanwhile. */
const resultPollSeconds = 30;
/** Without a hub, how often the CLI looks again for a hub or a result (ms). */
const noHubPollMs = 1000;

/** What the hub's records of this call go through: the running hub, else the home's database (see the module). */
class Audit {
  constructor(private readonly h: Home, private readonly config: Config, private readonly lang: Lang) {}

  /** The body of a refusal by the local kernel, as a CliError (the hub's refusals come as CliError already). */
  private refusedOr<T>(r: { status: number; body: unknown }): T {
    if (r.status >= 400) {
      const body = r.body as { error: string; code?: string; params?: unknown };
      throw new CliError(shown(this.lang, body, body.error));
    }
    return r.body as T;
  }

  /** Decides the owner's call. */
  decide(body: ToolCallBody): Promise<ToolCallDecision> {
    return throughHome(this.h, this.lang, "invoke", (c) => c.ownerToolCall(body), async () => {
      // The approvals of rules.json as it is now, as a hub would load them when it starts (nothing changes when the
      // database has them already); a file that cannot be read leaves the last rules loaded in force.
      const rules = readRulesInput(this.h.rules, this.lang);
      const inputs: Input[] = [...(rules.kind === "rules" ? [rules] : []), { kind: "ownerToolCall", keyHash: hashKey(this.config.owner), body }];
      const answers = (await local()).commitLocally(this.h, inputs, this.lang);
      return this.refusedOr<ToolCallDecision>(answers[answers.length - 1]!);
    });
  }

  /** Records how the call ended. */
  async outcome(call: number, body: ToolOutcomeBody): Promise<void> {
    await throughHome(this.h, this.lang, "invoke", (c) => c.ownerToolCallOutcome(call, body), async () => {
      const [r] = (await local()).commitLocally(this.h, [{ kind: "ownerToolOutcome", keyHash: hashKey(this.config.owner), call, body }], this.lang);
      return this.refusedOr<unknown>(r!);
    });
  }

  /** The parked call's end, waiting up to `waitSeconds` when a hub holds the answer; without a hub, as recorded now. */
  result(call: number, waitSeconds: number): Promise<ToolCallResult> {
    return throughHome(this.h, this.lang, "invoke", (c) => c.ownerToolCallResult(call, waitSeconds), async () => {
      const row = (await local()).readLocally(this.h, (view) => view.get("calls", call));
      const end = row ? callResultOf(row, Date.now()) : null;
      if (!end) throw new CliError(t(this.lang, "tools.calls.notParked", { id: call }));
      return end;
    });
  }

  /** The callback URL of a call with key `key` (`<hub>/v1/plugins/callback/<key>/`), when a hub of this home answers now. */
  async callbackUrl(key: string): Promise<string | undefined> {
    const found = await findHub(this.h, this.lang);
    return "url" in found ? callbackUrlOf(found.url, key) : undefined;
  }
}

/** The database's door (host/serve.ts), loaded only when no hub runs: it brings SQLite and the hub. */
const local = () => import("../host/serve.js");

/** A progress notification as one stderr line: `progress: 50% half done`. */
function progressLine(p: CallProgress, lang: Lang): string {
  const parts = [p.percent !== undefined ? `${p.percent}%` : null, p.message ?? null].filter((x) => x !== null);
  return t(lang, "cli.invoke.progress", { progress: parts.join(" ") || "…" });
}

/**
 * Runs `plugins invoke`. Never throws for a refusal or a tool's failure (they are exit codes); throws CliError when
 * the call cannot be recorded (the hub or the database refuses it).
 * @returns the exit code: 0 ok, 1 the tool failed or timed out, 2 refused (nothing started).
 */
export async function invokeTool(h: Home, config: Config, qualified: string, argsText: string, json: boolean, lang: Lang, io: InvokeOutput): Promise<number> {
  const audit = new Audit(h, config, lang);
  const refused = (code: string, message: string) => {
    io.err(t(lang, "cli.invoke.refused", { reason: message }));
    if (json) io.out(JSON.stringify({ status: "refused", code, message }));
    return invokeExit.refused;
  };
  const failed = (status: "error" | "timeout" | "oom", code: string | number, message: string) => {
    io.err(t(lang, `cli.invoke.${status}`, { code, message }));
    if (json) io.out(JSON.stringify({ status, code, message }));
    return invokeExit.failed;
  };
  // A refusal before the hub is asked is recorded all the same (denied, with its code and reason), then said as before.
  const refusedAudited = async (args: unknown, code: string, message: string) => {
    const body = toolRefusalBody(qualified, args, code, message);
    if (body) await audit.decide(body);
    return refused(code, message);
  };
  let args: unknown;
  try {
    args = JSON.parse(argsText);
  } catch (e) {
    // The digest is then of the text as given.
    return refusedAudited(argsText, "cli.args", t(lang, "cli.invoke.argsJson", { error: (e as Error).message }));
  }
  // The plugins as the hub has them (issue 27: one truth): its roots, the same loaders, the home's last good versions.
  // Declarative plugins' HTTP tools (issue 18) are tools of kind http of the same host, their secrets from the home.
  const { tools: registry, declarative } = await localPlugins(h, lang, serveDirsOf(await hubPluginViews(h, lang)));
  const host = new ToolHost(registry, { lang, hiddenPaths: [h.dir], log: (subsystem, line) => io.err(`${subsystem}: ${line}`), data: declarative, seen: readCodeFolders(h) });
  try {
    // Nothing of the plugin runs before the approvals allowed the call: its tool list, when only the plugin can give
    // it, is asked for after the decision (a denied plugin is never started).
    const check = await host.check(qualified, args, { startPlugin: false });
    if (!check.ok) return check.status === "refused" ? refusedAudited(args, String(check.code), check.message) : failed("error", check.code, check.message);
    const decision = await audit.decide({
      tool: qualified, ...toolArgsFields(args), manifestDigest: check.digest,
      builtIn: check.builtIn, disableModelInvocation: check.disableModelInvocation, kind: check.pluginType,
    });
    if (decision.decision !== "allow") return refused("tools.denied", shown(lang, decision.reasonText ?? {}, decision.reason ?? decision.decision));
    if (!check.toolChecked) {
      // Allowed, then the plugin's own tool list says no (no such tool, arguments that do not fit, a list that failed):
      // the call ends `error` in the audit; said as a refusal (nothing was called) or as the plugin's error.
      const listed = await host.check(qualified, args);
      if (!listed.ok) {
        await audit.outcome(decision.call, { status: "error", durationMs: 0 });
        return listed.status === "refused" ? refused(String(listed.code), listed.message) : failed("error", listed.code, listed.message);
      }
    }
    const callbackKey = newCallbackKey();
    const o = await host.call(qualified, args, {
      sessionKey: decision.sessionKey, onProgress: (p) => io.err(progressLine(p, lang)), callbackUrl: await audit.callbackUrl(callbackKey),
    });
    const report = (status: ToolOutcomeBody["status"]) => audit.outcome(decision.call, { status, durationMs: o.durationMs });
    switch (o.status) {
      case "ok":
        await report("ok");
        io.out(JSON.stringify(o.result) ?? "null");
        return invokeExit.ok;
      case "error":
        await report("error");
        return failed("error", o.code, o.message);
      case "timeout":
        await report("timeout");
        return failed("timeout", "timeout", o.message);
      case "oom":
        await report("oom");
        return failed("oom", "oom", o.message);
      case "refused":
        // Allowed, but the host could not start it (no sandbox, a service that is not running): nothing ran.
        await report("error");
        return refused(o.code, o.message);
      case "awaiting_approval":
        // A service plugin's own approval step: the owner is not asked about their own call.
        await report("error");
        return failed("error", "awaiting_approval", o.reason);
      case "accepted": {
        await audit.outcome(decision.call, { status: "parked", durationMs: o.durationMs, taskId: o.taskId, timeoutMs: check.timeoutMs, callbackKey });
        const end = await waitForResult(audit, decision.call, check.timeoutMs);
        if (end.status === "ok") {
          io.out(JSON.stringify(end.result) ?? "null");
          return invokeExit.ok;
        }
        if (end.status === "error") return failed("error", end.error?.code ?? "error", end.error?.message ?? "");
        return failed("timeout", "timeout", t(lang, "tools.calls.taskTimeout", { ms: check.timeoutMs }));
      }
    }
  } finally {
    await host.close();
  }
}

/** Waits for a parked call's end, at most `timeoutMs` from now (then it reads as a timeout). */
async function waitForResult(audit: Audit, call: number, timeoutMs: number): Promise<ToolCallResult> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const left = end - Date.now();
    const r = await audit.result(call, Math.max(0, Math.min(resultPollSeconds, Math.ceil(left / 1000))));
    if (r.status !== "pending") return r;
    if (left <= 0) return { status: "timeout" };
    // Without a hub the answer comes at once: look again in a moment (a hub may have started to take the callback).
    await new Promise((resolve) => setTimeout(resolve, Math.min(noHubPollMs, Math.max(0, end - Date.now()))));
  }
}
