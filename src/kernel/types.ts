/**
 * The kernel's data: facts, projection rows, inputs and decisions (protocol.md 日志与确定性).
 * Times inside rows are milliseconds since the Unix epoch (UTC); the protocol shows them as ISO strings.
 */
import type { Rules } from "./rules.js";
import type { IntentTable } from "./intents.js";
import type { EventIn, PluginCallbackBody, Result, TellBody, ToolCallBody, ToolCallKind, ToolOutcomeBody, Usage } from "../protocol/schema.js";
import type {
  AnswerAnswer, ArtifactStored, CancelAnswer, CardNext, Changed, EventAccepted, EventsAccepted, Job, Ok, PauseAnswer, ResultAnswer,
  ResumeAnswer, RunNowAnswer, TellAnswer, ToolCallDecision, WorkAnswer,
} from "../protocol/responses.js";
import type { Reply } from "./reply.js";
import type { CardTexts, WireText } from "../i18n/messages.js";
import type { CardState, KeyKind, RunOutcome, RunState, ToolCallStatus } from "./states.js";

/** The shared enumerations live in states.ts (imported by the protocol's shapes too); re-exported for the kernel's rows. */
export { cardStates, keyKinds, runStates, toolCallStatuses } from "./states.js";
export type { CardState, KeyKind, RunOutcome, RunState, ToolCallStatus };

/** One projection row change: `[table, key, row]`; `row === null` deletes the row. */
export type Change = [table: string, key: string | number, row: object | null];

/** A fact before the store gives it a sequence number. */
export interface FactDraft { kind: string; changes: Change[] }
/** One fact of the append-only log: version, sequence, UTC ISO time, kind, normalized row changes. */
export interface Fact extends FactDraft { v: 1; seq: number; at: string }

/** A `keys` row (key: the SHA-256 of the bearer key): its kind, name and when it was made (ms). */
export interface KeyRow { kind: KeyKind; name: string; at: number }

/** An `events` row (key: the hub's event id): the event as recorded, where it went, and when (ms). */
export interface EventRow {
  id: number;
  source: string;
  /** The source's own id (`id` of POST /v1/events), unique per source. */
  sid: string;
  type: string;
  subject: string | null;
  summary: string | null;
  detail: string | null;
  link: string | null;
  hops: number;
  at: number;
  /** Rules that took the event. */
  routed: string[];
  /** Rules that matched but were paused. */
  paused: string[];
  /** No rule matched (and none was paused). */
  unrouted: boolean;
  /** Events the hub made itself: an answer, a timer, a manual run, a cron time. */
  internal: "answer" | "timer" | "manual" | "cron" | "receipt" | null;
  /** Recorded but not dispatched because its hops went past the limit. */
  tooDeep?: boolean;
  /** An event the hub made: its summary as a message id and params (issue 27 #2: a manual run's, `fixedText`). */
  texts?: { summary: WireText };
}

/** A `later` timer as it joins a run: its key, what it is about, when it was set for (ms), the run that set it. */
export interface TimerFire { key: string; about: string | null; at: number; run: number | null }

/** Usage reported for a run, summed over its attempts: tokens, and cost in USD. */
export interface UsageSum { input?: number; output?: number; cached?: number; cost?: number }

/**
 * What a claimed run keeps of its rule and agent: later rule edits do not change it. It is the job a worker gets
 * (protocol `Job`, src/protocol/responses.ts) without what each claim sets: run id, token and attempt.
 */
export type JobSnapshot = Omit<Job, "run" | "token" | "attempt" | "tools" | "sessionKey" | "declared"> & {
  /** The rule's `tools` patterns (issue 16); absent in runs claimed before they were kept: none. */
  tools?: string[];
  /** The session key of the run's tool calls, `<rule>:<lane>`; absent in runs claimed before it was kept. */
  sessionKey?: string;
};

