/**
 * Issue 26 hostile round 37 (b), seen beside its findings: a `plugins set` killed mid-write left
 * `secrets.env.<pid>.tmp`, holding every secret, in the home for good. A starting hub removes the temporaries of
 * processes that are gone, never a live writer's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { homePaths } from "../src/common/paths.js";
import { removeStaleTemporaries } from "../src/host/home-files.js";

test("a starting hub removes the home's temporaries of writers that are gone (a killed secrets write), not a live writer's, not other files", () => {
  const dir = tempDir("aa-home-tmp-");
  try {
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid!;
    const names = [`secrets.env.${gone}.tmp`, `config.json.${gone}.0a1b2c.tmp`, `secrets.env.${process.pid}.tmp`, "secrets.env", "notes.tmp", `x.${gone}.tmp.keep`];
    for (const n of names) writeFileSync(join(dir, n), "AGENT_AUTOLOOP_PLUGIN_SECRET__x__token=s3cret\n", { mode: 0o600 });
    mkdirSync(join(dir, `plugins.${gone}.tmp`));
    assert.deepEqual(removeStaleTemporaries(homePaths(dir)).sort(), [join(dir, `config.json.${gone}.0a1b2c.tmp`), join(dir, `secrets.env.${gone}.tmp`)]);
    assert.deepEqual(readdirSync(dir).sort(), [`plugins.${gone}.tmp`, "notes.tmp", "secrets.env", `secrets.env.${process.pid}.tmp`, `x.${gone}.tmp.keep`].sort());
    assert.equal(existsSync(join(dir, `plugins.${gone}.tmp`)), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
