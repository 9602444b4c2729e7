/**
 * What every kind's conformance checks share (spec tool-plugins.md; issue 16): the options of a run, how a check's line
 * is added, the arguments made up for a call, and the ids and names a plugin must not expect. Each kind's own checks
 * are its runner's (runner.ts `RunnerKind.conformance`); conformance.ts runs them for a folder.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { Lang, MessageId } from "../i18n/messages.js";
import type { ConformanceLine } from "./types.js";

/** What a conformance run may be given: the arguments of the good call (else made up from the schema). */
export interface ConformanceOptions {
  lang: Lang;
  args?: Record<string, unknown>;
  bwrap?: string;
  log?: (subsystem: string, line: string) => void;
  /** The folder of a service's socket (made when missing): default, a new folder in the temp dir. */
  socketDir?: string;
  /** Paths a sandboxed plugin under test must not see (the hub's home, as for every sandbox of the host). */
  hidden?: string[];
  /** Why a plugin of this name is not run (the home's approvals deny it), or null; absent: every plugin runs. */
  refusal?: (plugin: string) => string | null;
}

/** The request id conformance uses: not 1, so a plugin that always answers id 1 is caught. */
export const conformanceRequestId = 4242;
/** A tool name no plugin has. */
export const missingToolName = "conformance-no-such-tool";

/** Arguments that fit `schema`'s required properties, made up from their types (strings are "conformance"). */
export function sampleArguments(schema: Record<string, unknown>): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const out: Record<string, unknown> = {};
  for (const name of required) {
    const p = props[name] ?? {};
    if (Array.isArray(p.enum) && p.enum.length > 0) out[name] = p.enum[0];
    else if (p.type === "integer" || p.type === "number") out[name] = typeof p.minimum === "number" ? p.minimum : 1;
    else if (p.type === "boolean") out[name] = true;
    else if (p.type === "array") out[name] = [];
    else if (p.type === "object") out[name] = sampleArguments(p);
    else out[name] = "conformance";
  }
  return out;
}

/** Adds one line of a conformance run: the check (a catalog id), its verdict, what was seen. */
export type ConformanceAdd = (id: MessageId, verdict: ConformanceLine["verdict"], detail: string) => void;

/** One argument that breaks the schema (a required string given as a number), or none when it has no typed one. */
export function brokenArgument(schema: Record<string, unknown>): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const name = Object.keys(props).find((k) => props[k]?.type === "string");
  return name ? { [name]: 12345 } : {};
}


/** How many calls the timeout check makes, each with half the time of the one before, before it sends one nothing. */
export const forcedTimeoutTries = 3;
/** The timeout of the timeout check's last call, which is sent nothing (ms): long enough for the plugin to start. */
export const forcedTimeoutMs = 300;

/**
 * How long the timeout check waits for a killed group to be gone before it says something is left (ms): SIGKILL is
 * sent, but a process goes on for a moment after its pipes close (they close before it turns zombie), which a loaded
 * machine makes visible (issue 34 point 9: 1 run in 30 said FIX for a plugin that starts no child).
 */
export const groupEndWaitMs = 2_000;

/**
 * The processes of group `pgid` still alive after waiting at most `waitMs` for them to go (checked every 25 ms):
 * `processGroupMembers` once the group is empty or the time is up; null where there is no /proc.
 */
export async function groupLeftAfter(pgid: number, waitMs: number): Promise<number[] | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const left = processGroupMembers(pgid);
    if (left === null || left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The live processes of process group `pgid` (their pids, ascending), from Linux /proc; null where there is no /proc.
 * A zombie (dead, not yet reaped) does not count.
 */
export function processGroupMembers(pgid: number): number[] | null {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return null;
  }
  const out: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // Fields after the command's closing parenthesis: state ppid pgrp …
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z" && state !== "X") out.push(Number(name));
  }
  return out.sort((a, b) => a - b);
}
