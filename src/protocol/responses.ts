/**
 * The shapes of what the hub answers over the /v1 protocol, as JSON Schema 2020-12 built with TypeBox: one definition
 * per answer, published in `protocol/schema.json` next to the requests (definitions.ts), checked by the client on
 * every answer it reads (response-check.ts) and by the tests on every answer the hub sends.
 *
 * Objects are open (no `additionalProperties: false`): a later hub may add fields, and clients ignore the ones they
 * do not know (protocol.md 版本与兼容). Times are ISO 8601 strings in UTC unless a field says otherwise.
 */
import { Type, type Static } from "@sinclair/typebox";
import { cardStates, keyKinds, runStates, type KeyKind } from "../kernel/states.js";
import { bool, id, int, iso, oneOf, orNull, ref, str } from "./shapes.js";
import { TextParam, TextRef } from "./responses-texts.js";
import { Job, Rejected, ResultAnswer, Transcript, TranscriptStored, WorkAnswer } from "./responses-runs.js";
import { ConsoleEnded, ConsoleLink, ConsoleSessions } from "./responses-console.js";
import { ToolCallDecision, ToolCallResult, ToolError, ToolInvokeEnd, ToolInvokeLine, ToolView, Tools } from "./responses-tools.js";
import { toolPluginTypes } from "./patterns.js";

/** The answers of an agent's endpoints live in responses-runs.ts, the console's in responses-console.ts; re-exported here with the rest. */
export * from "./responses-runs.js";
export * from "./responses-console.js";
export * from "./responses-tools.js";
export * from "./responses-texts.js";

/** A run's state (protocol.md Agent, 失败时会怎样). */
export const RunState = oneOf(runStates);
/** A card's state (protocol.md 通道). */
export const CardState = oneOf(cardStates);
/** A key's kind (protocol.md 谁能做什么). */
export const KeyKindName = oneOf<KeyKind>(keyKinds);


/**
 * The texts of a card the hub wrote (a budget card, a run's failures, …) as message ids and params, for each client to
 * show in its own language; `title`, `text` and `options` are their words in the hub's language (issue 27 #2).
 */
export const CardTexts = Type.Object({
  title: Type.Optional(TextRef), text: Type.Optional(TextRef), options: Type.Optional(Type.Array(TextRef)),
}, { description: "the texts of a card the hub wrote, as message ids and params" });

/**
 * Every refusal, 4xx or 5xx: what was wrong, naming the field (DESIGN.md 接口); `error` in the hub's language, `code`
 * and `params` the catalog message it is (issue 27 #2), for a client to word in its own language. A hub before issue 27
 * sends `error` only.
 */
export const ErrorBody = Type.Object({
  error: str(),
  code: Type.Optional(Type.String({ description: "the message id of `error` in the hub's catalog (src/i18n/messages.ts)" })),
  params: Type.Optional(Type.Record(Type.String(), ref(TextParam), { description: "the values of the message's placeholders" })),
}, { description: "every 4xx and 5xx answer" });
export type ErrorBody = Static<typeof ErrorBody>;

/** GET /v1/health (no key). */
export const Health = Type.Object(
  { ok: Type.Literal(true), version: Type.String({ description: "the release tag of the running hub, or `unreleased`" }) },
  { description: "GET /v1/health" },
);
export type Health = Static<typeof Health>;

/** The plain acknowledgement: POST /v1/runs/:id/started, /v1/cards/:id/delivered, /v1/cards/:id/failed. */
export const Ok = Type.Object({ ok: Type.Literal(true) }, { description: "POST /v1/runs/:id/started, /v1/cards/:id/delivered and /failed" });
export type Ok = Static<typeof Ok>;

/** An acknowledgement that says whether anything changed: POST /v1/cards/:id/resolve, DELETE /v1/keys/:kind/:name. */
export const Changed = Type.Object({ ok: Type.Literal(true), changed: bool() }, { description: "POST /v1/cards/:id/resolve, DELETE /v1/keys/:kind/:name" });
export type Changed = Static<typeof Changed>;

