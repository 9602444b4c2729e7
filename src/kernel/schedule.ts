/**
 * Cron schedules on the due table, and the end of a pause, which sets its rule's schedule going again (protocol.md 来源:
 * 定时; 本人: 暂停、恢复). Below control.ts and budget.ts, which both end pauses.
 */
import type { Ctx } from "./context.js";
import { nextCronAt } from "./cron.js";

/** Puts the next time of every cron rule on the due table (rules.json was loaded); rules that are no longer cron lose theirs. */
export function scheduleCrons(c: Ctx, fromMs: number): void {
  for (const rule of c.rules.rules) {
    if (rule.cron === null) continue;
    const row = c.tx.get("crons", rule.name);
    // The same expression and zone: the row stands (one with no next time has none later either).
    if (row && row.expr === rule.cron && row.tz === c.rules.timezone) continue;
    scheduleCron(c, rule.name, rule.cron, fromMs);
  }
  for (const name of c.view.cronRules()) {
    const rule = c.rule(name);
    if (!rule || rule.cron === null) {
      c.tx.del("crons", name);
      c.undue("cron", name);
    }
  }
}

/** Puts one cron rule's next time after `fromMs` on the due table, keeping its last and skipped times. */
function scheduleCron(c: Ctx, name: string, expr: string, fromMs: number): void {
  const row = c.tx.get("crons", name);
  const next = nextCronAt(expr, c.rules.timezone, fromMs);
  c.tx.put("crons", name, { ...row, rule: name, expr, tz: c.rules.timezone, next, skippedAt: row?.skippedAt ?? null, lastAt: row?.lastAt ?? null });
  if (next !== null) c.due("cron", name, next);
  else c.undue("cron", name);
}

/** Ends a pause: queued runs become claimable; cron times go on from now, missed ones are not made up. */
export function resume(c: Ctx, name: string): void {
  c.tx.del("pauses", name);
  c.undue("pause", name);
  const cron = c.rule(name)?.cron;
  if (cron) scheduleCron(c, name, cron, c.now);
  c.wake.workers = true;
}
