/**
 * Shared by the tool-call tests (issue 16): rules that offer tools, call bodies as the tool bridge sends them, and the
 * calls as the owner sees them (the facts of `why` and of the stream).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseRules, serveFixture, streamFacts, tempDir, type Fixture, type Keys } from "./helpers.js";
import { toolArgsDigest, toolArgsPreview } from "../src/protocol/tool-calls.js";
import { HubClient } from "../src/protocol/client.js";
import type { ToolCallBody } from "../src/protocol/schema.js";
import type { Fact } from "../src/protocol/responses.js";
import type { KeyOf, RowOf, TableName } from "../src/kernel/tables.js";
import type { ToolCallRow } from "../src/kernel/types.js";
import type { Home } from "../src/host/home.js";

export const digestA = "a".repeat(64);
export const digestB = "b".repeat(64);
export const args = { name: "Ada" };

/** Rules whose rule `alerts` offers `tools`, one run per subject, with these approvals and hold. */
export function toolRules(approvals: unknown[], tools: string[], approvalWaitSeconds?: number) {
  return {
    ...baseRules,
    approvals,
    ...(approvalWaitSeconds === undefined ? {} : { approvalWaitSeconds }),
    rules: [{ ...baseRules.rules[0], parallel: 10, tools }, baseRules.rules[1]],
  };
}

/**
 * A folder of built-in tool plugins for a hub's own registry (ServeOptions `builtinToolRoot`): a sync plugin for each
 * name, whose manifest hides its tools from models when `hidden` (issue 26: the hub decides by its registry, not by
 * what a call's body says of the plugin). The caller removes the folder.
 */
export function builtinPlugins(plugins: Record<string, { hidden?: boolean }>): string {
  const root = tempDir("aa-builtin-tools-");
  for (const [name, p] of Object.entries(plugins)) {
    mkdirSync(join(root, name));
    writeFileSync(join(root, name, "manifest.toml"), [
      `name = "${name}"`, `version = "0.1.0"`, `plugin_type = "sync"`, "", "[entry_point]", `command = "true"`, "",
      ...(p.hidden ? ["[capabilities]", "disable_model_invocation = true"] : []),
    ].join("\n"));
  }
  return root;
}

/** A call body for `tool`: the arguments' digest and preview as the bridge sends them, manifest A, not built in, kind sync. */
export function callBody(tool: string, o: Partial<ToolCallBody> = {}): ToolCallBody {
  return { tool, argsDigest: toolArgsDigest(args), preview: toolArgsPreview(args), manifestDigest: digestA, builtIn: false, disableModelInvocation: false, kind: "sync", ...o };
}


/**
 * The newest row of each key of `table` that `facts` carry (null: the fact deleted it), keys in the order first seen.
 * A fact carries the whole row it wrote (protocol.md 日志与确定性), so this is what the owner can know of a row.
 */
export function factRows<T extends TableName>(facts: Fact[], table: T): Map<KeyOf<T>, RowOf<T> | null> {
  const rows = new Map<KeyOf<T>, RowOf<T> | null>();
  for (const fact of facts) for (const [t, key, row] of fact.changes) if (t === table) rows.set(key as KeyOf<T>, row as RowOf<T> | null);
  return rows;
}

/** The tool calls in `facts`, each as its newest row, by call id. */
function callsIn(facts: Fact[]): ToolCallRow[] {
  return [...factRows(facts, "calls").values()].filter((r) => r !== null).sort((a, b) => a.id - b.id);
}

/** GET /v1/runs/:id/why with the owner's key: the facts about `run`. */
export async function whyFacts(f: Fixture, run: number): Promise<Fact[]> {
  return (await new HubClient(f.url, f.keys.owner).why(run)).facts;
}

/** The tool calls of `run` as its `why` shows them now: each call's newest row, by call id. */
export async function callFacts(f: Fixture, run: number): Promise<ToolCallRow[]> {
  return callsIn(await whyFacts(f, run));
}

/** Tool call `call` of `run` as its `why` shows it now. @throws when the run's facts have no such call. */
export async function lastCallRow(f: Fixture, run: number, call: number): Promise<ToolCallRow> {
  const row = (await callFacts(f, run)).find((c) => c.id === call);
  if (!row) throw new Error(`run ${run}'s why has no tool call ${call}`);
  return row;
}

/** Every tool call of the hub, the owner's own (no run, so in no `why`) too, as GET /v1/stream's facts show them. */
export async function streamCalls(f: Fixture): Promise<ToolCallRow[]> {
  return callsIn(await streamFacts(f));
}

/**
 * The tool calls a home recorded while no hub ran (`plugins invoke` writes them into its database under its lock), as
 * the owner sees them once a hub runs there: a hub is started on the home, its stream read, and the hub closed (which
 * removes the home).
 */
export async function recordedCalls(made: { dir: string; home: Home; keys: Keys }): Promise<ToolCallRow[]> {
  const f = await serveFixture(made);
  try {
    return await streamCalls(f);
  } finally {
    await f.close();
  }
}