/** A `runs` row (key: the run id): one run of a rule in a lane, its attempts, claim, job, session and end. Times in ms. */
export interface RunRow {
  id: number;
  rule: string;
  lane: string;
  group: string;
  state: RunState;
  events: number[];
  /** Card ids whose answers this run continues. */
  answers: number[];
  timers: TimerFire[];
  manual: boolean;
  hops: number;
  /** Attempts claimed so far; the current attempt's number. */
  attempt: number;
  /** Consecutive failed attempts. */
  failures: number;
  /** Claims of the current attempt (a repeated claim reissues the token). */
  claims: number;
  claim: string | null;
  worker: string | null;
  agent: string | null;
  job: JobSnapshot | null;
  /** The session the agent reported for this run, if any. */
  session: string | null;
  /** The session the next attempt continues (answers, timers, retries), for its agent only (null agent: none does). */
  sessionHint: { session: string; agent: string | null } | null;
  link: string | null;
  createdAt: number;
  claimedAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  readyAt: number;
  seenAt: number | null;
  /** Set when the run ends, equal to its end state; null while it goes on. */
  outcome: RunOutcome | null;
  summary: string | null;
  error: string | null;
  usage: UsageSum | null;
  /** Attempts whose usage was reported (for "missing usage" counts). */
  usageReported: { tokens: boolean; cost: boolean };
  /** Result receipts by attempt: body hash and the answer given, for replays. */
  results: Record<string, { hash: string; response: ResultAnswer }>;
  /** The "will retry" card of this run, closed when the run ends or stops. */
  retryCard: number | null;
  /** The owner asked to stop it. */
  stopRequested: boolean;
  mergedInto: number | null;
}

/**
 * A `lanes` row (key: `laneKey`): the lane's queued run (new work merges into it), its active run, and the last run
 * that ended in it (for `resume`).
 */
export interface LaneRow {
  rule: string;
  lane: string;
  queued: number | null;
  active: number | null;
  last: { run: number; session: string | null; agent: string | null; stopped: boolean } | null;
}

/** A `groups` row (key: the group name): the runs that hold a place in the group now. */
export interface GroupRow { name: string; active: number[] }

/** A card's delivery to one channel: the message `ref`, the version it shows, failures of a first send (ms times). */
export interface Delivery {
  ref: string | null;
  version: number;
  failures: number;
  firstFailedAt: number | null;
  gaveUp: boolean;
  error: string | null;
}

/**
 * What a hub alert card is about (`CardRow.system`); its key, when it has one, is built in system-cards.ts.
 * `failing`/`gaveUp`: a run's attempts keep failing, `uncertain`: a run's lease ran out, `ruleGone`: a queued run's rule
 * was removed, `offline`: a worker went silent, `rulesError`: rules.json is broken or missing, `hops`: an event went past
 * the hop limit, `budget`: a rule went past its budget (an ask), `deadlineFailing`: a deadline's handler keeps failing,
 * `cronMissed`: a late wake-up skipped cron times (an fyi notice), `tooFast`: a rule's events started more runs in a
 * minute than `ruleStartsPerWindowMax` and it was paused (an ask; issue 26), `toolApproval`: an agent's tool call waits
 * for the owner's approval (issue 16), `worker`: a worker's own notice about a run (`Result.workerNotice`).
 */
export type SystemKind =
  | "failing" | "gaveUp" | "uncertain" | "ruleGone" | "offline" | "rulesError" | "hops" | "budget" | "deadlineFailing"
  | "cronMissed" | "tooFast" | "toolApproval" | "worker";

/** A `cards` row (key: the card id): an ask or notice, where it belongs, its answer and deliveries. Times in ms. */
export interface CardRow {
  id: number;
  version: number;
  kind: "ask" | "notice";
  fyi: boolean;
  state: CardState;
  title: string;
  text: string;
  options: string[];
  recommend: number | null;
  about: string | null;
  key: string | null;
  rule: string | null;
  lane: string;
  group: string | null;
  source: string | null;
  run: number | null;
  /** Hub alerts: what the card is about, null for cards of receipts and of POST /v1/tell. */
  system: SystemKind | null;
  channels: string[];
  at: number;
  choice: number | null;
  answer: string | null;
  by: string | null;
  answeredAt: number | null;
  result: string | null;
  closedAt: number | null;
  deliveries: Record<string, Delivery>;
  /** A `toolApproval` card: the tool call it asks about (issue 16). Absent on every other card. */
  toolCall?: number;
  /** A card the hub wrote: its title, text and options as message ids and params (issue 27 #2; `CardTexts`). */
  texts?: CardTexts;
  /** The card template a receipt or tell named (`<plugin>/<template>`; issue 18). Absent on every other card. */
  template?: string;
}

/** An `outbox` row (key: `outboxKey`): card `card` is to be offered to `channel` from `nextAt` (ms) on. */
export interface OutboxRow { channel: string; card: number; nextAt: number }

