/**
 * A starting hub, worker or client loads no schema library: the protocol's validators are compiled ahead of time
 * (scripts/validators.ts), so TypeBox and Ajv's compiler are for `npm run schema` and the tests only (README
 * "Measurements": start time and idle memory). Walks the static imports of the built JavaScript (`npm run build`
 * first; type imports are gone there) from each entry point; `import()` on use is not followed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { engine } from "./helpers.js";

/** The modules `file` reaches through static imports: project files by path, packages by name. */
function reach(file: string, seen = new Map<string, string>(), from = "entry"): Map<string, string> {
  if (seen.has(file)) return seen;
  seen.set(file, from);
  const text = readFileSync(file, "utf8");
  for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+"([^"]+)";?$|^import\s+"([^"]+)";?$/gm)) {
    const spec = (m[1] ?? m[2])!;
    if (spec.startsWith(".")) {
      const target = resolve(dirname(file), spec);
      if (existsSync(target)) reach(target, seen, file);
    } else {
      seen.set(spec, file);
    }
  }
  return seen;
}

test("the hub, the worker, the client and the CLI import no schema library at start", () => {
  const dist = join(engine, "dist", "src");
  for (const entry of ["host/serve.js", "worker/worker.js", "protocol/client.js", "cli/main.js"]) {
    const seen = reach(join(dist, entry));
    const heavy = [...seen.keys()].filter((m) => m.startsWith("@sinclair/typebox") || (m.startsWith("ajv") && m !== "ajv/dist/runtime/ucs2length.js"));
    assert.deepEqual(heavy.map((m) => `${m} (from ${seen.get(m)!.slice(dist.length + 1)})`), [], entry);
    assert.ok(seen.size > 3, `${entry} reaches ${seen.size} modules`);
  }
});
