/**
 * The table registry: every projection table with the type of its key and of its rows, and the functions that
 * build the keys made of several parts (protocol.md 日志与确定性). The view layer (view.ts) reads and writes rows by
 * it, so a decision never names a row type itself: `c.tx.get("runs", id)` is a `RunRow`. The SQL of each table
 * (generated columns, indexes) is in evolve.ts, whose `tables` must name exactly these tables.
 *
 * A table whose keys hold rows of different shapes (`meta`, `spend`) lists one `{ key; row }` per shape; the key's
 * type picks the row's.
 */
import type {
  BudgetOk, CardKeyRow, CardRow, ChannelSeenRow, Counters, CronRow, DueKind, DueRow, EventRow, GroupRow, KeyRow, LaneRow,
  OutboxRow, PauseRow, RulesMeta, RulesRow, RulesVersionRow, RunRow, SessionRow, SpendRow, TimerRow, Totals, UsageRow,
  WorkerRow, ToolCallRow, TrustRow, GrantRow, TaskRow, ToolStatsRow, ToolCallsMeta, ArtifactRow, RuleStartsRow,
} from "./types.js";

/** `spend` key of a rule's usage in the budget period that starts at `start` (ms). */
export type SpendKey = `${string}\u0000${number}`;
/** `spend` key of the owner's "resume for the rest of the period" of a rule. */
export type BudgetOkKey = `ok\u0000${string}`;

/** Each projection table: the type of its key and of its rows. */
export interface Tables {
  /**
   * Hub-wide rows. "rules" holds the current rules version: with its body as a `rules` decision writes it, without it
   * (pointing at that fact) as the projection keeps it.
   */
  meta:
    | { key: "rules"; row: RulesMeta | RulesRow }
    | { key: "rulesVersion"; row: RulesVersionRow }
    | { key: "ids"; row: Counters }
    | { key: "totals"; row: Totals }
    | { key: "toolCalls"; row: ToolCallsMeta };
  /** Key: the SHA-256 of the bearer key. */
  keys: { key: string; row: KeyRow };
  events: { key: number; row: EventRow };
  runs: { key: number; row: RunRow };
  cards: { key: number; row: CardRow };
  /** Key: `laneKey`. */
  lanes: { key: string; row: LaneRow };
  /** Key: the group's name. */
  groups: { key: string; row: GroupRow };
  /** Key: the worker's name. */
  workers: { key: string; row: WorkerRow };
  /** Key: the channel's name. */
  channels: { key: string; row: ChannelSeenRow };
  /** Key: `timerKey`. */
  timers: { key: string; row: TimerRow };
  /** Key: `cardKeyOf` (rule, lane, dedup key). */
  cardkeys: { key: string; row: CardKeyRow };
  /** Key: the agent's session id. */
  sessions: { key: string; row: SessionRow };
  /** Key: `dueKey`. */
  due: { key: string; row: DueRow };
  /** Key: `outboxKey`. */
  outbox: { key: string; row: OutboxRow };
  /** Key: the rule's name. */
  pauses: { key: string; row: PauseRow };
  /** Key: the rule's name. */
  crons: { key: string; row: CronRow };
  /** Key: the rule's name (issue 26: the runs its events started in the current window; rate.ts). */
  starts: { key: string; row: RuleStartsRow };
  spend: { key: SpendKey; row: SpendRow } | { key: BudgetOkKey; row: BudgetOk };
  /** Key: the bucket's start (ms). Kept by `evolve` itself, never written by a decision. */
  usage: { key: number; row: UsageRow };
  /** Key: the tool call's id (issue 16). */
  calls: { key: number; row: ToolCallRow };
  /** Key: `trustKey`. */
  trust: { key: string; row: TrustRow };
  /** Key: `grantKey`. */
  grants: { key: string; row: GrantRow };
  /** Key: the HMAC of a parked call's task id (`toolTaskHash`). */
  tasks: { key: string; row: TaskRow };
  /** Key: `toolStatsKey`. */
  toolstats: { key: string; row: ToolStatsRow };
  /** Key: `artifactKey` (issue 18: a workflow's files). */
  artifacts: { key: string; row: ArtifactRow };
}

/** The name of a projection table (its SQL table is `v_<name>`). */
export type TableName = keyof Tables;
/** The keys of table `T`. */
export type KeyOf<T extends TableName> = Tables[T]["key"];
/**
 * The rows of table `T` under keys of type `K`: for most tables one type whatever the key; for `meta` and `spend` the
 * row of the shape whose key `K` is (of every shape when `K` is all the table's keys).
 */
export type RowOf<T extends TableName, K extends KeyOf<T> = KeyOf<T>> =
  Tables[T] extends infer E ? E extends { key: infer Q; row: infer R } ? (K extends Q ? R : never) : never : never;

/** Key of a lane row: rule name and lane (subject or ""), joined by a NUL. */
export function laneKey(rule: string, lane: string): string {
  return `${rule}\u0000${lane}`;
}

/** Key of a `later` timer: its lane's key and the timer's own key, joined by a NUL (also the `ref` of its deadline). */
export function timerKey(rule: string, lane: string, key: string): string {
  return `${laneKey(rule, lane)}\u0000${key}`;
}

/** Key of a `cardkeys` row: the card's rule ("" for none), lane and dedup key, joined by NULs. */
export function cardKeyOf(rule: string | null, lane: string, dedup: string): string {
  return `${rule ?? ""}\u0000${lane}\u0000${dedup}`;
}

/** Key of an outbox row: the channel and the card it offers, joined by a NUL. */
export function outboxKey(channel: string, card: number): string {
  return `${channel}\u0000${card}`;
}

/** Key of a deadline: `<kind>:<ref>`. */
export function dueKey(kind: DueKind, ref: string | number): string {
  return `${kind}:${ref}`;
}

/** Key of a rule's usage in the budget period starting at `start` (ms). */
export function spendKey(rule: string, start: number): SpendKey {
  return `${rule}\u0000${start}`;
}

/** Key of the owner's "resume for the rest of the period" of a rule. */
export function budgetOkKey(rule: string): BudgetOkKey {
  return `ok\u0000${rule}`;
}

/** Key of a trust entry: the plugin's name and its manifest digest, joined by a NUL. */
export function trustKey(plugin: string, digest: string): string {
  return `${plugin}\u0000${digest}`;
}

/**
 * Key of a grant: the session key, the tool (`<plugin>.<tool>`), the manifest digest and the arguments' digest (an
 * answer is bound to the arguments the owner saw: issue 26 #5), joined by NULs.
 */
export function grantKey(sessionKey: string, tool: string, digest: string, argsDigest: string): string {
  return `${sessionKey}\u0000${tool}\u0000${digest}\u0000${argsDigest}`;
}

/**
 * Key of a `toolstats` row: the quarter hour's start (ms, 15 digits, so keys sort by time) and the plugin, joined by
 * a NUL.
 */
export function toolStatsKey(bucket: number, plugin: string): string {
  return `${String(bucket).padStart(15, "0")}\u0000${plugin}`;
}

/** Key of an `artifacts` row: the run's id and the file's name, joined by a NUL. */
export function artifactKey(run: number, file: string): string {
  return `${run}\u0000${file}`;
}