/** What became of one posted event (protocol.md 来源): its id in the hub, and the rules that took it or were paused. */
export const EventAccepted = Type.Object(
  { event: id(), duplicate: bool(), routed: Type.Array(str()), paused: Type.Array(str()) },
  { $id: "EventAccepted", description: "POST /v1/events" },
);
export type EventAccepted = Static<typeof EventAccepted>;

/** POST /v1/in/:source: what became of each event the source's adapter made of a webhook delivery. */
export const EventsAccepted = Type.Object({ events: Type.Array(ref(EventAccepted)) }, { description: "POST /v1/in/:source" });
export type EventsAccepted = Static<typeof EventsAccepted>;

/** POST /v1/tell: the card told, and whether it was already there (the same key told before, or an equal ask open). */
export const TellAnswer = Type.Object({ card: id(), duplicate: bool() }, { description: "POST /v1/tell" });
export type TellAnswer = Static<typeof TellAnswer>;

/** The card a channel receives (protocol.md 通道). `ref` is this channel's message id; `link` its link page. */
export const Card = Type.Object(
  {
    id: id(),
    version: id(),
    ref: orNull(str()),
    kind: oneOf(["ask", "notice"] as const),
    fyi: bool(),
    state: CardState,
    title: str(),
    text: str(),
    options: Type.Array(str()),
    recommend: orNull(int()),
    choice: orNull(int()),
    answer: orNull(str()),
    by: orNull(str()),
    result: orNull(str()),
    link: orNull(str()),
    rule: orNull(str()),
    at: iso(),
    /** A declarative plugin's card template the card is shown with (`<plugin>/<template>`); absent without one. */
    template: Type.Optional(str()),
    /** A card the hub wrote: its texts as message ids and params (issue 27 #2); absent on other cards. */
    texts: Type.Optional(CardTexts),
    /**
     * The card template as its plugin holds it when this version is handed to a channel (GET /v1/cards/next only):
     * its title and its UI nodes (protocol/declarative/ui-node.schema.json). Absent when the card has no template or
     * the template is not loaded.
     */
    templateUi: Type.Optional(Type.Object({ title: orNull(str()), data: Type.Array(Type.Unknown()) })),
  },
  { $id: "Card", description: "the card of GET /v1/cards/next" },
);
export type Card = Static<typeof Card>;

/** One channel's delivery of a card, as the owner sees it. */
export const Delivery = Type.Object({ ref: orNull(str()), version: int(), failures: int(), gaveUp: bool(), error: orNull(str()) });

/** The card as the owner sees it (protocol.md 本人): the channel's view plus its lane, `about`, run and deliveries. */
export const OwnerCard = Type.Object(
  {
    ...Card.properties,
    lane: str(),
    about: orNull(str()),
    run: orNull(id()),
    channels: Type.Array(str()),
    deliveries: Type.Record(str(), Delivery),
    /** A tool call's approval card: the call's arguments whole, as canonical JSON, when they were kept (issue 26 #5). */
    toolArguments: Type.Optional(str()),
  },
  { $id: "OwnerCard", description: "cards of GET /v1/state, and the card of a card answer" },
);
export type OwnerCard = Static<typeof OwnerCard>;

/** GET /v1/cards/next: the card to send or update now, or null when the wait ended with none. */
export const CardNext = Type.Object({ card: orNull(ref(Card)) }, { description: "GET /v1/cards/next" });
export type CardNext = Static<typeof CardNext>;

/** POST /v1/cards/:id/answer: the card after the answer. */
export const AnswerAnswer = Type.Object({ ok: Type.Literal(true), card: ref(OwnerCard) }, { description: "POST /v1/cards/:id/answer" });
export type AnswerAnswer = Static<typeof AnswerAnswer>;

