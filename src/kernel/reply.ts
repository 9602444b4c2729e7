/**
 * What a kernel step answers (issue 27 #4): a 200 with a body typed to the endpoint's published answer
 * (src/protocol/responses.ts, through `Answers` in types.ts), or a refusal — a 4xx (or the shell's 5xx) with the
 * protocol's error body. Every step builds its answer here, so a refusal's shape is written once.
 */
import type { ErrorBody } from "../protocol/responses.js";
import type { RefusalBody } from "../i18n/messages.js";

/** The statuses of a refusal: the kernel's 4xx, and the shell's 500 (a decision threw) and 503 (busy, closing). */
export type RefusalStatus = 400 | 401 | 403 | 404 | 409 | 410 | 429 | 500 | 503;

/** A refusal: its status and the protocol's error body (protocol.md: every rejected input gets a 4xx JSON answer). */
export interface Refusal { status: RefusalStatus; body: ErrorBody; park?: undefined }

/** An answer: 200 with a body of type `B`; `park` holds a long poll that found nothing. */
export interface Answer<B> { status: 200; body: B; park?: boolean }

/** What a step answers: `B` with 200, or a refusal. */
export type Reply<B> = Answer<B> | Refusal;

/** The answer `body` with 200. */
export const ok = <const B>(body: B): Answer<B> => ({ status: 200, body });

/** The plain acknowledgement `{ ok: true }` (protocol `Ok`). */
export const done = (): Answer<{ ok: true }> => ok({ ok: true });

/**
 * A refusal with `status` and its body: the text (in the hub's language, or the protocol's fixed text) with its
 * message id and params (`Ctx.say`, `fixedRefusal`), so every client words it in its own language (issue 27 #2).
 */
export const refuse = (status: RefusalStatus, body: RefusalBody): Refusal => ({ status, body });

/**
 * Whether `x` is a reply rather than the value a lookup found (a caller, a run, a card, a rule): only a reply has both
 * `status` and `body`.
 */
export const isReply = (x: object): x is Refusal | Answer<unknown> => "status" in x && "body" in x;