/**
 * The kinds of deadline of the due table, each with what its `ref` names: `retry` a waiting run's id (its wait
 * ends), `lease` a claimed run's id (its lease runs out), `later` a timer key (timers table), `offline` a worker name,
 * `fyiExpire` an fyi card's id (its delivery window closes), `cron` a cron rule's name, `pause` a paused rule's name
 * (its `until` comes), `toolWait` a tool call's id (the agent stops waiting for its approval), `toolTask` a parked
 * async call's id (its callback's deadline), `toolLost` an allowed call's id (its outcome is given up on: worker lost).
 */
export type DueKind = "retry" | "lease" | "later" | "offline" | "fyiExpire" | "cron" | "pause" | "toolWait" | "toolTask" | "toolLost";

/**
 * One deadline of the due table (key `<kind>:<ref>`): when it comes due (ms), what kind it is and what it names.
 * `failing` is set while its handler keeps failing (protocol.md 失败时会怎样): `at` is then the next try, `dueAt`
 * the time it first came due (what the handler gets), `failures` the failed tries in a row, `error` the last error.
 */
export interface DueRow { at: number; kind: DueKind; ref: string; failing?: { dueAt: number; failures: number; error: string } }
/** A `timers` row (key: `timerKey`): a `later` timer of a lane, when it comes due (ms), the run that set it and its depth. */
export interface TimerRow { rule: string; lane: string; key: string; at: number; about: string | null; run: number | null; hops: number }
/** A pause of a rule (protocol.md 暂停、恢复、立即运行). Times in ms. */
export interface PauseRow { by: string; reason: string | null; since: number; until: number | null }
/** The runs a rule's events started in the window that began at `since` (ms; key: the rule's name; src/kernel/rate.ts). */
export interface RuleStartsRow { rule: string; since: number; count: number }
/**
 * A cron rule's schedule. `skippedAt` is the last skipped time and `skippedCount` how many were skipped one after
 * another up to it with no time run between (a pause, or one outage; counted up to `cronSkippedCountMax`); absent
 * in rows written before the count was kept.
 */
export interface CronRow { rule: string; expr: string; tz: string; next: number | null; skippedAt: number | null; skippedCount?: number; lastAt: number | null }
/** A `workers` row (key: the worker name): when it was last seen (ms) and its open "offline" card, if any. */
export interface WorkerRow { name: string; seenAt: number; offlineCard: number | null }
/** A `channels` row (key: the channel name): when it last polled (ms), written at most once a minute. */
export interface ChannelSeenRow { name: string; seenAt: number }
/** A rules version with its body: what a `rules` fact writes to `meta` "rules", and what `View.rules` gives. */
export interface RulesMeta { version: number; hash: string; rules: Rules; at: number }
/**
 * The projection's row of the current rules version (`meta` "rules"). The fact that loaded the version holds its
 * body; the projection keeps where (`seq`) instead of a second copy, and `View.rules` reads it once per version.
 */
export interface RulesRow { version: number; hash: string; at: number; seq: number }
/** `meta` "rulesVersion": the current rules version, read before the (larger) rules row. */
export interface RulesVersionRow { version: number }
/**
 * `meta` "ids": the last id given to an event, a run, a card and a tool call (ids are never reused); `call` is absent
 * until the first tool call.
 */
export interface Counters { event: number; run: number; card: number; call?: number }
/** `meta` "totals": running totals for GET /v1/state, kept as decisions go (never recounted from history). */
export interface Totals { events: number; unrouted: number; runs: number; cards: number; openCards: number }

/**
 * One `usage` row (key: the bucket's start, epoch ms): what GET /v1/state sums for "today" and "7 days" without
 * reading the runs of those days (DESIGN.md: aggregates kept as facts are applied). A run counts once it has ended,
 * unless it was merged into another or cancelled before any attempt; tokens are input + output; cost is kept in whole
 * nano-USD so that sums do not depend on the order runs were added in (a rebuild adds them in another order).
 */
export interface UsageBucket { rounds: number; tokens: number; costNanos: number; missingTokens: number; missingCost: number }
/**
 * A `usage` row: the bucket's sums, and the same sums per rule (the run's `rule`), sorted by rule name so that the row
 * does not depend on the order runs were added in; a rule whose runs all left the bucket leaves the list.
 */
export interface UsageRow extends UsageBucket { rules: (UsageBucket & { rule: string })[] }

