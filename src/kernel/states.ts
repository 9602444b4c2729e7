/**
 * The protocol's shared enumerations, in one place (issue 27 #6): run states and their named groups, card states, key
 * kinds, tool call statuses. The kernel's rows (types.ts), the protocol's published shapes (src/protocol/responses.ts,
 * schema.ts), the CLI and the owner console (served compiled as /console/kernel/states.js) all read them from here, so
 * a state added here is a state everywhere. A leaf: it imports nothing.
 */

/**
 * Where a run is (protocol.md Agent：领活、干活、交回执); the last three end it. It changes only through `moveRun`
 * (run-state.ts), by its table.
 */
export const runStates = ["queued", "waiting", "claimed", "running", "stopping", "uncertain", "done", "nothing", "cancelled"] as const;
/** One state of a run. */
export type RunState = (typeof runStates)[number];

/** The states that end a run: it is never left again (`RunRow.outcome` is one of them). */
export const runEndStates = ["done", "nothing", "cancelled"] as const satisfies readonly RunState[];
/** How a run ended: its end state (a failed attempt is retried or ends `cancelled`, so `failed` is never an outcome). */
export type RunOutcome = (typeof runEndStates)[number];

/** The states of a run that has not ended (it is "active": the state's `active` list). */
export const runLiveStates = ["queued", "waiting", "claimed", "running", "stopping", "uncertain"] as const satisfies readonly RunState[];
/** A state of a run that has not ended. */
export type RunLiveState = (typeof runLiveStates)[number];

/** The states of a run that waits for a worker to take it: queued, or waiting out a retry. */
export const runPendingStates = ["queued", "waiting"] as const satisfies readonly RunState[];

/**
 * The states of a run in a worker's hands: claimed and not ended. A run's token reports (`started`, a result, a file,
 * a tool call) only in these, and they count against a worker's slots.
 */
export const runHeldStates = ["claimed", "running", "stopping", "uncertain"] as const satisfies readonly RunState[];

/**
 * The groups the owner filters runs by (issue 30): `waiting` for a worker (`runPendingStates`), `running` in a
 * worker's hands (`runHeldStates`), `done` (`runEndStates`), and `failed`: a run whose last attempt failed (it counts
 * failures, or it was cancelled with an error), in whatever state it is now.
 */
export const runGroups = ["failed", "waiting", "running", "done"] as const;
/** A group of `runGroups`. */
export type RunGroup = (typeof runGroups)[number];
/** The states of each group of `runGroups` but `failed`, which is said by a run's failures and error instead. */
export const runGroupStates: Record<Exclude<RunGroup, "failed">, readonly RunState[]> = { waiting: runPendingStates, running: runHeldStates, done: runEndStates };

/** Whether `state` is in the group `states` (a typed `includes` for a state read as a plain string). */
export function stateIn<S extends string>(states: readonly S[], state: string): state is S {
  return (states as readonly string[]).includes(state);
}

/**
 * Where a card is (protocol.md 通道): open (waiting for the owner), answered (an ask whose answer a run has not carried
 * out yet), closed.
 */
export const cardStates = ["open", "answered", "closed"] as const;
/** One state of a card. */
export type CardState = (typeof cardStates)[number];

/**
 * The kinds of key (protocol.md 谁能做什么), in the order the CLI lists them: what a bearer key may do. A `metrics` key
 * reads `GET /metrics` and nothing else (issue 32: a Prometheus scraper holds no key that can read the owner's state).
 */
export const keyKinds = ["source", "worker", "channel", "owner", "metrics"] as const;
/** One kind of key. */
export type KeyKind = (typeof keyKinds)[number];

/**
 * Where a tool call is (issue 16): `asking` (a `prompt`: its approval card is open and the agent's call is held),
 * `awaiting_approval` (the hold ran out: the agent was told to end its turn; the answer wakes the lane), `allowed`
 * (may run; its outcome is not reported yet), `parked` (an async plugin took it as a task: its callback or deadline
 * ends it), and the ends: `ok`, `error`, `timeout`, `oom`, `denied`.
 */
export const toolCallStatuses = ["asking", "awaiting_approval", "allowed", "parked", "ok", "error", "timeout", "oom", "denied"] as const;
/** One status of a tool call. */
export type ToolCallStatus = (typeof toolCallStatuses)[number];
