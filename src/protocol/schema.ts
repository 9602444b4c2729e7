/**
 * The shapes of what callers send over the /v1 protocol (request bodies and query strings), as JSON Schema 2020-12
 * built with TypeBox; what the hub answers is in responses.ts. `protocol/schema.json` is generated from both
 * (`npm run schema`, definitions.ts) and the hub validates its own inputs with these, so the published schema and
 * the hub cannot drift (protocol.md 一致性和复现).
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import * as L from "../kernel/limits.js";
import { line, linePattern, patternText, text, textPattern } from "./shapes.js";
import { TranscriptBody, TranscriptEntry, TranscriptQuery } from "./schema-transcript.js";
export * from "./schema-transcript.js";
import { callbackKeyPattern, idPattern, qualifiedToolPattern, sessionLinkPattern, sha256HexPattern, taskIdPattern, toolPluginTypes } from "./patterns.js";
import { assetNameMaxChars, assetNamePattern, cardTemplateRefPattern, formFieldsMax, formValueMaxChars } from "./plugin-limits.js";
import { runGroups, runStates, type RunGroup, type RunState } from "../kernel/states.js";

export { linePattern, textPattern } from "./shapes.js";
/** Non-negative safe integer. */
const count = () => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
/** A finite non-negative number (JSON's 1e400 parses to Infinity and is refused). */
const amount = () => Type.Number({ minimum: 0, maximum: Number.MAX_VALUE });

/** 来源: `subject` is an identifier (letters, digits and `# . _ : / @ -`), since it reaches prompts. */
export const subjectPattern = "^[A-Za-z0-9#._:/@-]*$";
/** 来源: `link` is a plain ASCII http(s) URL with no spaces, since it reaches prompts. */
export const linkPattern = "^https?://[!-~]+$";
/** 来源: `type` is a short dotted name. */
export const typePattern = "^[A-Za-z0-9][A-Za-z0-9._:/-]*$";

/** An event as a source posts it to POST /v1/events (protocol.md 来源). */
export const EventIn = Type.Object(
  {
    id: line(L.eventIdMaxCodepoints, 1),
    type: Type.String({ minLength: 1, maxLength: L.eventTypeMaxChars, pattern: typePattern, ...patternText("pattern.eventType") }),
    subject: Type.Optional(Type.String({ maxLength: L.eventSubjectMaxCodepoints, pattern: subjectPattern, ...patternText("pattern.subject") })),
    summary: Type.Optional(line(L.eventSummaryMaxCodepoints)),
    detail: Type.Optional(text(L.eventDetailMaxCodepoints)),
    link: Type.Optional(Type.String({ maxLength: L.eventLinkMaxCodepoints, pattern: linkPattern, ...patternText("pattern.plainUrl") })),
    hops: Type.Optional(count()),
  },
  { additionalProperties: false },
);
export type EventIn = Static<typeof EventIn>;

/** A receipt event: like a source event but without `hops` (the hub sets it). */
export const ReceiptEvent = Type.Object(
  {
    id: EventIn.properties.id,
    type: EventIn.properties.type,
    subject: EventIn.properties.subject,
    summary: EventIn.properties.summary,
    detail: EventIn.properties.detail,
    link: EventIn.properties.link,
  },
  { additionalProperties: false },
);

/**
 * A card template of a declarative plugin (issue 18), `<plugin id>/<template>`: the console and the card's link page
 * show the card with it whole; the card's title, text and options stay what every other channel shows.
 */
const cardTemplate = () => Type.String({ maxLength: 129, pattern: cardTemplateRefPattern, ...patternText("pattern.cardTemplate") });

/** An ask card requested by a receipt or by POST /v1/tell. */
export const Ask = Type.Object(
  {
    title: line(L.cardTitleMaxCodepoints, 1),
    text: Type.Optional(text(L.cardTextMaxCodepoints)),
    options: Type.Array(line(L.cardOptionMaxCodepoints, 1), { minItems: 1, maxItems: L.cardOptionsMax }),
    recommend: Type.Optional(count()),
    about: Type.Optional(text(L.cardAboutMaxCodepoints)),
    key: Type.Optional(line(L.cardKeyMaxCodepoints, 1)),
    card: Type.Optional(cardTemplate()),
  },
  { additionalProperties: false },
);
export type Ask = Static<typeof Ask>;