/** GET /v1/cards/:id: one card as the owner sees it, whatever its state (the console's card page; issue 30). */
export const CardAnswer = Type.Object({ card: ref(OwnerCard) }, { description: "GET /v1/cards/:id" });
export type CardAnswer = Static<typeof CardAnswer>;

/** POST /v1/runs/:id/cancel: whether it changed anything, and the run's state after. */
export const CancelAnswer = Type.Object({ ok: Type.Literal(true), changed: bool(), state: RunState }, { description: "POST /v1/runs/:id/cancel" });
export type CancelAnswer = Static<typeof CancelAnswer>;

/** A rule's pause in effect (protocol.md 暂停、恢复、立即运行): who paused it, why, since when and until when. */
export const Pause = Type.Object({ by: str(), reason: orNull(str()), since: iso(), until: orNull(iso()) }, { $id: "Pause" });
export type Pause = Static<typeof Pause>;

/** POST /v1/rules/:name/pause. */
export const PauseAnswer = Type.Object({ changed: bool(), rule: str(), paused: ref(Pause) }, { description: "POST /v1/rules/:name/pause" });
export type PauseAnswer = Static<typeof PauseAnswer>;

/** POST /v1/rules/:name/resume. */
export const ResumeAnswer = Type.Object({ changed: bool(), rule: str() }, { description: "POST /v1/rules/:name/resume" });
export type ResumeAnswer = Static<typeof ResumeAnswer>;

/** POST /v1/rules/:name/run: the `run.manual` event recorded and the run it queued (or joined). */
export const RunNowAnswer = Type.Object({ event: id(), run: id() }, { description: "POST /v1/rules/:name/run" });
export type RunNowAnswer = Static<typeof RunNowAnswer>;

/** POST /v1/keys/:kind/:name: the new key, shown this once (the hub keeps only its hash). */
export const KeyNew = Type.Object({ ok: Type.Literal(true), kind: KeyKindName, name: str(), key: str() }, { description: "POST /v1/keys/:kind/:name" });
export type KeyNew = Static<typeof KeyNew>;

/** Token counts and USD cost summed over a run's attempts, each only when some attempt reported it. */
export const UsageTotals = Type.Object({
  input: Type.Optional(Type.Number({ minimum: 0 })),
  output: Type.Optional(Type.Number({ minimum: 0 })),
  cached: Type.Optional(Type.Number({ minimum: 0 })),
  cost: Type.Optional(Type.Number({ minimum: 0 })),
}, { $id: "UsageTotals" });
export type UsageTotals = Static<typeof UsageTotals>;

/** A run as GET /v1/state lists it. `events` is how many events it took; `answers` the cards whose answers it continues. */
export const RunView = Type.Object({
  id: id(), rule: str(), lane: str(), state: RunState, attempt: int(), failures: int(), manual: bool(),
  worker: orNull(str()), agent: orNull(str()), session: orNull(str()), link: orNull(str()), events: int(), answers: Type.Array(id()),
  createdAt: iso(), claimedAt: orNull(iso()), startedAt: orNull(iso()), endedAt: orNull(iso()), readyAt: iso(),
  outcome: orNull(str()), summary: orNull(str()), error: orNull(str()), usage: orNull(ref(UsageTotals)), mergedInto: orNull(id()),
  /**
   * A queued run's wait (issue 30; kernel/runs.ts waitsFor): `rule` gone, rule `paused`, behind `run` in its `lane`,
   * its `group` full at `limit`, or for `worker` to ask for work. Absent on runs that are not queued.
   */
  waits: Type.Optional(Type.Object({
    why: Type.Union([Type.Literal("rule"), Type.Literal("paused"), Type.Literal("lane"), Type.Literal("group"), Type.Literal("worker")]),
    run: Type.Optional(id()), limit: Type.Optional(int()), worker: Type.Optional(str()),
  })),
}, { $id: "RunView" });
export type RunView = Static<typeof RunView>;

