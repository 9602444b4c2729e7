/**
 * What the `acp` bridge (client.ts) prints on its stdout, one JSON object per line, and the plugin (agent.ts) reads.
 * Every line has `acp` naming its kind. Lines are written as they happen, so a run that is cut short still shows how
 * far it got.
 */

/** Token and cost figures of one launch: tokens as the agent counts them, cost in USD. */
export interface LaunchUsage { input?: number; output?: number; cached?: number; cost?: number }

/** A transcript step (issue 30) as the bridge prints it: the SDK's `TranscriptStep`, written out (no import here). */
export interface StepLine { kind: "message" | "tool" | "toolResult"; text?: string; tool?: string; id?: string; input?: string; error?: boolean }

export type BridgeLine =
  /** A step of what the agent did this turn (issue 30), as it happens. */
  | { acp: "step"; step: StepLine }
  /** The agent answered `initialize`. */
  | { acp: "agent"; name: string; version: string; protocolVersion: number; loadSession: boolean; resume: boolean }
  /** The session of this launch exists: created, loaded (history replayed and ignored) or resumed. */
  | { acp: "session"; session: string; via: "new" | "load" | "resume" }
  /** The agent explicitly refused to continue `session` (an error answer, or it can neither load nor resume). */
  | { acp: "refused"; session: string; error: string }
  /** The prompt was sent: from here on a failure stays on this session. */
  | { acp: "prompt" }
  /** A permission request and the answer given (no arguments of the call are logged). */
  | { acp: "permission"; tool: string; kind: string | null; decision: "allow" | "reject"; option: string | null; why: string }
  /** The turn ended: `text` is the last agent text message of this turn (null when there was none). */
  | { acp: "end"; stopReason: string; text: string | null; usage: LaunchUsage }
  /** The launch failed. `busy` when the session is open in another program (`thread_active_writer`). */
  | { acp: "failed"; error: string; busy?: boolean; usage?: LaunchUsage };

/** Writes one line to stdout (synchronously, so it is there even if the process is killed right after). */
export type WriteLine = (line: BridgeLine) => void;
