/**
 * The built-in `workflow` agent (issue 18 "Workflows run"; DESIGN.md "Plugin hosts"): a rule with `"use": "workflow"`
 * runs a declarative plugin's workflow as ordinary runs. The worker runs the steps in order — `prompt` as one launch
 * of the rule's agent (the same launch, sandbox and output reading as any run), `tool` as a call through the run's
 * tool bridge (offered by the rule, decided by the hub, run by the tool host, audited), `hitl` as the run's receipt
 * `ask` (the run ends; no process waits), `artifact` as a file of the run's folder — and the run's **session is the
 * workflow's position**: `wf-<uuid>-<n>` names a snapshot kept in `<home>/worker/workflows/` (the step to run next,
 * the outputs so far, the step waiting for an answer). The owner's answer continues that session in the lane's next
 * run, which reads the answer from its context and goes on at the next step; a failed run is retried from the step
 * that failed. Snapshots are never changed once written, so a retry or a repeated claim starts from the same place.
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Job } from "../protocol/responses.js";
import type { Ask, Notice, Result } from "../protocol/schema.js";
import type { AgentRead, Usage } from "../sdk/index.js";
import { t, type Lang } from "../i18n/messages.js";
import { readRegular, writeFileDurable } from "./files.js";
import { addUsage, type ReadMessage } from "./receipt.js";
import { cardTextMaxCodepoints, workflowOutputMaxChars } from "../kernel/limits.js";
import { artifactPath, neutralise, textForbiddenClass } from "../kernel/text.js";

/** A step of a workflow as the job carries it (protocol/declarative/workflow.schema.json `WorkflowStep`). */
type Step =
  | { id: string; type: "prompt"; title?: string; prompt?: string; promptRef?: string }
  | { id: string; type: "tool"; title?: string; tool: string; args?: Record<string, unknown> }
  | { id: string; type: "hitl"; title?: string; text?: string; options?: string[]; form?: Field[]; card?: string; continueOn?: string[] }
  | { id: string; type: "artifact"; title?: string; from: string; file: string };

/** A form field of a `hitl` step or an intent's slot (protocol/declarative/form-field.schema.json). */
interface Field { name: string; label: string; type?: string; required?: boolean; options?: string[]; default?: string | number | boolean }

/** The event a workflow started from, as its templates read it (`{{event.<field>}}`). */
type StartEvent = Record<"source" | "type" | "subject" | "summary" | "detail" | "link", string>;

/** A position of a workflow: one snapshot file, never changed once written. */
export interface WorkflowState {
  v: 1;
  /** `<plugin>/<id>`. */
  workflow: string;
  uuid: string;
  /** The snapshot's number within its workflow run; the session is `wf-<uuid>-<seq>`. */
  seq: number;
  /** Index of the step to run next (`steps.length`: all done). */
  at: number;
  /** What each step gave, by step id: a prompt's last message, a tool's result, a hitl's answer, an artifact's path. */
  outputs: Record<string, string>;
  /** The answers to the intent's slots (null: not asked yet or none to ask). */
  slots: Record<string, string | number | boolean> | null;
  /** The step (or `slots`) whose ask is out, waiting for its answer; null when none. */
  waiting: string | null;
  event: StartEvent | null;
  /**
   * Files the `artifact` steps wrote: name, absolute path, size in bytes, the run that sent it to the hub (absent in
   * snapshots from before they were sent: the run that ends the workflow), and why the hub did not get it (null: it did).
   */
  artifacts: { file: string; path: string; bytes: number; run?: number; notSent?: string | null }[];
}

/** The session of a snapshot: `wf-<uuid>-<seq>`. */
export function workflowSession(s: WorkflowState): string {
  return `wf-${s.uuid}-${s.seq}`;
}

const sessionPattern = /^wf-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-(\d{1,9})$/;