/** A rule's reported usage in one budget period (`spend` key `<rule>\0<period start>`); cost in USD, times in ms. */
export interface SpendRow { rule: string; start: number; end: number; cost: number; tokens: number; rounds: number }
/** The owner let a rule go past its budget until `until` (ms): no budget pause before then (`spend` key `ok\0<rule>`). */
export interface BudgetOk { rule: string; until: number }

/** A `cardkeys` row: the card that holds a dedup key (an open card, or an fyi notice already sent). */
export interface CardKeyRow { card: number }
/** A `sessions` row: the run that uses an agent session now (one that goes on: it is dropped when the run ends or waits). */
export interface SessionRow { run: number }

/**
 * Why a tool call got its decision (issue 16): the `ApprovalVerdict` reasons of rules.ts, or `notOffered` (the run's
 * rule does not offer the tool), `answer` (the owner answered its card), `grant` (an answer given after the agent
 * stopped waiting, spent by this call), `refused` (the caller's tool host refused it before asking: unknown plugin or
 * tool, arguments failing its schema, not offered to the run), `credentialAnyUrl` (an HTTP tool sending a credential to
 * a URL the agent chooses, which no approvals entry allows: issue 26 #11), `tooManyAsking` (the run holds
 * `toolApprovalsOpenPerRunMax` approval cards open already: issue 26 round 6).
 */
export type ToolCallWhy =
  | "hidden" | "tool" | "plugin" | "default" | "session" | "owner" | "firstUse" | "notOffered" | "answer" | "grant" | "refused" | "credentialAnyUrl" | "tooManyAsking";

/**
 * What the hub itself knows of a tool plugin (issue 26): whether it is built in, its tools' kind, whether its manifest
 * hides its tools from models, and for a declarative HTTP tool where it sends (its declared hosts, the `authRef` it
 * sends, whether the agent chooses its whole URL; null for a tool plugin) — from the hub's own registry of tool plugins
 * and its declarative catalog, looked up by the shell before an agent's call is decided (the caller's word on these is
 * not taken).
 */
export interface KnownPlugin {
  builtIn: boolean;
  kind: ToolCallKind;
  disableModelInvocation: boolean;
  http: NonNullable<ToolCallBody["http"]> | null;
}

/**
 * A `calls` row (key: the call id): one tool call the hub decided, and how it ended. The arguments are kept as their
 * digest; only a call the owner is asked about also keeps them whole (`args`: issue 26 #5). Times in ms.
 */
export interface ToolCallRow {
  id: number;
  /** The agent run that called, null for the owner's own call. */
  run: number | null;
  caller: "agent" | "owner";
  /** Who called: the run's agent id, or the owner key's name. */
  by: string;
  plugin: string;
  /** `<plugin>.<tool>`. */
  tool: string;
  sessionKey: string;
  argsDigest: string;
  /** The arguments' canonical JSON whole, kept only on a call the owner is asked about (issue 26 #5), when sent. */
  args?: string;
  /** The plugin's files (`<16 hex> <path>`), kept only on a first use or kind's prompt (an "always" trusts them: issue 26 #4). */
  files?: string[];
  manifestDigest: string;
  builtIn: boolean;
  /** The tool's kind as its caller's tool host knew it (`http`: a declarative plugin's HTTP tool); absent in rows from before it was kept. */
  kind?: string;
  decision: "allow" | "deny" | "prompt";
  why: ToolCallWhy;
  /** The entry of rules.json's `approvals` that decided, by its place; null when none did. */
  approval: number | null;
  /** Why it was denied, or the hub ended it `error` (worker lost), in the hub's language (`reasonText`: as data). */
  reason: string | null; reasonText?: WireText;
  /** The approval card of a `prompt`. */
  card: number | null;
  /** Until when the agent's call is held for the owner's answer. */
  waitUntil: number | null;
  status: ToolCallStatus;
  durationMs: number | null;
  at: number;
  endedAt: number | null;
  /** When a parked call's callback is too late. */
  deadline: number | null;
  /** The outcome its caller reported (`parked` for an async task), null until then. */
  reported: "ok" | "error" | "timeout" | "oom" | "parked" | null;
  /** A parked call's end as its callback gave it (`result` within `toolResultMaxBytes`), or its timeout. */
  result: { status: "ok"; result: unknown } | { status: "error"; error: { code: number | string; message: string } } | { status: "timeout" } | null;
}