/** An event as GET /v1/state lists it: `eventId` is the source's own id, `paused` the paused rules that did not take it. */
export const EventView = Type.Object({
  id: id(), source: str(), eventId: str(), type: str(), subject: orNull(str()), summary: orNull(str()), at: iso(),
  routed: Type.Array(str()), paused: Type.Array(str()),
}, { $id: "EventView" });
export type EventView = Static<typeof EventView>;

/**
 * An event as GET /v1/events and GET /v1/search list it (issue 30): its view, whether no rule matched it (`unrouted`),
 * whether the hub made it itself (`internal`: an answer, a timer, a manual run, a cron time, a receipt), and its runs
 * (the newest `eventRunsListed`, with `runCount` all of them).
 */
export const EventEntry = Type.Object({
  ...EventView.properties,
  unrouted: bool(),
  internal: orNull(str()),
  runs: Type.Array(Type.Object({ id: id(), rule: str(), state: RunState })),
  runCount: int(),
  /** An event the hub made: its summary as a message id and params (issue 27 #2), worded in the reader's language. */
  texts: Type.Optional(Type.Object({ summary: TextRef })),
}, { $id: "EventEntry" });
export type EventEntry = Static<typeof EventEntry>;

/** GET /v1/events: one page of events, newest first; `nextBefore` the `before` of the next page, null at the oldest. */
export const EventsPage = Type.Object({ events: Type.Array(ref(EventEntry)), nextBefore: orNull(id()) }, { description: "GET /v1/events" });
export type EventsPage = Static<typeof EventsPage>;

/**
 * GET /v1/search: the events, runs and cards found, newest first, at most `searchHitsMax` of each; `more` says which
 * kind had more than that.
 */
export const SearchAnswer = Type.Object({
  events: Type.Array(ref(EventEntry)),
  runs: Type.Array(ref(RunView)),
  cards: Type.Array(ref(OwnerCard)),
  more: Type.Object({ events: bool(), runs: bool(), cards: bool() }),
}, { description: "GET /v1/search" });
export type SearchAnswer = Static<typeof SearchAnswer>;

/** Usage of the runs that ended in a window: runs, tokens, USD cost, and how many runs did not report each. */
export const Spending = Type.Object({ rounds: int(), tokens: Type.Number({ minimum: 0 }), cost: Type.Number({ minimum: 0 }), missingTokens: int(), missingCost: int() }, { $id: "Spending" });
export type Spending = Static<typeof Spending>;

/** One rule of rules.json with what it has in hand now (protocol.md 本人, 暂停、恢复、立即运行). */
export const RuleLine = Type.Object({
  name: str(), source: str(), types: Type.Array(str()), cron: orNull(str()), to: str(), group: str(), parallel: orNull(int()),
  resume: bool(), tell: str(),
  queued: int(), running: int(),
  paused: orNull(ref(Pause)),
  /** The last cron time skipped, and how many were skipped one after another up to it. */
  skippedAt: orNull(iso()), skippedCount: int(),
  nextAt: orNull(iso()),
  /** The usage of the rule's runs that ended today (the rules' zone) and in the last 7 days, as `spending` sums it. */
  spending: Type.Object({ today: ref(Spending), week: ref(Spending) }),
  /**
   * The rule's budget from rules.json (null: none): its limits (null: not limited), and what the current period (day
   * or week from Monday, the rules' zone; ends at `periodEnd`) counted against it: only the runs that reported usage.
   */
  budget: orNull(Type.Object({
    cost: orNull(Type.Number({ minimum: 0 })), tokens: orNull(Type.Number({ minimum: 0 })), per: oneOf(["day", "week"] as const),
    spentCost: Type.Number({ minimum: 0 }), spentTokens: Type.Number({ minimum: 0 }), periodEnd: iso(),
  })),
}, { $id: "RuleLine" });
export type RuleLine = Static<typeof RuleLine>;