/** What the workflow needs of the worker running it (worker.ts gives it its own launch, tool bridge and submit). */
export interface WorkflowHost {
  job: Job;
  /** `<home>/worker/workflows`: the snapshots. */
  statesDir: string;
  /** The run's agent folder: artifacts go to its `artifacts/`. */
  agentDir: string;
  lang: Lang;
  /** One launch of the rule's agent with this prompt (the worker's fixed instructions around it); its number `n`. */
  launch(prompt: string): Promise<AgentRead | null>;
  /** Reads a last message (outcome, receipt). */
  message(text: string): Promise<ReadMessage>;
  /** A tool call through the run's tool bridge. */
  callTool(name: string, args: Record<string, unknown>): Promise<{ ok: true; text: string } | { ok: false; error: string; awaitingCard?: number | null; denied?: boolean }>;
  isCancelled(): boolean;
  /**
   * Sends a file an `artifact` step wrote to the hub (`PUT /v1/runs/:id/artifacts/:file`), trying again a few times
   * when the hub cannot be reached. Resolves to null when the hub has it, else to why not (never rejects).
   */
  sendArtifact(file: string, text: string): Promise<string | null>;
  /** Keeps the session the run is at, so a restarted worker goes on from there. */
  progress(session: string): void;
  submit(body: Result): Promise<void>;
}

/** A fault of the workflow's definition or data (a placeholder that names nothing, say): the run fails with it. */
class WorkflowError extends Error {}

/** Reads snapshot `session`, or null when it is not a workflow session of this worker. */
export function readState(dir: string, session: string | null): WorkflowState | null {
  if (!session || !sessionPattern.test(session)) return null;
  try {
    const s = JSON.parse(readRegular(join(dir, `${session}.json`))) as WorkflowState;
    return s && s.v === 1 && typeof s.workflow === "string" ? s : null;
  } catch {
    return null;
  }
}

/** Writes the next snapshot of `s` (seq one more) and returns it. */
function save(dir: string, s: Omit<WorkflowState, "seq"> & { seq: number }): WorkflowState {
  const next: WorkflowState = { ...s, seq: s.seq + 1 };
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileDurable(join(dir, `${workflowSession(next)}.json`), JSON.stringify(next));
  return next;
}

/** The start event of a job: its first event, or null (a manual run, a cron time). */
function startEvent(job: Job): StartEvent | null {
  const e = job.context.events[0];
  if (!e) return null;
  return { source: e.source, type: e.type, subject: e.subject ?? "", summary: e.summary ?? "", detail: e.detail ?? "", link: e.link ?? "" };
}

const placeholder = /\{\{\s*(event|steps|slots)\.([A-Za-z0-9_-]+)\s*\}\}/g;
const anyPlaceholder = /\{\{[^{}]*\}\}/;

/**
 * The value of one placeholder: `{{event.summary}}` (also source, type, subject, detail, link), `{{steps.<id>}}` (an
 * earlier step's output), `{{slots.<name>}}` (an answered slot; "" when left empty).
 * @throws WorkflowError naming the placeholder when it names nothing here.
 */
function lookup(s: WorkflowState, kind: string, name: string): string | number | boolean {
  if (kind === "event") {
    const v = s.event && Object.hasOwn(s.event, name) ? s.event[name as keyof StartEvent] : undefined;
    if (v === undefined && !["source", "type", "subject", "summary", "detail", "link"].includes(name)) throw new WorkflowError(`{{event.${name}}}`);
    return v ?? "";
  }
  if (kind === "steps") {
    if (!Object.hasOwn(s.outputs, name)) throw new WorkflowError(`{{steps.${name}}}`);
    return s.outputs[name]!;
  }
  return s.slots && Object.hasOwn(s.slots, name) ? s.slots[name]! : "";
}

/** Fills a text template once: substituted text is never read for placeholders again. */
export function fill(template: string, s: WorkflowState): string {
  return template.replace(placeholder, (_m, kind: string, name: string) => String(lookup(s, kind, name)));
}