/** A `trust` row (key: `trustKey`): the owner answered "always allow" for this plugin at this manifest digest. */
export interface TrustRow {
  plugin: string; digest: string; card: number; by: string; at: number;
  /** The plugin's files at that digest (`<16 hex> <path>`) when its caller listed them (issue 26 #4), to say what changed later. */
  files?: string[];
}

/**
 * A `grants` row (key: `grantKey`): the owner's answer to a call's card that came after the agent stopped waiting;
 * the next call of the same tool in the same session, at the same manifest digest and with the same arguments (their
 * digest: issue 26 #5), gets it once (within `toolGrantValidMs`).
 */
export interface GrantRow { sessionKey: string; tool: string; digest: string; argsDigest: string; decision: "allow" | "deny"; card: number; at: number }

/** A `tasks` row (key: HMAC of a task id, or of a callback key with `task` the HMAC of its task id): its call. */
export interface TaskRow { call: number; task?: string }

/** `meta` "toolCalls": parked calls not yet ended (bounded by `toolParkedCallsMax`). */
export interface ToolCallsMeta { parked: number }

/** A `toolstats` row (key: `toolStatsKey`): ended tool calls of one plugin in one quarter hour, by status. */
export interface ToolStatsRow { bucket: number; plugin: string; counts: Partial<Record<ToolCallStatus, number>> }

/**
 * An `artifacts` row (key: `artifactKey`): a file a run's workflow wrote and its worker sent (issue 18 "Workflows run"),
 * its text (at most `artifactMaxBytes` of UTF-8), its size in bytes and when it was sent (ms). Sending the same file
 * again replaces it.
 */
export interface ArtifactRow { run: number; file: string; text: string; bytes: number; at: number }

/** Who is calling: the key kind and name, from the SHA-256 of the bearer key (never the key itself). */
export interface Caller { kind: KeyKind; name: string }

/** What the shell hands to `decide` for one accepted request or timer. */
export type Input =
  /** `intents`: the declarative intents loaded now (issue 18), for rules whose `when` names one; absent: none. */
  /**
   * An event a source posted; `viaCall`: the agent's tool call whose request posted it (the request's
   * `agent-autoloop-tool-call` header: a declarative HTTP tool posting to its own hub), which makes it one hop deeper
   * than that call's run (issue 26).
   */
  | { kind: "event"; keyHash: string | null; event: EventIn; intents?: IntentTable; viaCall?: number }
  | { kind: "work"; keyHash: string | null; claim: string; running: number[]; capacity: number }
  | { kind: "started"; run: number; token: string; session: string | null; link: string | null }
  /** `intents`: as for `event`, for the receipt's `events` (issue 18). */
  | { kind: "result"; run: number; token: string; result: Result; hash: string; intents?: IntentTable }
  | { kind: "cardsNext"; keyHash: string | null }
  | { kind: "delivered"; keyHash: string | null; card: number; version: number; ref: string }
  | { kind: "failed"; keyHash: string | null; card: number; version: number; error: string | null }
  | { kind: "answer"; keyHash: string | null; card: number; choice: number | null; text: string | null; by: string | null; ref: string | null }
  | { kind: "resolve"; keyHash: string | null; card: number; reason: string | null }
  | { kind: "cancel"; keyHash: string | null; run: number }
  | { kind: "rules"; rules: Rules; hash: string }
  | { kind: "rulesError"; error: string; missing: boolean }
  | { kind: "keyNew"; keyHash: string | null; local: boolean; keyKind: KeyKind; name: string; newHash: string }
  | { kind: "keyRemove"; keyHash: string | null; local: boolean; keyKind: KeyKind; name: string }
  | { kind: "pause"; keyHash: string | null; rule: string; reason: string | null; until: string | null }
  | { kind: "resume"; keyHash: string | null; rule: string }
  | { kind: "runNow"; keyHash: string | null; rule: string; subject: string | null; reason: string | null }
  | { kind: "linkAnswer"; card: number; token: string; choice: number | null; text: string | null }
  | { kind: "eventsIn"; source: string; events: EventIn[]; intents?: IntentTable; viaCall?: number }
  | { kind: "tell"; keyHash: string | null; body: TellBody }
  /**
   * An event of declarative plugin `plugin` (issue 18: a panel's action or form in the console), for the owner: the
   * shell found the plugin and checked the event against its panel; it is taken as from source `plugin:<plugin>`; `intents` as for `event`.
   */
  | { kind: "pluginEvent"; keyHash: string | null; plugin: string; event: EventIn; intents?: IntentTable }
  /**
   * A tool call to decide (issue 16): an agent run's (`run` + its token) or the owner's (`keyHash`). An agent's call
   * comes with what the hub's own registry knows of its plugin (`plugin`; null: unknown to the hub; issue 26).
   */
  | { kind: "toolCall"; run: number; token: string; body: ToolCallBody; plugin: KnownPlugin | null }
  | { kind: "ownerToolCall"; keyHash: string | null; body: ToolCallBody }
  /** A file a run's workflow wrote (issue 18), sent with the run's token: `file` and `text` checked by the shell. */
  | { kind: "artifact"; run: number; token: string; file: string; text: string }
  /** How an allowed call ended: reported with the run's token, or by the owner. */
  | { kind: "toolOutcome"; run: number; token: string; call: number; body: ToolOutcomeBody }
  | { kind: "ownerToolOutcome"; keyHash: string | null; call: number; body: ToolOutcomeBody }
  /** An async plugin's callback: its task id, its `callback_url`'s key (null: legacy path), never kept; what it sent. */
  | { kind: "toolCallback"; task: string; key: string | null; body: PluginCallbackBody }
  /** The timer: the deadline `due` (a due table key) came due; the shell sends one per due row, so each is decided alone. */
  | { kind: "tick"; due: string }
  /** The shell: the `tick` of `due` failed (answered 500) with `error`; it is tried again later. */
  | { kind: "dueFailed"; due: string; error: string };

