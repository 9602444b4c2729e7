/**
 * The transcript's request shapes (issue 30): what the worker sends of what an agent did, and the owner's page query.
 * Part of the /v1 request definitions (schema.ts re-exports them).
 */
import { Type, type Static } from "@sinclair/typebox";
import * as L from "../kernel/limits.js";
import { line, patternText, text } from "./shapes.js";

/** The kinds of a transcript entry (issue 30): see `TranscriptEntry`. */
export const transcriptKinds = ["start", "message", "thinking", "tool", "toolResult", "final", "stdout", "stderr", "cut"] as const;
export type TranscriptKind = (typeof transcriptKinds)[number];

/**
 * One step of what an agent did in a run (issue 30), as the worker sends it and the hub keeps it outside the fact log:
 * `at` when the worker saw it (ms since the epoch), the `attempt` and `launch` it belongs to, and its `kind` —
 * `start` a launch began; `message` the agent's words, `thinking` its reasoning; `tool` a call (`tool` its name, `id`
 * the call's id, `input` its arguments as JSON, cut); `toolResult` the call's answer (`id`, `text`, `error` when it
 * failed); `final` the last message; `stdout`/`stderr` a line of a CLI's output that has no richer stream (a
 * `command` agent), or on failure the tail of stderr; `cut` the transcript reached `transcriptMaxBytes` (`text` is
 * empty: clients word it) and later entries were dropped. Texts are neutralised and at most
 * `transcriptTextMaxCodepoints`; the run's secrets never reach it (the worker replaces them).
 */
export const TranscriptEntry = Type.Object({
  // At most the last time a JavaScript Date holds (round 9: a larger one made the run page show "Invalid time value").
  at: Type.Integer({ minimum: 0, maximum: 8_640_000_000_000_000 }),
  attempt: Type.Integer({ minimum: 1 }),
  launch: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  kind: Type.Unsafe<TranscriptKind>({ type: "string", enum: [...transcriptKinds] }),
  text: Type.Optional(text(L.transcriptTextMaxCodepoints)),
  tool: Type.Optional(line(L.transcriptNameMaxCodepoints)),
  id: Type.Optional(line(L.transcriptNameMaxCodepoints)),
  input: Type.Optional(text(L.transcriptTextMaxCodepoints)),
  error: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });
export type TranscriptEntry = Static<typeof TranscriptEntry>;

/** POST /v1/runs/:id/transcript (issue 30): the next entries of the run's transcript, oldest first. */
export const TranscriptBody = Type.Object(
  { entries: Type.Array(TranscriptEntry, { maxItems: L.transcriptBatchMaxEntries }) },
  { additionalProperties: false },
);
export type TranscriptBody = Static<typeof TranscriptBody>;

/** GET /v1/runs/:id/transcript?after=: the byte offset in the transcript to read on from (a page's `next`); empty or absent is 0. */
export const TranscriptQuery = Type.Object({
  after: Type.Optional(Type.String({ pattern: "^\\d{0,9}$", ...patternText("pattern.wholeNumber", { digits: 9 }) })),
});
export type TranscriptQuery = Static<typeof TranscriptQuery>;
