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
 *   run        the tool runs (in the hub when one runs, see below); its progress goes to stderr, one line each
 *   outcome    reported (`POST /v1/tools/calls/:call/outcome`); ok → the result on stdout as one line of JSON, exit 0;
 *              a tool error, timeout or out of memory → code and message on stderr, exit 1. An async plugin's task is
 *              parked and its result waited for (`GET /v1/tools/calls/:call/result`), at most the tool's timeout.
 *
 * Where the call runs (issue 34 #5; issue 26 round 6): when a hub of this home runs (found and proven as every owner
 * command finds it: connect.ts `findHub`), the call is sent to it (`POST /v1/tools/invoke`) and runs in the hub's own
 * tool host — the one the agents' calls go through, with the hub's real plugin roots (`serve --plugins` included), PATH
 * and HOME, so a sandbox's writable binds are checked against the folders the hub really runs code from, and service
 * plugins, which only `serve` runs, can be called. Progress comes back line by line; a hub that stops mid-call is said
 * plainly (exit 1). When no hub runs, the call runs here (src/tools/owner-call.ts, the same steps) on the plugins as the
 * hub would load them (issue 27: the same loaders over the hub's roots, the home's last good versions), decided and
 * recorded in the home's database under the home's lock (connect.ts `throughHome`, as `key new` does), never silently
 * unaudited; a service plugin is refused then, saying that the hub must run. An async task's callback needs a hub to
 * arrive at: without one the CLI waits for one to start until the task's deadline.
 * `--json` prints what went wrong on stdout too, as one JSON line (`{"status":"error","code":…,"message":…}`,
 * `{"status":"timeout",…}`, `{"status":"refused",…}`); a success prints the result alone either way.
 */
import { closeInheritedDescriptors } from "../common/inherited-fds.js";
import { ToolHost, ownerCall, type CallProgress, type OwnerCallAudit } from "../tools/index.js";
import { hubPluginViews, localPlugins, serveDirsOf } from "./plugin-home.js";
import { readCodeFolders } from "../host/code-folders.js";
import type { Config, Home } from "../host/home.js";
import { hashKey } from "../kernel/credentials.js";
import type { Input } from "../kernel/types.js";
import { readRulesInput } from "../host/rules-file.js";
import { callResultOf } from "../kernel/tool-calls.js";
import { callbackUrlOf, toolRefusalBody } from "../protocol/tool-calls.js";
import type { ToolCallBody, ToolOutcomeBody } from "../protocol/schema.js";
import type { ErrorBody, ToolCallDecision, ToolCallResult, ToolInvokeEnd } from "../protocol/responses.js";
import { HubClient, HubError } from "../protocol/client.js";
import { shown, t, type Lang } from "../i18n/messages.js";
import { parseJson } from "../kernel/json-error.js";
import { call, findHub, throughHome } from "./connect.js";
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
class Audit implements OwnerCallAudit {
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
      const row = (await local()).readLocally(this.h, (view) => view.get("calls", call), this.lang);
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
  // A plugin may run here, sandboxed: nothing this command inherited reaches it (F22-1).
  closeInheritedDescriptors();
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
  const read = parseJson(argsText);
  if (!read.ok) {
    // Recorded all the same (denied, with its code and reason; the digest is of the text as given), then said; the
    // position, never V8's message, which quotes the text (issue 26 round 10).
    const code = "cli.args";
    const message = t(lang, "cli.invoke.argsJson", { error: t(lang, "json.at", { ...read.at }) });
    const body = toolRefusalBody(qualified, argsText, code, message);
    if (body) await audit.decide(body);
    return refused(code, message);
  }
  const args = read.value;
  const found = await findHub(h, lang);
  const end = "url" in found ? await throughHub(found.url, config, qualified, args, lang, io) : await here(h, audit, qualified, args, lang, io);
  switch (end.status) {
    case "ok":
      io.out(JSON.stringify(end.result) ?? "null");
      return invokeExit.ok;
    case "refused":
      return refused(String(end.code), end.message ?? "");
    case "error":
    case "timeout":
    case "oom":
      return failed(end.status, end.code ?? end.status, end.message ?? "");
    case "parked": {
      // An async plugin's task: its end comes with its callback, at most the tool's timeout from now.
      const timeoutMs = end.timeoutMs ?? 1;
      const result = await waitForResult(audit, end.call ?? 0, timeoutMs);
      if (result.status === "ok") {
        io.out(JSON.stringify(result.result) ?? "null");
        return invokeExit.ok;
      }
      if (result.status === "error") return failed("error", result.error?.code ?? "error", result.error?.message ?? "");
      return failed("timeout", "timeout", t(lang, "tools.calls.taskTimeout", { ms: timeoutMs }));
    }
  }
}

