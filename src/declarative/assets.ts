/**
 * What rules use of declarative plugins (issue 18 "Workflows run", "Intents", "Prompts"): the loaded intents as the
 * kernel's `IntentTable`, and the content of the assets a run's rule names, which the hub adds to the job it hands
 * out (`Job.declared`). Read from what is registered at that moment: a reload between two runs applies to the next.
 */
import type { DeclarativeCatalog } from "./catalog.js";
import type { LoadedPlugin } from "./types.js";
import type { IntentTable } from "../kernel/intents.js";
import type { Job, PluginView } from "../protocol/responses.js";
import type { FormField, Workflow } from "../protocol/plugin-schemas.js";

/** `<plugin>/<name>` split in two, or null when it has no `/`. */
function splitRef(ref: string): [string, string] | null {
  const slash = ref.indexOf("/");
  return slash < 0 ? null : [ref.slice(0, slash), ref.slice(slash + 1)];
}

/** Every loaded intent as `<plugin>/<id>` → its `includes_any` phrases (the kernel matches events against them). */
export function intentTable(catalog: DeclarativeCatalog): IntentTable {
  const table: Record<string, readonly string[]> = Object.create(null) as Record<string, readonly string[]>;
  for (const record of catalog.list()) {
    const p = record.current;
    if (!p) continue;
    for (const [id, entry] of p.intents) table[`${p.id}/${id}`] = entry.intent.includes_any;
  }
  return table;
}

/** The slots of intent `<plugin>/<id>`, or null when that intent is not loaded. */
function slotsOf(catalog: DeclarativeCatalog, ref: string): FormField[] | null {
  const parts = splitRef(ref);
  const entry = parts ? catalog.get(parts[0])?.intents.get(parts[1]) : undefined;
  return entry ? entry.intent.slots ?? [] : null;
}

/** The text of prompt `<plugin>/<name>`, or null when it is not loaded. */
export function promptText(catalog: DeclarativeCatalog, ref: string): string | null {
  const parts = splitRef(ref);
  return (parts ? catalog.get(parts[0])?.prompts.get(parts[1]) : undefined) ?? null;
}

/** The workflow `<plugin>/<id>` as a job carries it, or null when it is not loaded. */
function workflowJob(catalog: DeclarativeCatalog, ref: string, intent: string | undefined): NonNullable<NonNullable<Job["declared"]>["workflow"]> | null {
  const parts = splitRef(ref);
  const plugin = parts ? catalog.get(parts[0]) : null;
  const wf: Workflow | undefined = parts ? plugin?.workflows.get(parts[1]) : undefined;
  if (!plugin || !wf) return null;
  const prompts: Record<string, string> = {};
  for (const s of wf.steps) {
    if (s.type !== "prompt" || s.promptRef === undefined) continue;
    const text = plugin.prompts.get(s.promptRef);
    if (text !== undefined) prompts[s.promptRef] = text;
  }
  // The rule's own intent wins; else the intent the workflow is bound to (`intentId`, of the same plugin).
  const slots = (intent !== undefined ? slotsOf(catalog, intent) : null) ?? (wf.intentId !== undefined ? slotsOf(catalog, `${plugin.id}/${wf.intentId}`) : null) ?? [];
  return { id: ref, steps: wf.steps, prompts, slots };
}

/** What to add to a job whose rule names declarative assets (`Job.declared`), or undefined when it names none. */
export function declaredFor(catalog: DeclarativeCatalog, rule: Job["rule"]): Job["declared"] {
  if (rule.promptRef === undefined && rule.workflow === undefined) return undefined;
  return {
    ...(rule.promptRef === undefined ? {} : { prompt: promptText(catalog, rule.promptRef) }),
    ...(rule.workflow === undefined ? {} : { workflow: workflowJob(catalog, rule.workflow, rule.intent) }),
  };
}

/**
 * What GET /v1/plugins lists of a loaded plugin for rules (issue 18): its prompts with their text (to copy, or to
 * name in `promptRef`), its workflows (`workflow`) with their step ids, its intents (`when.intent`) with their
 * phrases and slot names; each by the `<plugin>/<name>` a rule writes.
 */
export function ruleAssets(p: LoadedPlugin): Required<Pick<PluginView, "prompts" | "workflows" | "intents">> {
  return {
    prompts: [...p.prompts].map(([name, text]) => ({ ref: `${p.id}/${name}`, text })),
    workflows: [...p.workflows].map(([name, wf]) => ({ ref: `${p.id}/${name}`, title: wf.title ?? null, steps: wf.steps.map((s) => s.id) })),
    intents: [...p.intents].map(([id, e]) => ({ ref: `${p.id}/${id}`, includes_any: e.intent.includes_any, slots: (e.intent.slots ?? []).map((f) => f.name) })),
  };
}