/** The answer the hub gives itself for a rules load: whether the rules changed, and their version when read. */
export interface RulesAnswer { ok: true; changed: boolean; version?: number }
/** The answer to the timer's inputs (`tick`, `dueFailed`): whether the deadline was there to handle. */
export interface TickAnswer { ok: true; changed?: boolean }

/**
 * What the kernel answers each input with when it accepts it (200): the endpoint's published answer
 * (src/protocol/responses.ts) for an input an endpoint sends, the shell's own shapes for the rest. `decide`'s step
 * table is typed by it, and a route may send an input only to an endpoint whose answer its answer is
 * (src/host/routes/endpoint.ts `decide`): no cast between the kernel and the wire (issue 27 #4).
 */
export interface Answers {
  event: EventAccepted;
  eventsIn: EventsAccepted;
  work: WorkAnswer;
  started: Ok;
  result: ResultAnswer;
  cardsNext: CardNext;
  delivered: Ok;
  failed: Ok;
  answer: AnswerAnswer;
  linkAnswer: AnswerAnswer;
  resolve: Changed;
  cancel: CancelAnswer;
  rules: RulesAnswer;
  rulesError: RulesAnswer;
  /** The route adds the new key itself (it is never a fact). */
  keyNew: Ok;
  keyRemove: Changed;
  pause: PauseAnswer;
  resume: ResumeAnswer;
  runNow: RunNowAnswer;
  tell: TellAnswer;
  pluginEvent: EventAccepted;
  toolCall: ToolCallDecision;
  ownerToolCall: ToolCallDecision;
  artifact: ArtifactStored;
  toolOutcome: Ok;
  ownerToolOutcome: Ok;
  toolCallback: Ok;
  tick: TickAnswer;
  dueFailed: TickAnswer;
}

/** The kind of an input. */
export type InputKind = Input["kind"];
/** The input of kind `K`. */
export type InputOf<K extends InputKind> = Extract<Input, { kind: K }>;

/**
 * The answer to one input: an HTTP status and JSON body (the kind's answer with 200, else the error body), the facts
 * to commit, and whether to hold a long poll (`park`: it found nothing; decide again when something changes).
 */
export type Decision<B = Answers[InputKind]> = Reply<B> & {
  facts: FactDraft[];
  /** Long polls that may now get something: workers (runs), channels by name (cards). */
  wake?: { workers: boolean; channels: string[] };
};

/** What the shell gives `decide` besides the view: the master key and the hub's language. */
export interface Env {
  /** The master key (random bytes of master.key); run tokens and card links derive from it. */
  master: Buffer;
  /** The hub's language, of its refusals and cards (never of events, jobs or other data: i18n `fixedText`). */
  lang: "zh" | "en";
  /** Base URL of card link pages (`publicUrl`, else the local listen address), or null. */
  publicUrl: string | null;
}

export type { Usage };
