/**
 * What every kernel step shares: the overlay, the time, the environment and the current rules,
 * plus the small bookkeeping every step needs (ids, totals, the due table).
 */
import { Tx, emptyRules, type Projection } from "./view.js";
import type { Counters, DueKind, DueRow, Env, Totals } from "./types.js";
import { dueKey } from "./tables.js";
import { elsewhereSource, type Rules, type RuleDef } from "./rules.js";
import { refusal, t, worded, type MessageId, type ParamArg, type RefusalBody, type SaidArg, type Worded } from "../i18n/messages.js";

/** One decision's context, made by `decide` per input (and by the shell to render cards); never kept across inputs. */
export class Ctx {
  readonly tx: Tx;
  rules: Rules;
  readonly rulesVersion: number;
  /** Events recorded by this decision, by source and source id (for duplicates within one receipt). */
  readonly createdEvents = new Map<string, number>();
  /** Long polls this decision may have given something to: workers (new runs), channels by name (cards). */
  readonly wake = { workers: false, channels: new Set<string>() };

  constructor(readonly view: Projection, readonly now: number, readonly env: Env) {
    this.tx = new Tx(view);
    const meta = view.rules();
    this.rules = meta?.rules ?? emptyRules();
    this.rulesVersion = meta?.version ?? 0;
  }

  /** A text of the message catalog in the hub's language: for refusals and cards, never for data (`fixedText`). */
  msg<I extends MessageId>(id: I, ...params: ParamArg<I>): string {
    return t(this.env.lang, id, ...params);
  }

  /** A text the hub writes into a card: its words in the hub's language and its id and params beside (issue 27 #2). */
  worded<I extends MessageId>(id: I, ...params: SaidArg<I>): Worded {
    return worded(this.env.lang, id, ...params);
  }

  /** A refusal's body in the hub's language with its message id and params (issue 27 #2): `refuse(status, c.say(…))`. */
  say<I extends MessageId>(id: I, ...params: SaidArg<I>): RefusalBody {
    return refusal(this.env.lang, id, ...params);
  }

  /**
   * A rule by name; an `elsewhere` task with `to` and `cwd` acts as a rule too (its asks, once answered, wake
   * its agent in its folder, one run at a time in a group named after the task).
   */
  rule(name: string): RuleDef | undefined {
    const rule = this.rules.rules.find((r) => r.name === name);
    if (rule) return rule;
    const task = this.rules.elsewhere.find((e) => e.name === name);
    if (!task || task.to === null || task.cwd === null) return undefined;
    return {
      // Stryker disable next-line ArrayDeclaration: `types` only routes events, and routing reads rules.json's rules, never this task
      name: task.name, source: task.source ?? elsewhereSource, types: [], cron: null, to: task.to, cwd: task.cwd,
      skill: task.skill, prompt: task.prompt, group: task.name, parallel: null, resume: false, tell: "needed",
      emits: null, channels: null, budget: null,
    };
  }

  /** Allocates the next id of a kind. Ids are never reused, even after the row is gone. */
  nextId(kind: keyof Counters): number {
    const c = this.tx.get("meta", "ids") ?? { event: 0, run: 0, card: 0 };
    const id = (c[kind] ?? 0) + 1;
    c[kind] = id;
    this.tx.put("meta", "ids", c);
    return id;
  }

  /** Adds to the running totals kept for GET /v1/state (never recounted by scanning history). */
  count(delta: Partial<Totals>): void {
    const c = this.tx.get("meta", "totals") ?? { events: 0, unrouted: 0, runs: 0, cards: 0, openCards: 0 };
    for (const [k, v] of Object.entries(delta)) c[k as keyof Totals] += v as number;
    this.tx.put("meta", "totals", c);
  }

  /** Sets (or moves) one deadline of the due table to `at` (ms). */
  due(kind: DueKind, ref: string | number, at: number): void {
    const key = dueKey(kind, ref);
    const row: DueRow = { at, kind, ref: String(ref) };
    const old = this.tx.get("due", key);
    if (old && old.at === at) return;
    this.tx.put("due", key, row);
  }

  /** Removes one deadline of the due table, if present. */
  undue(kind: DueKind, ref: string | number): void {
    this.tx.del("due", dueKey(kind, ref));
  }

  /** A time (ms since the epoch) as the protocol shows it: an ISO string in UTC. */
  iso(ms: number): string {
    return new Date(ms).toISOString();
  }
}