/** GET /v1/state (protocol.md 本人): the whole picture in one snapshot, taken at log sequence number `seq`. */
export const State = Type.Object({
  seq: int(),
  now: iso(),
  timezone: str(),
  rulesVersion: int(),
  totals: Type.Object({ events: int(), unrouted: int(), runs: int(), cards: int(), openCards: int() }),
  /** The open and answered cards, oldest first: all of them, or the newest `cards` of the query (issue 30). */
  cards: Type.Array(ref(OwnerCard)),
  /** How many open and answered cards `cards` left out (0 without `cards` in the query). */
  moreCards: int(),
  recentCards: Type.Array(ref(OwnerCard)),
  agents: Type.Array(Type.Object({ id: str(), name: str(), use: str(), worker: str(), access: str(), online: bool() })),
  /**
   * `slots`: the runs the worker can hold, as its last `GET /v1/work` since the hub started said (its `capacity`, the
   * runs it can take now, plus its `running`); `free`: that `capacity`. Both null until it asks for work again.
   */
  workers: Type.Array(Type.Object({ name: str(), seenAt: iso(), online: bool(), slots: orNull(int()), free: orNull(int()) })),
  /** `waiting`: the open cards the channel has not taken yet, of every open card (not only those `cards` lists). */
  channels: Type.Array(Type.Object({ id: str(), name: str(), links: bool(), seenAt: orNull(iso()), waiting: int() })),
  sources: Type.Array(Type.Object({ id: str(), name: str(), adapter: orNull(str()) })),
  lines: Type.Array(ref(RuleLine)),
  elsewhere: Type.Array(Type.Object({
    name: str(), source: orNull(str()), to: orNull(str()), cron: orNull(str()), where: orNull(str()), cwd: orNull(str()),
    skill: orNull(str()), prompt: orNull(str()),
  })),
  runs: Type.Array(ref(RunView)),
  active: Type.Array(ref(RunView)),
  nextBefore: orNull(id()),
  hasMore: bool(),
  /** When the oldest run this page looked through was made (filtered pages look through runs that do not match too). */
  reachedAt: orNull(iso()),
  unrouted: Type.Array(ref(EventView)),
  skipped: Type.Array(ref(EventView)),
  spending: Type.Object({ today: ref(Spending), week: ref(Spending) }),
  timers: Type.Array(Type.Object({ rule: str(), lane: str(), key: str(), about: orNull(str()), at: iso() })),
  pauses: Type.Array(Type.Object({ name: str(), ...Pause.properties })),
  /** Tool calls that ended today (the rules' time zone), by plugin and status (issue 16). */
  toolCalls: Type.Array(Type.Object({ plugin: str(), status: str(), count: int() })),
}, { description: "GET /v1/state" });
export type State = Static<typeof State>;

/**
 * One fact of the log, as the stream and `why` show it (protocol.md 日志与确定性): version, sequence number, time,
 * kind and the projection's row changes `[table, key, row]` (row null for a delete). Key hashes show as "…".
 */
export const Fact = Type.Object({
  v: Type.Literal(1),
  seq: id(),
  at: iso(),
  kind: str(),
  /** `[table, key, row]`, row null for a delete (JSON Schema 2020-12 `prefixItems`). */
  changes: Type.Array(Type.Unsafe<[string, string | number, object | null]>({
    type: "array", minItems: 3, maxItems: 3, items: false,
    prefixItems: [{ type: "string" }, { type: ["string", "integer"] }, { type: ["object", "null"] }],
  })),
}, { $id: "Fact", description: "the data of each `event: fact` of GET /v1/stream, and the facts of GET /v1/runs/:id/why" });
export type Fact = Static<typeof Fact>;

