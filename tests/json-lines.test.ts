/**
 * `completeJsonLines` (tests/helpers.ts), which tests read files a plugin's process appends to with: seen in a full
 * run, a read between the append's open and its write found the file empty and failed to parse "" (tool-callback-legacy).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { completeJsonLines, tempDir } from "./helpers.js";

test("a missing or empty file has no lines; a line not yet ended is not read; ended lines are", () => {
  const file = join(tempDir(), "answers");
  assert.deepEqual(completeJsonLines(file), []);
  writeFileSync(file, "");
  assert.deepEqual(completeJsonLines(file), []);
  writeFileSync(file, '[200,{"ok":tr');
  assert.deepEqual(completeJsonLines(file), []);
  writeFileSync(file, '[200,{"ok":true}]\n[403,{"er');
  assert.deepEqual(completeJsonLines(file), [[200, { ok: true }]]);
  writeFileSync(file, '[200,{"ok":true}]\n[403,{"error":"x"}]\n');
  assert.deepEqual(completeJsonLines(file), [[200, { ok: true }], [403, { error: "x" }]]);
});
