/**
 * The answers of an agent's endpoints (protocol.md Agent：领活、干活、交回执): the job a worker claims with its context
 * file's data, GET /v1/work's answer, and what POST /v1/runs/:id/result did not apply. Part of the answer shapes
 * (responses.ts re-exports them and publishes them among its definitions).
 */
import { Type, type Static } from "@sinclair/typebox";
import { bool, id, int, iso, orNull, ref, str } from "./shapes.js";
import { TranscriptEntry } from "./schema-transcript.js";

/** An event of the run's context file (protocol.md Job.context): data, never instructions. */
const ContextEvent = Type.Object({
  id: str(), source: str(), sourceName: str(), type: str(), subject: orNull(str()), summary: orNull(str()),
  detail: orNull(str()), link: orNull(str()), receivedAt: iso(),
});
/** An answer this run continues. `text` is the answer in the owner's words, `choice` the option number. */
const ContextAnswer = Type.Object({
  card: id(), title: str(), options: Type.Array(str()), choice: orNull(int()), text: orNull(str()), about: orNull(str()),
  by: orNull(str()), at: orNull(iso()),
});
/** A `later` timer: one that woke this run (`timers`) or one of its lane still waiting (`waiting`). */
const ContextTimer = Type.Object({ key: str(), about: orNull(str()), at: iso() });
/** An open card of the rule's source and group. */
const ContextOpenCard = Type.Object({ card: id(), title: str(), text: str(), at: iso() });
/** An ask of this lane that was decided, with the chosen option's text or the answer. */
const ContextDecided = Type.Object({ card: id(), title: str(), choice: orNull(str()), at: orNull(iso()) });

/** The job a worker claims from GET /v1/work (protocol.md Agent：领活、干活、交回执). */
export const Job = Type.Object({
  run: id(),
  token: str(),
  attempt: id(),
  rule: Type.Object({
    name: str(), cwd: orNull(str()), skill: orNull(str()), prompt: orNull(str()),
    /** Declarative assets the rule names (issue 18), absent when it names none: `<plugin>/<name>` each. */
    promptRef: Type.Optional(str()),
    workflow: Type.Optional(str()),
    intent: Type.Optional(str()),
  }),
  agent: Type.Object({
    id: str(),
    name: str(),
    use: str(),
    model: orNull(str()),
    effort: orNull(str()),
    access: str(),
    command: orNull(Type.Array(str())),
    program: orNull(str()),
    /** Absent in jobs claimed before this field existed: the worker reads that as true. */
    sandbox: Type.Optional(bool()),
    /** Absent in jobs claimed before this field existed: the worker reads that as none. */
    env: Type.Optional(Type.Array(str())),
    /** rules.json `writable` (issue 26): present only when the agent names some. */
    writable: Type.Optional(Type.Array(str())),
    /** rules.json `readable` (issue 26 round 11): present only when the agent names some. */
    readable: Type.Optional(Type.Array(str())),
    /** rules.json `devices` (issue 26): present only when the agent names some. */
    devices: Type.Optional(Type.Array(str())),
    /** rules.json `network` (issue 26 round 33): present only when it is `host`. */
    network: Type.Optional(Type.Literal("host")),
    /** rules.json `loopbackPorts` (issue 26 round 33): present only when the agent names some. */
    loopbackPorts: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 65535 }))),
  }),
  session: orNull(str()),
  askFirst: Type.Array(str()),
  /** The rule's `tools` patterns as written (`<plugin>.<tool>`, `*` any run of characters), `[]` when none (issue 16). */
  tools: Type.Array(str()),
  /**
   * The plugins of `tools` that rules.json's approvals deny whole (issue 26 round 9): the worker neither lists nor
   * offers their tools (listing runs a plugin whose manifest names none: a denied plugin never runs). Absent when none.
   */
  toolsDenied: Type.Optional(Type.Array(str())),
  /** The session key of this run's tool calls: `<rule>:<lane subject>` (issue 16; spec tool-plugins.md §4 `session_key`). */
  sessionKey: str(),
  /**
   * What the hub's declarative plugins hold for the assets the rule names (issue 18), read when the job is handed out;
   * absent when the rule names none. `prompt`: the text of `rule.promptRef` (null: not loaded). `workflow`: the
   * workflow of `rule.workflow` (null: not loaded), the texts of the prompts its steps name, and the slots of the
   * rule's intent (or of the intent the workflow is bound to) to ask before its first step.
   */
  declared: Type.Optional(Type.Object({
    prompt: Type.Optional(orNull(str())),
    workflow: Type.Optional(orNull(Type.Object({
      id: str(),
      steps: Type.Array(Type.Object({ id: str(), type: str() })),
      prompts: Type.Record(Type.String(), str()),
      slots: Type.Array(Type.Object({ name: str(), label: str() })),
    }))),
  })),
  context: Type.Object({
    events: Type.Array(ContextEvent),
    answers: Type.Array(ContextAnswer),
    timers: Type.Array(ContextTimer),
    waiting: Type.Array(ContextTimer),
    open: Type.Array(ContextOpenCard),
    decided: Type.Array(ContextDecided),
  }),
}, { $id: "Job", description: "the job of GET /v1/work" });
export type Job = Static<typeof Job>;

/** GET /v1/work: a job (or null when the wait ended with none) and the runs in hand the owner asked to stop. */
export const WorkAnswer = Type.Object({ job: orNull(ref(Job)), cancel: Type.Array(id()) }, { description: "GET /v1/work" });
export type WorkAnswer = Static<typeof WorkAnswer>;

/** A receipt item the hub did not apply because it lies outside the run's scope, and why. */
export const Rejected = Type.Object({
  card: Type.Optional(int()),
  event: Type.Optional(str()),
  later: Type.Optional(str()),
  reason: str(),
});
export type Rejected = Static<typeof Rejected>;

/** POST /v1/runs/:id/result: the receipt items not applied (a replay of the same body gets the same answer). */
export const ResultAnswer = Type.Object({ rejected: Type.Array(Rejected) }, { description: "POST /v1/runs/:id/result" });
export type ResultAnswer = Static<typeof ResultAnswer>;

/** POST /v1/runs/:id/transcript (issue 30): how many of the entries were kept, and whether the transcript is cut (send no more). */
export const TranscriptStored = Type.Object({ run: id(), kept: Type.Integer({ minimum: 0 }), cut: bool() }, { description: "POST /v1/runs/:id/transcript" });
export type TranscriptStored = Static<typeof TranscriptStored>;
/**
 * GET /v1/runs/:id/transcript (issue 30): one page of a run's transcript from byte offset `after` — its entries
 * (`TranscriptEntry`), `next` the offset to ask from for what follows (equal to `after` when nothing new is there yet),
 * `more` whether more is there already, `cut` whether the transcript reached its limit, `ended` whether the run has
 * ended, and `removed` whether it was removed after its retention (the run's facts stay).
 */
export const Transcript = Type.Object({
  run: id(), entries: Type.Array(TranscriptEntry), next: Type.Integer({ minimum: 0 }), more: bool(), cut: bool(), ended: bool(), removed: bool(),
}, { description: "GET /v1/runs/:id/transcript" });
export type Transcript = Static<typeof Transcript>;
