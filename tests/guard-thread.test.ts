/**
 * The guard thread (src/worker/guard.ts, guard-thread.ts): the guard before a sandboxed launch and the check after its
 * run give in the thread exactly what they give on the worker's own thread — the parts to bind, what was planted and
 * moved aside, a limit reached — so that a local worker's hub keeps answering while they walk and run git. Real git,
 * real folders, the compiled thread script (`npm run build` first).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GuardThread, guardThreadScript } from "../src/worker/guard.js";
import { executableParts, GuardLimitError, guardLimits } from "../src/worker/steering.js";
import { owner, ownerRepo } from "./steering-helpers.js";

test("the guard thread gives the parts executableParts gives, finds and moves aside what was planted, and says a limit reached as the GuardLimitError it is", async () => {
  assert.ok(existsSync(guardThreadScript), "the compiled thread script (npm run build)");
  const lines: string[] = [];
  const thread = new GuardThread("w1", "en", (l) => lines.push(l));
  try {
    const repo = ownerRepo();
    const nested = join(repo, "vendor", "lib");
    mkdirSync(nested, { recursive: true });
    owner(nested, {}, "init", "-q");
    const [parts] = await thread.parts([{ folder: repo, project: true }]);
    assert.deepEqual(parts, executableParts(repo, true), "the same parts as on this thread");
    assert.deepEqual(parts!.mountPoints.sort(), [join(repo, ".git"), join(nested, ".git")].sort());
    // A commondir planted in the git folder during the run is found and moved aside by the thread.
    writeFileSync(join(repo, ".git", "commondir"), "../elsewhere\n");
    const planted = await thread.planted([repo], new Set([...parts!.readOnly, ...parts!.mountPoints]), parts!.seen, 9);
    assert.deepEqual(planted.map((p) => [p.path, p.kind]), [[join(repo, ".git", "commondir"), "moved"]]);
    assert.equal(existsSync(join(repo, ".git", "commondir")), false);
    assert.match(readdirSync(join(repo, ".git")).find((n) => n.startsWith("commondir.planted-run-9-")) ?? "", /^commondir\.planted-run-9-[0-9a-f]{16}$/);
    // A folder beyond the walk's limit: refused with the limit, as on this thread.
    const wide = ownerRepo();
    for (const d of ["a", "b", "c"]) mkdirSync(join(wide, d));
    await assert.rejects(thread.parts([{ folder: wide, project: false }], { ...guardLimits, folders: 3 }),
      (e: unknown) => e instanceof GuardLimitError && e.kind === "folders" && e.folder === wide && e.limit === 3);
    assert.equal((await thread.parts([{ folder: wide, project: false }], { ...guardLimits, folders: 5 }))[0]!.mountPoints.length, 1);
    assert.deepEqual(lines, []);
  } finally {
    thread.close();
  }
});