/** Fills a tool step's arguments: a string that is one placeholder becomes its value, one inside text its text. */
function fillArgs(v: unknown, s: WorkflowState): unknown {
  if (typeof v === "string") {
    const whole = /^\{\{\s*(event|steps|slots)\.([A-Za-z0-9_-]+)\s*\}\}$/.exec(v);
    return whole ? lookup(s, whole[1]!, whole[2]!) : fill(v, s);
  }
  if (Array.isArray(v)) return v.map((x) => fillArgs(x, s));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillArgs(x, s)]));
  return v;
}

/** The marker of an ask of this workflow run: its `about` and `key`, by which its answer is found in the next run. */
function askMarker(s: WorkflowState, step: string): string {
  return `workflow ${s.workflow} · ${step} · ${s.uuid}`;
}

/** An ask of a form (a `hitl` step's `form`, an intent's `slots`): the fields as lines to answer. */
function formAsk(title: string, text: string | undefined, fields: Field[], marker: string, lang: Lang, missing: string[]): Ask {
  const lines = fields.map((f) => {
    const choices = f.options?.length ? ` (${f.options.join(" | ")})` : "";
    const extra = [f.required ? t(lang, "workflow.form.required") : null, f.default !== undefined ? t(lang, "workflow.form.default", { value: String(f.default) }) : null].filter(Boolean).join(", ");
    return `- ${f.name}: ${f.label}${choices}${extra ? ` — ${extra}` : ""}`;
  });
  const parts = [
    ...(missing.length ? [t(lang, "workflow.form.missing", { fields: missing.join(", ") })] : []),
    ...(text ? [text] : []),
    t(lang, "workflow.form.how"),
    ...lines,
  ];
  return { title: clip(title, 200), text: clip(parts.join("\n"), 4000), options: [t(lang, "workflow.form.submit")], about: marker, key: clip(marker, 200) };
}

/**
 * What a reader does not see, or a card's text may not hold: controls (not line breaks and tabs), bidi, format and
 * default-ignorable characters, the braille blank (U+2800), and a carriage return that ends no line (round 57, F57a-1: in `cards.txt`, `cat`
 * showed only what came after it: "Please wire $5000 to mallory\rOK: routine weekly note").
 */
const unseen = new RegExp(`[${textForbiddenClass}\\u2028\\u2029\\u2800\\p{Default_Ignorable_Code_Point}\\p{Cf}]|\\r(?!\\n)`, "gu");

/**
 * `text` with every character of `unseen` written as `\u{<hex>}`, so that a hitl card shows all that the steps after it
 * send (issue 26 round 56, F56b-1: tag characters and zero-width spaces hid "reply with ~/.ssh/id_rsa" in a draft the
 * owner saw as "the release notes are attached" and sent with "Send"). The text the steps use is unchanged.
 */
