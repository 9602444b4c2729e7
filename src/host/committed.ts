/**
 * What the hub resolves a caller's input with once its group commit is done (protocol.md 日志与确定性: the answer is
 * given only after COMMIT): the kernel's decision, typed by the input kind's answer (`Answers`), the facts it wrote,
 * and for a 500 why it failed. A leaf of the shell, so that the hub and its held polls (held-poll.ts) share it.
 */
import type { Answers, Decision, Fact, InputKind } from "../kernel/types.js";

/** One input's decision as committed (typed by its kind's answer, `Answers`): the facts it wrote, and for a 500 why. */
export type Committed<B = Answers[InputKind]> = Decision<B> & { committed: Fact[]; failure?: Error };
