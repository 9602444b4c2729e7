/**
 * The steps of `decide` for the due table (protocol.md 结构与实测, 失败时会怎样): the shell's timer sends one `tick`
 * per deadline that came due, each decided alone, and a `dueFailed` for one whose handler failed, which is tried
 * again after a growing wait (a card names it at the 3rd failure in a row).
 */
import type { Ctx } from "./context.js";
import type { DueRow, TickAnswer } from "./types.js";
import { closeCard, createCard, openAlert } from "./cards.js";
import { leaseExpired, retryDue, timerDue } from "./run-end.js";
import { cronDue, pauseDue } from "./control.js";
import { toolLostDue, toolWaitDue } from "./tool-calls.js";
import { toolTaskDue } from "./tool-tasks.js";
import { deadlineFailuresBeforeCard, deadlineRetryFirstMs, deadlineRetryMaxMs } from "./limits.js";
import { outboxKey } from "./tables.js";
import { systemCardKey } from "./system-cards.js";
import { backoffMs } from "./backoff.js";
import { assert } from "./assert.js";
import { ok, type Reply } from "./reply.js";

/**
 * A timer woke the shell for one deadline of the due table. A deadline that is gone (handled, moved or removed by an
 * earlier input) or not due yet changes nothing. One that succeeds closes the card its earlier failures made.
 */
export function tick(c: Ctx, key: string): Reply<TickAnswer> {
  const row = c.tx.get("due", key);
  if (!row || row.at > c.now) return ok({ ok: true });
  c.tx.del("due", key);
  switch (row.kind) {
    case "retry": retryDue(c, Number(row.ref)); break;
    case "lease": leaseExpired(c, Number(row.ref)); break;
    case "later": timerDue(c, row.ref); break;
    case "offline": workerOffline(c, row.ref); break;
    case "fyiExpire": fyiExpire(c, Number(row.ref)); break;
    case "cron": cronDue(c, row.ref, row.failing?.dueAt ?? row.at); break;
    case "pause": pauseDue(c, row.ref); break;
    case "toolWait": toolWaitDue(c, Number(row.ref)); break;
    case "toolTask": toolTaskDue(c, Number(row.ref)); break;
    case "toolLost": toolLostDue(c, Number(row.ref)); break;
    // A row of a kind this kernel does not know (DueKind): a damaged database.
    default: assert(false, "due-kind-known");
  }
  const card = openAlert(c, systemCardKey.deadlineFailing(key));
  if (card) closeCard(c, card.id, c.msg("result.notNeeded"));
  return ok({ ok: true });
}

/** A deadline as a person reads it: its kind and what it names, the NUL-joined parts of a `later` key shown with ` · `. */
const deadlineLabel = (row: DueRow) => `${row.kind} ${row.ref.split("\u0000").filter((part) => part !== "").join(" · ")}`;

/** Wait before the next try of a deadline after its n-th failure in a row: 5 s doubling, at most 1 h (ms). */
export function deadlineRetryDelayMs(failures: number): number {
  return backoffMs(failures, deadlineRetryFirstMs, deadlineRetryMaxMs);
}

/**
 * The shell reports that the `tick` of deadline `key` failed with `error`: it is tried again after a growing wait,
 * and at the 3rd failure in a row the owner gets a card naming it. Nothing changes when the deadline is gone or no
 * longer due (it was handled, moved or set anew since).
 */
export function dueFailed(c: Ctx, key: string, error: string): Reply<TickAnswer> {
  const row = c.tx.get("due", key);
  if (!row || row.at > c.now) return ok({ ok: true, changed: false });
  const failing = { dueAt: row.failing?.dueAt ?? row.at, failures: (row.failing?.failures ?? 0) + 1, error };
  c.tx.put("due", key, { ...row, at: c.now + deadlineRetryDelayMs(failing.failures), failing } satisfies DueRow);
  if (failing.failures === deadlineFailuresBeforeCard) {
    createCard(c, {
      kind: "notice", key: systemCardKey.deadlineFailing(key), title: c.worded("card.deadlineFailing.title", { due: deadlineLabel(row), n: failing.failures }),
      text: c.worded("card.deadlineFailing.text", { at: c.iso(failing.dueAt), error }), rule: null, lane: "", run: null, system: "deadlineFailing",
    });
  }
  return ok({ ok: true, changed: true });
}

function workerOffline(c: Ctx, name: string): void {
  // The offline deadline is armed only by a recorded heartbeat, which writes the worker's row and closes its
  // offline card: when it comes due, the row is there and no offline card is open.
  const w = c.tx.get("workers", name);
  assert(w?.offlineCard === null, "offline-deadline-names-seen-worker");
  const id = createCard(c, {
    kind: "notice", key: systemCardKey.offline(name), title: c.worded("card.offline.title", { worker: name }), text: c.worded("card.offline.text"),
    rule: null, lane: "", run: null, system: "offline",
  });
  c.tx.put("workers", name, { ...w, offlineCard: id });
}

function fyiExpire(c: Ctx, id: number): void {
  const card = c.tx.get("cards", id);
  if (!card) return;
  for (const ch of card.channels) c.tx.del("outbox", outboxKey(ch, id));
}