/**
 * The call sent to the running hub, which runs it in its own tool host (issue 34 #5: its real plugin roots, PATH and
 * HOME; its services): its progress on stderr as it comes, its end as the hub says it. A hub that stops mid-call is
 * said plainly (exit 1); a request the hub refuses as malformed or too large (400, 413) is a refusal (nothing ran).
 * @throws CliError when the hub cannot record the call or cannot be reached.
 */
async function throughHub(url: string, config: Config, qualified: string, args: unknown, lang: Lang, io: InvokeOutput): Promise<ToolInvokeEnd> {
  let end: ToolInvokeEnd | null = null;
  let notRecorded: ErrorBody | null = null;
  let call: number | null = null;
  try {
    await new HubClient(url, config.owner).ownerToolInvoke({ tool: qualified, args }, lang, (line) => {
      if (line.call !== undefined) call = line.call;
      if (line.progress) io.err(progressLine(line.progress, lang));
      if (line.end) end = line.end;
      if (line.error) notRecorded = line.error as ErrorBody;
    });
  } catch (e) {
    if (e instanceof HubError && (e.status === 400 || e.status === 413)) return { status: "refused", code: e.code ?? "cli.hub", message: e.shownIn(lang) };
    return callFailed(new HubClient(url, config.owner), e, lang);
  }
  if (notRecorded !== null) {
    const body: ErrorBody = notRecorded;
    throw new CliError(shown(lang, body, body.error));
  }
  if (end !== null) return end;
  const lost = call === null ? t(lang, "cli.invoke.hubLostEarly", { url }) : t(lang, "cli.invoke.hubLost", { url, call });
  return { status: "error", code: "hub_lost", message: lost };
}

/**
 * The call run here, in the CLI's own tool host, when no hub of this home runs: the plugins as the hub would have
 * them (issue 27: its roots, the same loaders, the home's last good versions), recorded in the home's database (see
 * the module). A service plugin runs only inside the hub: refused, saying so.
 */
async function here(h: Home, audit: Audit, qualified: string, args: unknown, lang: Lang, io: InvokeOutput): Promise<ToolInvokeEnd> {
  // Declarative plugins' HTTP tools (issue 18) are tools of kind http of the same host, their secrets from the home.
  const { tools: registry, declarative } = await localPlugins(h, lang, serveDirsOf(await hubPluginViews(h, lang)));
  const host = new ToolHost(registry, { lang, hiddenPaths: [h.dir], log: (subsystem, line) => io.err(`${subsystem}: ${line}`), data: declarative, seen: readCodeFolders(h) });
  try {
    return await ownerCall(host, audit, qualified, args, {
      lang, onProgress: (p) => io.err(progressLine(p, lang)),
      refuse: (check) => (check.pluginType === "service" ? { code: "tools.service_needs_hub", message: t(lang, "cli.invoke.serviceNeedsHub", { plugin: check.plugin }) } : null),
    });
  } finally {
    await host.close();
  }
}

/** Rethrows what a call to the hub threw as connect.ts `call` words it (a refusal in this language, the hub unreachable). */
async function callFailed(client: HubClient, e: unknown, lang: Lang): Promise<never> {
  return call(client, () => Promise.reject(e), lang);
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
