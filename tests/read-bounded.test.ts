/**
 * `readBounded` (src/plugins/files.ts): at most `max + 1` bytes of a regular file, read into a buffer sized by the file
 * (not by the bound: 16 MB were zero-filled for each small JSON file), whatever the file's size says — /proc's files
 * say 0 and hold more.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readBounded } from "../src/plugins/files.js";
import { tempDir } from "./helpers.js";

test("a file within the bound whole, one past it as max + 1 bytes, an empty file as nothing, /proc's as they read", () => {
  const dir = tempDir();
  const file = (name: string, bytes: number) => {
    const path = join(dir, name);
    writeFileSync(path, Buffer.from(Array.from({ length: bytes }, (_, i) => i % 251)));
    return path;
  };
  assert.deepEqual(readBounded(file("small", 10), 1000), readFileSync(join(dir, "small")));
  assert.equal(readBounded(file("empty", 0), 1000).length, 0);
  assert.deepEqual(readBounded(file("exact", 1000), 1000), readFileSync(join(dir, "exact")));
  const over = readBounded(file("over", 5000), 1000);
  assert.deepEqual(over, readFileSync(join(dir, "over")).subarray(0, 1001));
  const status = readBounded("/proc/self/status", 1 << 20).toString("utf8");
  assert.match(status, /^Name:\t/);
  assert.match(status, /\nVmRSS:\t/);
  assert.equal(readBounded("/proc/self/status", 3).length, 4);
  assert.throws(() => readBounded(dir, 10), { code: "ENOTREG" });
});
