/**
 * POST /v1/tell (protocol.md 来源: 直接告诉你): a source or an `elsewhere` task speaks to the owner without an agent.
 * `key` + `text` is an fyi notice, sent once per key; an `ask` (tasks with `cwd` only) is a question whose answer
 * wakes the task's agent in its folder.
 */
import type { Ctx } from "./context.js";
import type { Caller } from "./types.js";
import type { TellBody } from "../protocol/schema.js";
import { createCard, dedupKey, openCardByKey, sentFyiNotice } from "./cards.js";
import { elsewhereSource, templateTied } from "./rules.js";
import { own } from "./own.js";
import { assert } from "./assert.js";
import { refuse as err, type Reply } from "./reply.js";
import type { TellAnswer } from "../protocol/responses.js";


/**
 * Decides POST /v1/tell for a source or worker key (the caller's kind was checked): an fyi notice once per key, or an
 * ask of an `elsewhere` task. Refusals: 403 a source naming a task or a worker not running it, 404 an unknown task,
 * 400 a missing field, an ask with key/text, an ask of a task without `cwd`.
 */
export function tell(c: Ctx, who: Caller, b: TellBody): Reply<TellAnswer> {
  let speaker: string;
  let source: string;
  const task = c.rules.elsewhere.find((e) => e.name === b.task); // none when b.task is undefined
  if (who.kind === "source") {
    if (b.task !== undefined) return err(403, c.say("tell.sourceTask"));
    speaker = `source:${who.name}`;
    source = who.name;
  } else {
    if (b.task === undefined) return err(400, c.say("field.required", { field: "task" }));
    if (!task) return err(404, c.say("tell.noTask", { name: b.task }));
    const worker = task.to !== null ? own(c.rules.agents, task.to)!.worker : undefined; // parseRules checked the agent exists
    if (worker !== who.name) return err(403, c.say("tell.notYourTask", { name: task.name }));
    // A task name may hold ":" (the separator of the notice key below): escaped, so no name and key pair reads as
    // another. Source names cannot hold ":" or a backslash, and task names without them keep the key they always had.
    speaker = `task:${task.name.replace(/[\\:]/g, "\\$&")}`;
    source = task.source ?? elsewhereSource;
  }
  if (b.ask) {
    if (b.key !== undefined || b.text !== undefined) return err(400, c.say("tell.askOrText"));
    const rule = task ? c.rule(task.name) : undefined;
    if (!task || !rule) return err(400, c.say("tell.askNeedsCwd"));
    // A card template only of a plugin the task's rule uses, as a receipt's ask (issue 26 round 53, F53b-7).
    if (b.ask.card !== undefined && !templateTied(rule, b.ask.card)) return err(400, c.say("tell.templateNotTied", { task: task.name, template: b.ask.card }));
    const existing = openCardByKey(c, rule.name, "", dedupKey(b.ask));
    if (existing) return { status: 200, body: { card: existing.id, duplicate: true } };
    const id = createCard(c, {
      kind: "ask", title: b.ask.title, text: b.ask.text, options: b.ask.options, recommend: b.ask.recommend ?? null,
      about: b.ask.about ?? null, key: b.ask.key ?? null, rule, lane: "", run: null, template: b.ask.card,
    });
    // No equal ask is open (checked above), so the card is made.
    assert(id !== null, "tell-ask-made");
    return { status: 200, body: { card: id, duplicate: false } };
  }
  if (b.key === undefined) return err(400, c.say("field.required", { field: "key" }));
  if (b.text === undefined) return err(400, c.say("field.required", { field: "text" }));
  const title = b.title ?? (task ? task.name : own(c.rules.sources, source)?.name ?? source);
  const sent = sentFyiNotice(c, speaker, b.key);
  if (sent !== undefined) return { status: 200, body: { card: sent, duplicate: true } };
  const id = createCard(c, { kind: "notice", fyi: true, title, text: b.text, key: b.key, rule: null, lane: "", run: null, source, fyiScope: speaker });
  // This key was not told before by this speaker (checked above), so the notice is made.
  assert(id !== null, "tell-notice-made");
  return { status: 200, body: { card: id, duplicate: false } };
}