/** GET /v1/runs/:id/why: the facts about one run, oldest first; the rules row carries only its version and hash. */
/** A file a run's workflow sent (issue 18): its name, size in UTF-8 bytes, and the route that serves it to the owner. */
export const ArtifactView = Type.Object({ file: Type.String(), bytes: Type.Integer({ minimum: 0 }), path: Type.String() });
export type ArtifactView = Static<typeof ArtifactView>;
/** PUT /v1/runs/:id/artifacts/:file: the file kept. */
export const ArtifactStored = Type.Object({ run: id(), file: Type.String(), bytes: Type.Integer({ minimum: 0 }), path: Type.String() }, { description: "PUT /v1/runs/:id/artifacts/:file" });
export type ArtifactStored = Static<typeof ArtifactStored>;
/** GET /v1/runs/:id/artifacts/:file: the file's text as `text/plain; charset=utf-8` (not JSON). */
export const ArtifactText = Type.String({ description: "GET /v1/runs/:id/artifacts/:file: the text, served as text/plain; charset=utf-8 with X-Content-Type-Options: nosniff and Content-Security-Policy: sandbox" });
/** GET /metrics (issue 32): the hub's figures in the Prometheus text format 0.0.4 (not JSON; docs/metrics.md). */
export const MetricsText = Type.String({ description: "GET /metrics: the Prometheus text exposition format 0.0.4, served as text/plain; version=0.0.4; charset=utf-8" });
/**
 * GET /v1/runs/:id/why: the facts about one run (an artifact's row without its text) and the files its workflow sent
 * (`artifacts`, by name; absent from hubs before issue 18's artifacts).
 */
export const Why = Type.Object({ run: id(), facts: Type.Array(ref(Fact)), artifacts: Type.Optional(Type.Array(ArtifactView)) }, { description: "GET /v1/runs/:id/why" });
export type Why = Static<typeof Why>;

/*
 * The rows of the facts as `why` reads them (table `runs`, `cards`, `events`, `timers`, and `meta` key `rules`):
 * only the fields a timeline needs, so that rows written by older hubs, and fields added later, still read.
 */

/** A `runs` row of a fact. */
export const RunFactRow = Type.Object({
  id: id(), state: RunState, attempt: int(), worker: orNull(str()), session: orNull(str()),
  job: orNull(Type.Object({ session: orNull(str()) })), summary: orNull(str()), error: orNull(str()),
  usage: orNull(ref(UsageTotals)), readyAt: int(), answers: Type.Array(id()),
});
export type RunFactRow = Static<typeof RunFactRow>;

/** A `cards` row of a fact. `deliveries` holds each channel's message id once delivered. */
export const CardFactRow = Type.Object({
  id: id(), run: orNull(id()), fyi: bool(), kind: oneOf(["ask", "notice"] as const), title: str(), state: CardState,
  choice: orNull(int()), options: Type.Array(str()), answer: orNull(str()), by: orNull(str()),
  deliveries: Type.Record(str(), Type.Object({ ref: orNull(str()) })),
  texts: Type.Optional(CardTexts),
});
export type CardFactRow = Static<typeof CardFactRow>;

/** An `events` row of a fact: `sid` is the source's own id. */
export const EventFactRow = Type.Object({
  source: str(), sid: str(), type: str(), subject: orNull(str()), summary: orNull(str()),
  /** An event the hub made: its summary as a message id and params (issue 27 #2). */
  texts: Type.Optional(Type.Object({ summary: TextRef })),
});
export type EventFactRow = Static<typeof EventFactRow>;

/** A `timers` row of a fact: a `later` timer of a run, due at `at` (milliseconds since the epoch). */
export const TimerFactRow = Type.Object({ run: orNull(id()), key: str(), at: int() });
export type TimerFactRow = Static<typeof TimerFactRow>;

/** The `meta` row `rules` of a fact: the rules version it loaded. */
export const RulesFactRow = Type.Object({ version: int() });
export type RulesFactRow = Static<typeof RulesFactRow>;

