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

/**
 * A fact without artifacts' texts (issue 18): `why` lists each file with its route, which serves the text; a row keeps
 * its name, size and time.
 */
export function withoutArtifactTexts(f: Fact): Fact {
  if (!f.changes.some(([table]) => table === "artifacts")) return f;
  return {
    ...f,
    changes: f.changes.map(([table, key, row]) => {
      if (table !== "artifacts" || !row) return [table, key, row];
      const { text: _text, ...rest } = row as { text: string };
      return [table, key, rest];
    }),
  };
}
