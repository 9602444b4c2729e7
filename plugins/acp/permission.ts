/**
 * How the `acp` bridge answers `session/request_permission` (protocol.md ACP 和 MCP; plugins.md access 实际能做什么):
 *
 * | access | allowed tool kinds                                                            |
 * |--------|-------------------------------------------------------------------------------|
 * | read   | `read`, `search`                                                               |
 * | edit   | also `edit` and `delete` when every location lies inside the working folder   |
 * | full   | everything the agent asks about                                               |
 *
 * Only one-time options are ever chosen (`allow_once` / `reject_once`, never `allow_always` or `reject_always`);
 * when the needed one-time option is not offered, the request is cancelled. A request that carries only the tool
 * call id is judged by the kind and locations the agent announced earlier for that call (`tool_call` and
 * `tool_call_update`), the request's own fields first. Paths are checked on the file system: symbolic links are
 * followed, and a path that passes through a link whose target does not exist counts as outside.
 *
 * A call of the run's tools server (issue 16), whose title claude-agent-acp 0.49.0 gives as `mcp__<server>__<tool>`,
 * is allowed whatever the access: the rule offered those tools, and the hub's approvals decide each call.
 *
 * This relies on the agent following ACP: an agent may act without asking, and `access` cannot stop that.
 */
import { lstatSync, realpathSync } from "node:fs";
import { isAbsolute, join, resolve, sep } from "node:path";

/** The rule's `access` (plugins.md access 实际能做什么). */
export type Access = "read" | "edit" | "full";

/** What is known about one tool call: ACP `ToolCall` / `ToolCallUpdate` fields, merged over its updates. */
export interface ToolFacts {
  kind?: string | null;
  title?: string | null;
  /** ACP `ToolCallLocation`s: the files the call touches (absolute paths by the protocol). */
  locations?: { path: string }[] | null;
}

/** One ACP `PermissionOption`. */
export interface PermissionOption { optionId: string; name?: string; kind: string }

/** The answer to a permission request, with why, for the bridge's log line. */
export interface PermissionChoice {
  /** The ACP `RequestPermissionOutcome` to send back. */
  outcome: { outcome: "selected"; optionId: string } | { outcome: "cancelled" };
  /** What `access` said about the call. */
  decision: "allow" | "reject";
  /** A short English reason (which rule decided). */
  why: string;
}

const readKinds = new Set(["read", "search"]);
const editKinds = new Set(["edit", "delete"]);

/**
 * The physical path `path` names, following symbolic links component by component (so `link/..` means the link
 * target's parent, as the kernel sees it). Components that do not exist yet are appended as written.
 * @param path an absolute path, or one relative to `base`.
 * @returns the physical path, or null when it passes through a link that cannot be resolved (a dangling link or a
 *   loop), or through something that is not a folder.
 */
export function physicalPath(path: string, base: string): string | null {
  const parts = (isAbsolute(path) ? path : join(base, path)).split(/[\\/]+/).filter((p) => p.length > 0);
  let current: string = sep;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === ".") continue;
    if (part === "..") {
      current = resolve(current, "..");
      continue;
    }
    const next = join(current, part);
    try {
      lstatSync(next);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return resolve(next, ...parts.slice(i + 1)); // the rest does not exist yet
      return null; // ENOTDIR, EACCES, ELOOP: cannot say where it leads
    }
    try {
      current = realpathSync(next);
    } catch {
      return null; // a dangling link, or a loop
    }
  }
  return current;
}

/** Whether `path` (resolved with `physicalPath`) lies inside the folder whose physical path is `folderReal`. */
export function insideFolder(path: string, folderReal: string): boolean {
  const p = physicalPath(path, folderReal);
  if (p === null) return false;
  const root = folderReal.endsWith(sep) ? folderReal : folderReal + sep;
  return p === folderReal || p.startsWith(root);
}

/**
 * Decides a permission request.
 * @param access the rule's access.
 * @param folderReal the physical path of the working folder (`realpathSync(cwd)`).
 * @param facts what the request says about the tool call, merged over what the agent announced before.
 * @param options the options the agent offered.
 * @param toolsServer the name of the run's tools server, when the rule offers tools.
 */
export function choosePermission(access: Access, folderReal: string, facts: ToolFacts, options: PermissionOption[], toolsServer: string | null = null): PermissionChoice {
  const kind = typeof facts.kind === "string" ? facts.kind : "other";
  let decision: "allow" | "reject";
  let why: string;
  if (toolsServer !== null && typeof facts.title === "string" && facts.title.startsWith(`mcp__${toolsServer}__`)) {
    decision = "allow";
    why = `a tool the rule offers (server ${toolsServer}): the hub's approvals decide its calls`;
  } else if (access === "full") {
    decision = "allow";
    why = "access full allows every request";
  } else if (readKinds.has(kind)) {
    decision = "allow";
    why = `access ${access} allows ${kind}`;
  } else if (access === "edit" && editKinds.has(kind)) {
    const paths = (facts.locations ?? []).map((l) => l?.path).filter((p): p is string => typeof p === "string" && p.length > 0);
    if (paths.length === 0) {
      decision = "reject";
      why = `access edit allows ${kind} only with locations inside the working folder, and the call names none`;
    } else {
      const outside = paths.find((p) => !insideFolder(p, folderReal));
      decision = outside === undefined ? "allow" : "reject";
      why = outside === undefined ? `access edit allows ${kind} inside the working folder` : `${outside} is outside the working folder`;
    }
  } else {
    decision = "reject";
    why = `access ${access} does not allow ${kind}`;
  }
  const wanted = decision === "allow" ? "allow_once" : "reject_once";
  const option = options.find((o) => o && o.kind === wanted && typeof o.optionId === "string");
  if (!option) return { outcome: { outcome: "cancelled" }, decision, why: `${why}; no ${wanted} option was offered, so the request is cancelled` };
  return { outcome: { outcome: "selected", optionId: option.optionId }, decision, why };
}