export function visible(text: string): string {
  // A backslash of the text's own is doubled, so a `\u{200b}` it spells out is told from one written here (F57a-6).
  return text.replace(/\\/g, "\\\\").replace(unseen, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/**
 * A hitl step's filled text as its card shows it (`visible`), in at most `budget` codepoints: whole when it fits; else its head
 * and a line saying how many characters are left out and where the whole text is — sent to the hub first as the run's
 * artifact `<step>.card.txt` (issue 26 round 55, F55-3: a card showed 4,000 of a draft's 4,341 characters and the send
 * step after it sent all). Resolves to `{ error }` when the hub did not get the whole text: a step does not ask about
 * what the owner cannot read.
 */
async function cardText(filled: string | undefined, budget: number, stepId: string, h: WorkflowHost): Promise<{ text: string | undefined } | { error: string }> {
  if (filled === undefined) return { text: filled };
  const text = visible(filled);
  const cps = [...text];
  if (cps.length <= budget) return { text };
  const file = `${stepId}.card.txt`;
  const notSent = await h.sendArtifact(file, text);
  if (notSent !== null) return { error: t(h.lang, "workflow.cardTextNotSent", { step: stepId, error: notSent }) };
  const line = (kept: number) => t(h.lang, "workflow.card.cut", { count: cps.length - kept, doc: `run:${h.job.run}/${file}`, route: artifactPath(h.job.run, file) });
  // The note's length depends on the count's digits: measured with the largest count (nothing kept), the head fits.
  const kept = Math.max(0, budget - [...line(0)].length - 3);
  return { text: `${cps.slice(0, kept).join("")}…\n\n${line(kept)}` };
}

function clip(text: string, max: number): string {
  const cps = [...text];
  return cps.length <= max ? text : cps.slice(0, max - 1).join("") + "…";
}

/**
 * A form's answer: a JSON object, or lines `name: value` (or `name = value`). Values of `number` fields become
 * numbers, of `checkbox` fields booleans; a field left out takes its default. Returns the values and the required
 * fields still missing.
 */
export function readForm(text: string | null, fields: Field[]): { values: Record<string, string | number | boolean>; missing: string[] } {
  const given: Record<string, unknown> = {};
  const raw = (text ?? "").trim();
  let parsed = false;
  if (raw.startsWith("{")) {
    try {
      const v = JSON.parse(raw) as unknown;
      if (v && typeof v === "object" && !Array.isArray(v)) {
        Object.assign(given, v);
        parsed = true;
      }
    } catch {
      // not JSON: read as lines
    }
  }
  if (!parsed) {
    for (const line of raw.split(/\r?\n/)) {
      const m = /^\s*[-*]?\s*([A-Za-z_][A-Za-z0-9_]*)\s*[:=：]\s*(.*)$/.exec(line);
      if (m) given[m[1]!] = m[2]!.trim();
    }
  }
  const values: Record<string, string | number | boolean> = {};
  const missing: string[] = [];
  for (const f of fields) {
    let v = Object.hasOwn(given, f.name) ? given[f.name] : undefined;
    if (v === "" || v === null) v = undefined;
    if (v !== undefined && f.type === "number" && typeof v !== "number") v = Number.isFinite(Number(v)) ? Number(v) : undefined;
    if (v !== undefined && f.type === "checkbox" && typeof v !== "boolean") v = /^(true|yes|1|on|是)$/i.test(String(v));
    if (v !== undefined && typeof v !== "number" && typeof v !== "boolean") v = String(v);
    if (v !== undefined && f.options?.length && !f.options.includes(String(v))) v = undefined;
    if (v === undefined) v = f.default;
    if (v === undefined) {
      if (f.required) missing.push(f.name);
      continue;
    }
    values[f.name] = v as string | number | boolean;
  }
  return { values, missing };
}

/** A last message without its receipt block (a prompt step's output). */
function withoutReceipt(text: string): string {
  return text.replace(/^(`{3,}|~{3,})[ \t]*agent-autoloop[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, "").trim();
}


/** A step's run: the workflow's host and definition, the position it is at, and the ways it ends or asks. */
interface StepRun {
  h: WorkflowHost;
  /** The position the step runs at. */
  s: WorkflowState;
  def: NonNullable<NonNullable<Job["declared"]>["workflow"]>;
  /** The workflow's `<plugin>/<id>`. */
  ref: string;
  /** The usage of the run's launches so far (a prompt step adds its own). */
  usage: Usage;
  /** Ends the run here with `body` (submitted with the position and usage). */
  end(body: Omit<Result, "session" | "usage">): Promise<void>;
  /** Ends the run with an ask, the workflow waiting at `waiting` (a step id, or `slots`). */
  ask(a: Ask, waiting: string): Promise<void>;
  /** The owner's answer to the ask of `step` at this position, if it came. */
  answerTo(step: string): Job["context"]["answers"][number] | undefined;
}

/**
 * What a step's handler decided: its output (the workflow moves on; an `artifact` step also records its file), the run
 * ended here (its result submitted: failed, waiting for an answer), or `again` (cancelled meanwhile: the loop ends it).
 */
type StepOutcome = { output: string; artifact?: WorkflowState["artifacts"][number] } | { ended: true } | "again";

/** Runs one step of type `K`. */
type StepHandler<K extends Step["type"]> = (step: Extract<Step, { type: K }>, r: StepRun) => Promise<StepOutcome>;

const ended = async (done: Promise<void>): Promise<StepOutcome> => {
  await done;
  return { ended: true };
};

/**
 * The step handlers, one per step type (declarative-plugins.md 工作流): a new type is one handler here, and the
 * compiler names this table until it has one.
 */
const stepHandlers: { [K in Step["type"]]: StepHandler<K> } = {
  /** A launch of the rule's agent with the step's prompt (filled); its last message, receipt left out, is the output. */
  async prompt(step, { h, s, def, usage, end }) {
    const lang = h.lang;
    const template = step.prompt ?? def.prompts[step.promptRef ?? ""];
    if (template === undefined) throw new WorkflowError(t(lang, "workflow.noPrompt", { step: step.id, prompt: step.promptRef ?? "" }));
    const read = await h.launch(fill(template, s));
    addUsage(usage, read?.usage);
    if (h.isCancelled()) return "again";
    if (!read || read.error || typeof read.text !== "string") {
      return ended(end({ outcome: "failed", error: t(lang, "workflow.stepFailed", { step: step.id, error: read?.error ?? "the agent gave no last message" }) }));
    }
    const msg = await h.message(read.text);
    if (msg.outcome === "failed") return ended(end({ outcome: "failed", error: t(lang, "workflow.stepFailed", { step: step.id, error: msg.error ?? msg.summary }) }));
    return { output: withoutReceipt(read.text) };
  },
  /** A tool call through the run's tool bridge; its text is the output. */
  async tool(step, { h, s, ref, end }) {
    const lang = h.lang;
    const args = fillArgs(step.args ?? {}, s) as Record<string, unknown>;
    const r = await h.callTool(step.tool, args);
    if (r.ok) return { output: r.text };
    if (r.awaitingCard !== undefined) {
      // The owner has not decided on the call yet: this run ends here; their answer wakes the lane, whose next
      // run continues this session and calls again.
      return ended(end({ outcome: "done", summary: t(lang, "workflow.awaitingTool", { workflow: ref, step: step.id, card: r.awaitingCard ?? "?" }) }));
    }
    // A call the hub denied or refused ends the workflow for good: a failed run is tried again later, and the retry
    // ran the call once the plugin was trusted on another card (round 55, F55-4).
    if (r.denied) return ended(end({ outcome: "done", summary: t(lang, "workflow.toolDenied", { workflow: ref, step: step.id, error: clip(r.error, 500) }) }));
    return ended(end({ outcome: "failed", error: t(lang, "workflow.stepFailed", { step: step.id, error: r.error }) }));
  },
  /**
   * A question to the owner (options, a form, or a card template); the answer is the output. With `continueOn`, an
   * answer that is not one of those options (another option, or text) ends the workflow there, done (issue 26 round
   * 53, F53b-1: "Cancel" went on to the step that sent the draft).
   */
  async hitl(step, { h, s, ref, ask, answerTo, end }) {
    const lang = h.lang;
    const title = step.title ?? step.id;
    const marker = askMarker(s, step.id);
    const text = step.text === undefined ? undefined : fill(step.text, s);
    const a = s.waiting === step.id ? answerTo(step.id) : undefined;
    if (step.form) {
      const form = a ? readForm(a.text, step.form) : null;
      if (!form || form.missing.length) {
        const missing = form?.missing ?? [];
        const shown = await cardText(text, cardTextMaxCodepoints - [...formAsk(title, undefined, step.form, marker, lang, missing).text!].length - 1, step.id, h);
        if ("error" in shown) return ended(end({ outcome: "failed", error: shown.error }));
        return ended(ask(formAsk(title, shown.text, step.form, marker, lang, missing), step.id));
      }
      // A form's answer is no option: with continueOn it never goes on (round 55, F55-1: "NO" went on to the tool step).
      if (step.continueOn) return ended(end({ outcome: "done", summary: t(lang, "workflow.stopped", { workflow: ref, step: step.id, answer: clip(a?.text ?? "", 200) }) }));
      return { output: JSON.stringify(form.values) };
    }
    const options = step.options ?? [t(lang, "workflow.card.ok")];
    if (!a) {
      // A step of kind card names a card template of the workflow's own plugin: the ask names it as a receipt's
      // ask can (`<plugin>/<template>`), so the console shows the template whole; its options answer it.
      const card = step.card === undefined ? {} : { card: `${ref.slice(0, ref.indexOf("/"))}/${step.card}` };
      const shown = await cardText(text, cardTextMaxCodepoints, step.id, h);
      if ("error" in shown) return ended(end({ outcome: "failed", error: shown.error }));
      return ended(ask({ title: clip(title, 200), ...(shown.text ? { text: shown.text } : {}), options, about: marker, key: clip(marker, 200), ...card }, step.id));
    }
    const answer = a.choice !== null && a.choice !== undefined ? (a.options[a.choice] ?? "") : (a.text ?? "");
    const chosen = a.choice !== null && a.choice !== undefined;
    if (step.continueOn && !(chosen && step.continueOn.includes(answer))) {
      return ended(end({ outcome: "done", summary: t(lang, "workflow.stopped", { workflow: ref, step: step.id, answer: clip(answer, 200) }) }));
    }
    return { output: answer };
  },
  /** An earlier step's output written to a file of the agent's folder and sent to the hub; the file's path is the output. */
  async artifact(step, { h, s }) {
    if (!Object.hasOwn(s.outputs, step.from)) throw new WorkflowError(`{{steps.${step.from}}}`);
    const dir = join(h.agentDir, "artifacts");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, step.file);
    const content: string = s.outputs[step.from]!;
    writeFileDurable(path, content);
    // The hub may run on another machine: it gets the text now, so the owner can open it from the notice, the
    // console or a card (a doc-ref `run:<id>/<file>`). A file it did not get is said in the notice; the step
    // stands, as the file is written here.
    // The hub's copy holds what every /v1 text may: control characters other than line breaks and tabs left out.
    const notSent = await h.sendArtifact(step.file, neutralise(content, false));
    return { output: path, artifact: { file: step.file, path, bytes: Buffer.byteLength(content), run: h.job.run, notSent } };
  },
};

/**
 * Runs a workflow job from the position its session names (a new workflow run when it names none of this worker's
 * snapshots) until it ends, asks, fails or is cancelled, and submits the run's result. Throws only for the worker's own
 * file faults (the worker tries the run again, as for any run).
 */
export async function runWorkflow(h: WorkflowHost, resumeFrom: string | null): Promise<void> {
  const { job, lang } = h;
  const def = job.declared?.workflow;
  const ref = job.rule.workflow ?? "";
  if (!def) return h.submit({ outcome: "failed", error: t(lang, "workflow.notLoaded", { workflow: ref }), session: job.session });
  const steps = def.steps as Step[];
  const slots = def.slots as Field[];
  let s = readState(h.statesDir, resumeFrom ?? job.session);
  if (!s || s.workflow !== ref) {
    s = save(h.statesDir, {
      v: 1, workflow: ref, uuid: randomUUID(), seq: 0, at: 0, outputs: {}, slots: slots.length ? null : {}, waiting: null,
      event: startEvent(job), artifacts: [],
    });
  }
  h.progress(workflowSession(s));
  const usage: Usage = {};
  const end = (body: Omit<Result, "session" | "usage">, at: WorkflowState) =>
    h.submit({ ...body, session: workflowSession(at), ...(Object.keys(usage).length ? { usage } : {}) });
  const advance = (patch: Partial<WorkflowState>): WorkflowState => {
    s = save(h.statesDir, { ...s!, ...patch });
    h.progress(workflowSession(s));
    return s;
  };
  const ask = (a: Ask, waiting: string) => {
    const at = advance({ waiting });
    return end({ outcome: "done", summary: t(lang, "workflow.waiting", { workflow: ref, title: a.title }), ask: [a] }, at);
  };
  const answerTo = (step: string) => job.context.answers.filter((a) => a.about === askMarker(s!, step)).pop();

  try {
    // The intent's slots, asked as one form before the first step; their answers are `{{slots.<name>}}`.
    if (s.slots === null) {
      const title = t(lang, "workflow.slots.title", { workflow: ref });
      if (s.waiting !== "slots") return await ask(formAsk(title, undefined, slots, askMarker(s, "slots"), lang, []), "slots");
      const a = answerTo("slots");
      if (!a) return await ask(formAsk(title, undefined, slots, askMarker(s, "slots"), lang, []), "slots");
      const form = readForm(a.text, slots);
      if (form.missing.length) return await ask(formAsk(title, undefined, slots, askMarker(s, "slots"), lang, form.missing), "slots");
      advance({ slots: form.values, waiting: null });
    }
    while (s.at < steps.length) {
      if (h.isCancelled()) return await h.submit({ outcome: "cancelled", session: workflowSession(s), ...(Object.keys(usage).length ? { usage } : {}) });
      const step: Step = steps[s.at]!;
      const run: StepRun = { h, s, def, ref, usage, end: (body) => end(body, s!), ask, answerTo };
      // One handler per step type (stepHandlers): TypeScript cannot follow the lookup by the step's own type.
      const handle = stepHandlers[step.type] as StepHandler<Step["type"]>;
      const outcome = await handle(step, run);
      if (outcome === "again") continue;
      if ("ended" in outcome) return;
      if (outcome.artifact) s = { ...s, artifacts: [...s.artifacts.filter((x) => x.file !== outcome.artifact!.file), outcome.artifact] };
      advance({ at: s.at + 1, waiting: null, outputs: { ...s.outputs, [step.id]: clip(outcome.output, workflowOutputMaxChars) } });
    }
    if (h.isCancelled()) return await h.submit({ outcome: "cancelled", session: workflowSession(s) });
    const notice: Notice[] = s.artifacts.length === 0 ? [] : [{
      title: t(lang, "workflow.artifacts.title", { workflow: ref, n: s.artifacts.length }),
      text: clip(s.artifacts.map((a) => {
        const run = a.run ?? job.run;
        return a.notSent
          ? t(lang, "workflow.artifacts.notSent", { file: a.file, bytes: a.bytes, path: a.path, error: a.notSent })
          : t(lang, "workflow.artifacts.line", { file: a.file, bytes: a.bytes, path: a.path, doc: `run:${run}/${a.file}`, route: artifactPath(run, a.file) });
      }).join("\n"), 4000),
      fyi: true,
    }];
    return await end({ outcome: "done", summary: t(lang, "workflow.done", { workflow: ref, steps: steps.length, files: s.artifacts.map((a) => a.file).join(", ") || "-" }), ...(notice.length ? { notice } : {}) }, s);
  } catch (e) {
    if (!(e instanceof WorkflowError)) throw e;
    const message = anyPlaceholder.test(e.message) ? t(lang, "workflow.placeholder", { placeholder: e.message, step: steps[s.at]?.id ?? "" }) : e.message;
    return end({ outcome: "failed", error: message }, s);
  }
}

/** Whether a run folder's progress file names a session this worker can go on from. */
export function progressOf(file: string): string | null {
  if (!existsSync(file)) return null;
  try {
    const v = readRegular(file).trim();
    return sessionPattern.test(v) ? v : null;
  } catch {
    return null;
  }
}