/** A `calls` row of a fact (issue 16): a tool call, its session, where it is, and what goes with that. Times in ms. */
export const ToolCallFactRow = Type.Object({
  id: id(), run: orNull(id()), tool: str(), sessionKey: str(), status: str(), card: orNull(id()), reason: orNull(str()),
  durationMs: orNull(int()), deadline: orNull(int()),
});
export type ToolCallFactRow = Static<typeof ToolCallFactRow>;

/** A `trust` row of a fact (issue 16): the owner trusted a plugin at a manifest digest ("always allow"). */
export const TrustFactRow = Type.Object({ plugin: str(), digest: str(), by: str() });
export type TrustFactRow = Static<typeof TrustFactRow>;

/**
 * A plugin of any kind (issue 18; spec declarative-plugins.md's `/api/plugins`): `declarative` (plugin.json), `tool`
 * (a tool plugin's manifest), or `agent`, `channel`, `source` (code plugins: one entry per entry file). `manifest`
 * always has `id`: a declarative plugin's plugin.json (the registered version while a newer one is refused), a tool
 * plugin's manifest summary, a code plugin's name. `status` is `rejected` while the folder as it is now is refused
 * (`errors` says why, each `<file>#<JSON pointer>: <reason>`), `shadowed` while another folder of its kind and id wins;
 * `origin` is where it was found, `dir` its folder.
 */
export const PluginView = Type.Object({
  kind: oneOf(["declarative", "tool", "agent", "channel", "source"] as const),
  manifest: Type.Unsafe<{ id: string } & Record<string, unknown>>(Type.Object({ id: str() }, { additionalProperties: true })),
  status: oneOf(["loaded", "rejected", "shadowed"] as const),
  errors: Type.Array(str()),
  origin: oneOf(["builtin", "home", "serve"] as const),
  dir: str(),
  /**
   * The common plugin layer's record (issue 27): the digest (sha256 hex) of the version in use, null when none is; the
   * digest of the last version that loaded (in use while the folder is refused), null when none ever did; and, for a
   * `shadowed` folder, the folder that wins over it: of the same kind and id (the later root), or with `kind` a plugin
   * of another kind whose id names the same tools (a tool plugin over a declarative one). The clash is reported.
   */
  digest: Type.Optional(orNull(str())),
  lastGood: Type.Optional(orNull(str())),
  shadowedBy: Type.Optional(orNull(Type.Object({
    dir: str(),
    origin: oneOf(["builtin", "home", "serve"] as const),
    /** Set when the winner is a plugin of another kind whose id names the same tools (a tool plugin over a declarative one). */
    kind: Type.Optional(oneOf(["declarative", "tool", "agent", "channel", "source"] as const)),
  }))),
  /**
   * A loaded declarative plugin's assets that rules name (issue 18), each by the `<plugin>/<name>` a rule writes:
   * its prompts with their text (to copy, or to name in a rule's `promptRef`), its workflows (`workflow`) and intents
   * (`when.intent`). Absent for other plugins.
   */
  prompts: Type.Optional(Type.Array(Type.Object({ ref: str(), text: str() }))),
  workflows: Type.Optional(Type.Array(Type.Object({ ref: str(), title: orNull(str()), steps: Type.Array(str()) }))),
  intents: Type.Optional(Type.Array(Type.Object({ ref: str(), includes_any: Type.Array(str()), slots: Type.Array(str()) }))),
}, { $id: "PluginView" });
export type PluginView = Static<typeof PluginView>;

/** GET /v1/plugins (also `/api/plugins`): every plugin of every kind, declarative first, then tool, agent, channel, source. */
export const Plugins = Type.Array(ref(PluginView), { description: "GET /v1/plugins" });
export type Plugins = Static<typeof Plugins>;

/**
 * POST /v1/plugins/reload (also `/api/plugins/reload`): every kind's folders rescanned (issue 27), and what changed
 * since the hub was last asked (also what its watcher loaded meanwhile) — ids loaded (new), replaced (a new version in
 * use), unloaded (gone) — and the plugins refused now with every error (a refused folder whose previous version was
 * loaded keeps it in use). A tool plugin is named by its manifest's `name`, every other by its folder.
 */
