/**
 * Facts as clients see them (protocol.md 日志与确定性): the stream and `why` never carry key hashes or capability
 * tokens, and `why` carries no rule bodies (only the rules version).
 */
import type { Fact } from "../kernel/types.js";

/** Tables whose row keys are credentials' hashes: key hashes, and the HMACs of async tool calls' task ids. */
const hashKeyedTables = new Set(["keys", "tasks"]);

/** A fact with key hashes and task-id hashes replaced by "…" (the stream's and `why`'s form). */
export function publicFact(f: Fact): Fact {
  return {
    ...f,
    changes: f.changes.map(([table, key, row]) => (hashKeyedTables.has(table) ? [table, "…", row] : [table, key, row])),
  };
}

/** A fact without rule bodies: the rules row keeps only its version and hash. */
export function withoutRuleBodies(f: Fact): Fact {
  return {
    ...f,
    changes: f.changes.map(([table, key, row]) =>
      table === "meta" && key === "rules" && row ? [table, key, { version: (row as { version: number }).version, hash: (row as { hash: string }).hash }] : [table, key, row],
    ),
  };
}