export const Notice = Type.Object(
  {
    title: line(L.cardTitleMaxCodepoints, 1),
    text: Type.Optional(text(L.cardTextMaxCodepoints)),
    key: Type.Optional(line(L.cardKeyMaxCodepoints, 1)),
    fyi: Type.Optional(Type.Boolean()),
    card: Type.Optional(cardTemplate()),
  },
  { additionalProperties: false },
);
export type Notice = Static<typeof Notice>;

export const Resolve = Type.Object(
  { card: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), reason: Type.Optional(text(L.reasonMaxCodepoints)) },
  { additionalProperties: false },
);

/** `later.at` is a real ISO date-time with `Z` or an offset (checked again for real dates in code). */
export const isoWithZonePattern = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$";
export const Later = Type.Union([
  Type.Object(
    {
      key: line(L.cardKeyMaxCodepoints, 1),
      at: Type.String({ pattern: isoWithZonePattern, ...patternText("pattern.isoTime") }),
      about: Type.Optional(text(L.cardAboutMaxCodepoints)),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { key: line(L.cardKeyMaxCodepoints, 1), cancel: Type.Literal(true) },
    { additionalProperties: false },
  ),
]);

/** Usage of one attempt: token counts and USD cost, each optional, finite and non-negative. */
export const Usage = Type.Object(
  {
    input: Type.Optional(amount()),
    output: Type.Optional(amount()),
    cached: Type.Optional(amount()),
    cost: Type.Optional(amount()),
  },
  { additionalProperties: false },
);
export type Usage = Static<typeof Usage>;

const items = <T extends TSchema>(t: T) => Type.Optional(Type.Array(t, { maxItems: L.receiptItemsMax }));

/** The receipt part of a result: what the agent asks the hub to do, applied in one transaction. */
export const ReceiptFields = {
  ask: items(Ask),
  notice: items(Notice),
  resolve: items(Resolve),
  later: items(Later),
  events: items(ReceiptEvent),
};

/** POST /v1/runs/:id/result (protocol.md Agent：领活、干活、交回执). */
export const Result = Type.Object(
  {
    outcome: Type.Unsafe<"done" | "nothing" | "failed" | "cancelled">({ type: "string", enum: ["done", "nothing", "failed", "cancelled"] }),
    summary: Type.Optional(text(L.runSummaryMaxCodepoints)),
    error: Type.Optional(text(L.runErrorMaxCodepoints)),
    session: Type.Optional(Type.Union([line(L.sessionMaxCodepoints), Type.Null()])),
    usage: Type.Optional(Usage),
    ...ReceiptFields,
    /**
     * The worker's own notices about the run, never the agent's (what its checks found after the run: files moved
     * aside, a receipt voided): the hub's cards (`system: "worker"`), made whatever the outcome and the rule's `tell`,
     * and no receipt resolves them (issue 26 round 23, F23-2).
     */
    workerNotice: items(Notice),
  },
  { additionalProperties: false },
);
export type Result = Static<typeof Result>;

/** The receipt alone, as an agent writes it in its ```agent-autoloop block. */
export const Receipt = Type.Object(ReceiptFields, { additionalProperties: false });
export type Receipt = Static<typeof Receipt>;

export const Started = Type.Object(
  {
    session: Type.Optional(Type.Union([line(L.sessionMaxCodepoints), Type.Null()])),
    link: Type.Optional(Type.Union([Type.String({ maxLength: L.eventLinkMaxCodepoints, pattern: sessionLinkPattern, ...patternText("pattern.sessionLink") }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type Started = Static<typeof Started>;

export const Delivered = Type.Object(
  { version: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), ref: line(L.deliveryRefMaxCodepoints, 1) },
  { additionalProperties: false },
);
export type Delivered = Static<typeof Delivered>;
export const Failed = Type.Object(
  { version: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), error: Type.Optional(text(L.deliveryErrorMaxCodepoints)) },
  { additionalProperties: false },
);
export type Failed = Static<typeof Failed>;
/** POST /v1/cards/:id/answer: from a channel ({choice, by, ref}) or the owner ({choice} or {text}). */
export const Answer = Type.Object(
  {
    choice: Type.Optional(count()),
    text: Type.Optional(text(L.answerTextMaxCodepoints, 1)),
    by: Type.Optional(line(L.answerByMaxCodepoints, 1)),
    ref: Type.Optional(line(L.answerRefMaxCodepoints, 1)),
  },
  { additionalProperties: false },
);
export type Answer = Static<typeof Answer>;
/** POST /v1/rules/:name/pause (protocol.md 暂停、恢复、立即运行). */
export const PauseBody = Type.Object(
  {
    reason: Type.Optional(Type.Union([text(L.reasonMaxCodepoints), Type.Null()])),
    until: Type.Optional(Type.Union([Type.String({ pattern: isoWithZonePattern, ...patternText("pattern.isoTime") }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type PauseBody = Static<typeof PauseBody>;
export const ResumeBody = Type.Object({}, { additionalProperties: false });
export type ResumeBody = Static<typeof ResumeBody>;
export const RunNowBody = Type.Object(
  { subject: EventIn.properties.subject, reason: Type.Optional(text(L.eventDetailMaxCodepoints)) },
  { additionalProperties: false },
);
export type RunNowBody = Static<typeof RunNowBody>;
/**
 * POST /v1/plugins/:id/settings/:key (issue 18): a declarative plugin's setting, given as text and checked against
 * the setting's type by the hub (a number, `true`/`false`, one of a select's options, one line); null removes it.
 */
export const PluginSettingBody = Type.Object(
  { value: Type.Union([Type.String({ maxLength: 4096 }), Type.Null()]) },
  { additionalProperties: false },
);
export type PluginSettingBody = Static<typeof PluginSettingBody>;
/**
 * POST /v1/plugins/:id/events (issue 18): the owner pressed an `actions` button or submitted a `form` of a declarative
 * plugin's panel (`panel`) or card template (`card`) — exactly one of each pair. The hub checks it against the asset and
 * posts the event `action.<action>` or `form.<form>` from source `plugin:<id>`; `id` makes a retry the same event.
 */
export const PluginEventBody = Type.Object(
  {
    id: Type.Optional(line(L.eventIdMaxCodepoints, 1)),
    panel: Type.Optional(Type.String({ minLength: 1, maxLength: assetNameMaxChars, pattern: assetNamePattern, ...patternText("pattern.assetName") })),
    card: Type.Optional(Type.String({ minLength: 1, maxLength: assetNameMaxChars, pattern: assetNamePattern, ...patternText("pattern.assetName") })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: assetNameMaxChars, pattern: assetNamePattern, ...patternText("pattern.assetName") })),
    form: Type.Optional(Type.String({ minLength: 1, maxLength: assetNameMaxChars, pattern: assetNamePattern, ...patternText("pattern.assetName") })),
    values: Type.Optional(Type.Record(Type.String(), Type.Union([text(formValueMaxChars), Type.Number(), Type.Boolean()]), { maxProperties: formFieldsMax })),
  },
  { additionalProperties: false },
);
export type PluginEventBody = Static<typeof PluginEventBody>;
/** POST /v1/tell: `key` + `text` (an fyi notice, sent once per key) or `ask` (tasks with `cwd`). */
export const TellBody = Type.Object(
  {
    task: Type.Optional(line(100, 1)),
    key: Type.Optional(line(L.cardKeyMaxCodepoints, 1)),
    title: Type.Optional(line(L.cardTitleMaxCodepoints, 1)),
    text: Type.Optional(text(L.cardTextMaxCodepoints, 1)),
    ask: Type.Optional(Ask),
  },
  { additionalProperties: false },
);
export type TellBody = Static<typeof TellBody>;
export const ResolveCard = Type.Object({ reason: Type.Optional(text(L.reasonMaxCodepoints)) }, { additionalProperties: false });
export type ResolveCard = Static<typeof ResolveCard>;
export const CancelRun = Type.Object({}, { additionalProperties: false });
export type CancelRun = Static<typeof CancelRun>;

/** A number in a query string (`wait` in seconds, `capacity`): up to 6 digits; empty or absent takes the default. */
const queryCount = () => Type.String({ pattern: "^\\d{0,6}$", ...patternText("pattern.wholeNumber", { digits: 6 }) });

/**
 * `running` of GET /v1/work: the worker's runs in hand, as run ids separated by commas (empty items are skipped), at
 * most `runningRunsMax`. Each id ends at a comma or the end, so the pattern never backtracks over a long list.
 */
export const runningPattern = `^,*(?:[1-9]\\d{0,14}(?:,+|$)){0,${L.runningRunsMax}}$`;

/** GET /v1/work?claim=&wait=&running=&capacity=&seq= (protocol.md Agent：领活). Other query parameters are ignored. */
export const WorkQuery = Type.Object({
  claim: Type.String({ minLength: 1, maxLength: L.claimIdMaxCodepoints, pattern: linePattern, ...patternText("pattern.noControl") }),
  wait: Type.Optional(queryCount()),
  capacity: Type.Optional(queryCount()),
  running: Type.Optional(Type.String({ pattern: runningPattern, ...patternText("pattern.runIds", { limit: L.runningRunsMax }) })),
  /**
   * The poll's place among the worker's polls (increasing: its clock's ms, one more when two fall in one): a poll of a
   * claim that arrives after a later one of the same claim decides nothing (a stale request that reached the hub late
   * would claim again and replace the token the later one handed out).
   */
  seq: Type.Optional(Type.String({ pattern: "^\\d{1,15}$", ...patternText("pattern.wholeNumber", { digits: 15 }) })),
});
export type WorkQuery = Static<typeof WorkQuery>;

/** GET /v1/cards/next?wait= (protocol.md 通道). */
export const CardsNextQuery = Type.Object({ wait: Type.Optional(queryCount()) });
export type CardsNextQuery = Static<typeof CardsNextQuery>;

/**
 * GET /v1/state?before=&rule=&state=&worker=&cards= (protocol.md 本人): the page of runs older than this run id; `rule`,
 * `state` and `worker` keep only the runs of that rule, in that state, claimed by that worker (empty: any); `cards`
 * lists only the newest that many open and answered cards (issue 30: the console's first load; empty: all).
 */
export const StateQuery = Type.Object({
  cards: Type.Optional(queryCount()),
  before: Type.Optional(Type.String({ pattern: idPattern, ...patternText("pattern.runId") })),
  rule: Type.Optional(line(L.stateFilterMaxCodepoints)),
  state: Type.Optional(Type.Unsafe<RunState | "">({ type: "string", enum: [...runStates, ""], description: "a run's state, or empty" })),
  worker: Type.Optional(line(L.stateFilterMaxCodepoints)),
});
export type StateQuery = Static<typeof StateQuery>;

/** A time a search or the events' page is bounded by: an ISO date-time with Z or an offset. */
const timeBound = () => Type.Optional(Type.String({ pattern: isoWithZonePattern, ...patternText("pattern.isoTime") }));

/**
 * GET /v1/events (issue 30): one page of events, newest first, older than `before`; only those whose text has `q`
 * (the search index), from `source`, taken or skipped by `rule`, at or after `from` and before `to`, and by `routing`:
 * `unrouted` (no rule matched), `skipped` (a matching rule was paused), `routed` (a rule took it); empty means any.
 */
export const EventsQuery = Type.Object({
  before: Type.Optional(Type.String({ pattern: idPattern, ...patternText("pattern.eventId") })),
  q: Type.Optional(line(L.searchQueryMaxCodepoints)),
  source: Type.Optional(line(L.stateFilterMaxCodepoints)),
  rule: Type.Optional(line(L.stateFilterMaxCodepoints)),
  routing: Type.Optional(Type.Unsafe<"unrouted" | "skipped" | "routed" | "">({ type: "string", enum: ["unrouted", "skipped", "routed", ""], description: "which events by their routing, or empty" })),
  from: timeBound(),
  to: timeBound(),
});
export type EventsQuery = Static<typeof EventsQuery>;

/**
 * GET /v1/search (issue 30): events, runs and cards whose text has `q` (subject, summary, titles, errors; the search
 * index), newest first; narrowed to `rule`, to times at or after `from` and before `to`, and for runs to a `group` of
 * states (`runGroups`) and a `worker` (a group or a worker leaves out events and cards, which have neither).
 */
export const SearchQuery = Type.Object({
  q: Type.Optional(line(L.searchQueryMaxCodepoints)),
  group: Type.Optional(Type.Unsafe<RunGroup | "">({ type: "string", enum: [...runGroups, ""], description: "a group of run states, or empty" })),
  rule: Type.Optional(line(L.stateFilterMaxCodepoints)),
  worker: Type.Optional(line(L.stateFilterMaxCodepoints)),
  from: timeBound(),
  to: timeBound(),
});
export type SearchQuery = Static<typeof SearchQuery>;

/** GET /v1/stream?after= (protocol.md 日志与确定性): facts after this sequence number; `Last-Event-ID` wins over it. */
export const StreamQuery = Type.Object({ after: Type.Optional(Type.String({ pattern: "^\\d{1,15}$", ...patternText("pattern.factSeq") })) });
export type StreamQuery = Static<typeof StreamQuery>;

export { toolPluginTypes, type ToolPluginType } from "./patterns.js";
/** The kinds of tools a call may be of (a tool plugin's `plugin_type`, or `http`: issues 16, 18). */
export const toolCallKinds = [...toolPluginTypes, "http"] as const;
export type ToolCallKind = (typeof toolCallKinds)[number];

/**
 * POST /v1/runs/:id/tools/calls (the run's token) and POST /v1/tools/calls (owner): a tool call to decide before it
 * runs (issue 16). The caller — the worker's tool bridge, or the owner's `plugins invoke` — knows the plugin (its tool
 * host found it) and sends what the hub decides by: the tool, a digest of the arguments, a bounded preview for an
 * approval card, the length of the arguments' canonical JSON and that JSON whole when it is short enough (issue 26 #5:
 * the hub checks it against the digest, keeps it only with an approval card, and binds the owner's answer to the
 * digest), the digest of the plugin's files (its folder: manifest and code; the wire name is kept) and their list (trust is keyed by it), whether the plugin is
 * built in, whether its manifest hides the tool from models (`disable_model_invocation`), and the tool's kind (a tool
 * plugin's `plugin_type`, or `http` for a declarative plugin's HTTP tool, which asks first when no approvals entry
 * names it: issue 18). A call its tool host already refused (unknown plugin or tool, arguments failing the tool's JSON
 * Schema, a tool not offered to the run) comes with `refused` — its code and reason — so that it is audited too
 * (recorded `denied`, never run); it needs none of the plugin's facts, which an unknown plugin has none of. Without
 * `refused`, `manifestDigest`, `builtIn`, `disableModelInvocation` and `kind` are required (the kernel refuses the
 * call naming the first one missing). Of an agent's call the hub decides `builtIn`, `kind`,
 * `disableModelInvocation` and an HTTP tool's `http` by its own registry, not by these fields (issue 26;
 * src/kernel/tool-calls.ts `decidedBy`).
 */
export const ToolCallBody = Type.Object(
  {
    tool: Type.String({ maxLength: L.toolPluginNameMaxChars + 1 + L.toolNameMaxChars, pattern: qualifiedToolPattern, ...patternText("pattern.qualifiedTool") }),
    argsDigest: Type.String({ pattern: "^sha256:[0-9a-f]{64}$", ...patternText("pattern.argsDigest") }),
    preview: text(L.toolCallPreviewMaxCodepoints),
    argsLength: Type.Optional(Type.Integer({ minimum: 2, maximum: Number.MAX_SAFE_INTEGER, description: "the length of the arguments' canonical JSON in code points" })),
    // The arguments' canonical JSON whole (its sha256 is argsDigest), when short enough to keep; canonical JSON
    // escapes every control character, so it is one clean line (a pattern's description is its refusal's text).
    arguments: Type.Optional(line(L.toolCallArgumentsMaxCodepoints)),
    files: Type.Optional(Type.Array(
      Type.String({ maxLength: 17 + L.toolCallFilePathMaxChars, pattern: "^([0-9a-f]{16}|folder {10}|link:[0-9a-f]{11}) [^\\u0000-\\u001f\\u007f]+$", ...patternText("pattern.toolCallFile") }),
      { maxItems: L.toolCallFilesMax, description: "the plugin's files (issue 26 #4): an approval card says which changed since the owner trusted it" },
    )),
    http: Type.Optional(Type.Object(
      {
        network: Type.Array(line(262, 1), { maxItems: 100 }),
        authRef: Type.Union([line(200, 1), Type.Null()]),
        anyUrl: Type.Boolean(),
      },
      { additionalProperties: false, description: "an HTTP tool's declared hosts, the authRef sent with each request, whether the agent chooses the whole URL (issue 26 #11)" },
    )),
    binds: Type.Optional(Type.Array(Type.Object(
      {
        source: line(L.toolCallBindPathMaxChars, 1),
        container: line(L.toolCallBindPathMaxChars, 1),
        readOnly: Type.Boolean(),
        broad: Type.Optional(Type.Unsafe<"writable" | "topLevel" | "inHome">({ type: "string", enum: ["writable", "topLevel", "inHome"] })),
      },
      { additionalProperties: false },
    ), { maxItems: L.toolCallBindsMax, description: "the plugin sandbox's binds as they really are (issue 26 #3), shown on an approval card" })),
    sandboxed: Type.Optional(Type.Boolean({ description: "whether the tool host runs the tool plugin in its sandbox ([sandbox] in its manifest; issue 26 round 25), said on an approval card" })),
    sandboxNetwork: Type.Optional(Type.Unsafe<"bridge" | "host">({ type: "string", enum: ["bridge", "host"], description: "the plugin sandbox's network when it is not `none` (the host's network is shared: the internet and this computer's loopback services; issue 26 round 30, F30b-2), said on an approval card" })),
    env: Type.Optional(Type.Array(
      Type.String({ minLength: 1, maxLength: 128, pattern: "^[A-Za-z_][A-Za-z0-9_]*$", ...patternText("pattern.identifier") }),
      { maxItems: L.toolCallBindsMax, description: "names of the hub's environment the plugin is given (issue 26 round 10), shown on an approval card" },
    )),
    manifestDigest: Type.Optional(Type.String({ pattern: sha256HexPattern, ...patternText("pattern.manifestDigest") })),
    builtIn: Type.Optional(Type.Boolean({ description: "required unless refused" })),
    disableModelInvocation: Type.Optional(Type.Boolean({ description: "required unless refused" })),
    kind: Type.Optional(Type.Unsafe<ToolCallKind>({ type: "string", enum: [...toolCallKinds], description: "required unless refused" })),
    refused: Type.Optional(Type.Object(
      {
        code: Type.String({ minLength: 1, maxLength: L.toolErrorCodeMaxChars, pattern: "^[A-Za-z0-9._:-]+$", ...patternText("pattern.errorCode") }),
        reason: text(L.toolErrorMessageMaxCodepoints, 1),
      },
      { additionalProperties: false, description: "the caller's tool host refused the call before asking the hub: recorded as denied, nothing decided" },
    )),
  },
  { additionalProperties: false },
);
export type ToolCallBody = Static<typeof ToolCallBody>;

/** What became of a call the hub allowed (issue 16); `denied` and `awaiting_approval` the hub records itself. */
export const toolOutcomeStatuses = ["ok", "error", "timeout", "oom", "parked"] as const;
export type ToolOutcomeStatus = (typeof toolOutcomeStatuses)[number];

/**
 * POST /v1/runs/:id/tools/calls/:call/outcome and POST /v1/tools/calls/:call/outcome: how an allowed call ended, and
 * how long it took (ms). `parked`: an async plugin answered `{task_id}`; `taskId` is then required (the hub keeps only
 * its hash) and `timeoutMs` is the call's timeout, after which its callback is too late (default: 30 s).
 */
export const ToolOutcomeBody = Type.Object(
  {
    status: Type.Unsafe<ToolOutcomeStatus>({ type: "string", enum: [...toolOutcomeStatuses] }),
    durationMs: Type.Integer({ minimum: 0, maximum: L.toolCallTimeoutMsMax * 2 }),
    taskId: Type.Optional(Type.String({ pattern: taskIdPattern, ...patternText("pattern.taskId", { min: L.toolTaskIdMinChars, max: L.toolTaskIdMaxChars }) })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: L.toolCallTimeoutMsMax })),
    callbackKey: Type.Optional(Type.String({ pattern: callbackKeyPattern, ...patternText("pattern.callbackKey", { chars: L.toolCallbackKeyChars }) })),
  },
  { additionalProperties: false },
);
export type ToolOutcomeBody = Static<typeof ToolOutcomeBody>;

/**
 * POST /v1/plugins/callback/:task (and the legacy /plugin-callback/:task): an async plugin completes its task (spec
 * tool-plugins.md §5). Fields other than these are ignored (plugins brought unchanged may send more). `result` may be
 * any JSON value (absent: null), at most `toolResultMaxBytes` and `toolResultDepthMax` deep. The error's `message`
 * holds no control characters but line breaks and tabs, as every text of the protocol; longer than
 * `toolErrorMessageMaxCodepoints`, it is cut.
 */
export const PluginCallbackBody = Type.Object({
  status: Type.Unsafe<"success" | "error">({ type: "string", enum: ["success", "error"] }),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.Object({
    // One type list rather than a union, so a wrong type is refused as "must be integer,string".
    code: Type.Unsafe<number | string>({
      type: ["integer", "string"], minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, maxLength: L.toolErrorCodeMaxChars,
      pattern: linePattern, ...patternText("pattern.toolErrorCode", { limit: L.toolErrorCodeMaxChars }),
    }),
    message: Type.String({ pattern: textPattern, ...patternText("pattern.noControlText") }),
  })),
});
export type PluginCallbackBody = Static<typeof PluginCallbackBody>;

/**
 * POST /v1/tools/invoke (owner; issue 34 #5): the owner's own call, run by the hub's tool host — `plugins invoke` while
 * a hub runs. `tool` is `<plugin>.<tool>` as given (the tool host refuses a name that is not one, recorded as any
 * refusal), `args` the arguments, any JSON value (the tool host checks them: an object, its depth, the tool's JSON
 * Schema). The whole body is at most `requestBodyMaxBytes`.
 */
export const ToolInvokeBody = Type.Object(
  {
    tool: line(L.toolPluginNameMaxChars + 1 + L.toolNameMaxChars, 1),
    args: Type.Unknown({ description: "the call's arguments: any JSON value, checked by the tool host" }),
  },
  { additionalProperties: false },
);
export type ToolInvokeBody = Static<typeof ToolInvokeBody>;

/** GET …/tools/calls/:call?waitSeconds= and GET …/tools/calls/:call/result?waitSeconds=: how long to wait (seconds). */
export const ToolWaitQuery = Type.Object({ waitSeconds: Type.Optional(queryCount()) });
export type ToolWaitQuery = Static<typeof ToolWaitQuery>;

/**
 * PUT /v1/runs/:id/artifacts/:file (issue 18): the text of a file a run's workflow wrote, at most `artifactMaxBytes`
 * of UTF-8 (checked after the schema, in bytes, so the refusal says bytes; the request's own limit bounds it before). Any text but lone
 * surrogates, which UTF-8 cannot hold: an artifact is served as plain text, never run.
 */
export const ArtifactBody = Type.Object(
  { text: Type.String({ pattern: textPattern, ...patternText("pattern.artifactText", { limit: L.artifactMaxBytes }) }) },
  { additionalProperties: false },
);
export type ArtifactBody = Static<typeof ArtifactBody>;

/** The request definitions: bodies and query strings, by name. */
export const requestDefinitions = {
  EventIn, ReceiptEvent, Ask, Notice, Resolve, Later, Usage, Result, Receipt, Started, Delivered, Failed, Answer,
  ResolveCard, CancelRun, TellBody, PauseBody, ResumeBody, RunNowBody, WorkQuery, CardsNextQuery, StateQuery, EventsQuery, SearchQuery, StreamQuery,
  ToolCallBody, ToolOutcomeBody, PluginCallbackBody, ToolWaitQuery, ToolInvokeBody, PluginSettingBody, PluginEventBody, ArtifactBody,
  TranscriptEntry, TranscriptBody, TranscriptQuery,
};