export const PluginsReload = Type.Object({
  loaded: Type.Array(str()),
  replaced: Type.Array(str()),
  unloaded: Type.Array(str()),
  rejected: Type.Array(Type.Object({ id: str(), errors: Type.Array(str()) })),
}, { description: "POST /v1/plugins/reload" });
export type PluginsReload = Static<typeof PluginsReload>;

/**
 * One setting of a declarative plugin as the settings centre shows it (issue 18): its declaration, and its value — for
 * a `secret` never the value (`value` is null), only whether one is set. `effect`: `hot` applies at once, `reload` on
 * the next reload.
 */
export const SettingView = Type.Object({
  key: str(), label: str(), type: oneOf(["string", "secret", "number", "boolean", "select"] as const), effect: oneOf(["hot", "reload"] as const),
  description: orNull(str()), options: orNull(Type.Array(str())),
  default: Type.Union([str(), Type.Number(), bool(), Type.Null()]), value: Type.Union([str(), Type.Number(), bool(), Type.Null()]), set: bool(),
}, { $id: "SettingView" });
export type SettingView = Static<typeof SettingView>;

/** GET /v1/plugins/:id/settings: the settings of declarative plugin `plugin`, in the settings centre's group `plugin:<id>`. */
export const PluginSettings = Type.Object({ plugin: str(), group: str(), settings: Type.Array(ref(SettingView)) }, { description: "GET /v1/plugins/:id/settings" });
export type PluginSettings = Static<typeof PluginSettings>;

/** POST /v1/plugins/:id/settings/:key: the setting after the change (a secret still masked). */
export const PluginSettingAnswer = Type.Object({ plugin: str(), setting: ref(SettingView) }, { description: "POST /v1/plugins/:id/settings/:key" });
export type PluginSettingAnswer = Static<typeof PluginSettingAnswer>;

/**
 * GET /v1/plugins/:id/ui (issue 18): what the console's plugin view renders of declarative plugin `plugin` (`name` its
 * manifest's name) — its panels and its card templates (`name` the file's name), in the order `provides` names them,
 * as the loader checked them against the published vocabulary (protocol/declarative/ui-node.schema.json).
 */
export const PluginUi = Type.Object({
  plugin: str(),
  name: str(),
  panels: Type.Array(Type.Object({ id: str(), title: str(), body: Type.Array(Type.Unknown()) })),
  cards: Type.Array(Type.Object({ name: str(), kind: str(), title: orNull(str()), data: Type.Array(Type.Unknown()) })),
}, { description: "GET /v1/plugins/:id/ui" });
export type PluginUi = Static<typeof PluginUi>;

/** The response definitions, by name. */
export const responseDefinitions = {
  TextParam, ErrorBody, Health, Ok, Changed, EventAccepted, EventsAccepted, TellAnswer, Card, OwnerCard, CardNext, AnswerAnswer, CardAnswer, Job,
  WorkAnswer, Rejected, ResultAnswer, CancelAnswer, Pause, PauseAnswer, ResumeAnswer, RunNowAnswer, KeyNew, UsageTotals,
  RunView, EventView, EventEntry, EventsPage, SearchAnswer, Spending, RuleLine, State, Fact, Why, ArtifactView, ArtifactStored, ArtifactText, RunFactRow, CardFactRow, EventFactRow, TimerFactRow,
  RulesFactRow, ToolView, Tools, ConsoleLink, ConsoleEnded, ConsoleSessions, ToolCallDecision, ToolError, ToolCallResult, ToolInvokeEnd, ToolInvokeLine, ToolCallFactRow, TrustFactRow,
  PluginView, Plugins, PluginsReload, SettingView, PluginSettings, PluginSettingAnswer, PluginUi, MetricsText,
  TranscriptStored, Transcript,
};
/** The name of a response definition. */
export type ResponseName = keyof typeof responseDefinitions;
