/**
 * The worker's own files (issue 14, item 10): `job.json`, `result.json`, `claim`, `submitted`, `context.json`, the
 * usage ledger and the supervisor's `spec.json`, `pid.json`, `exit.json` are written whole or not at all (a temporary
 * file, fsync, rename, fsync of the folder), so a reader, or a worker restarted after a crash, never sees half a file.
 * The writers here are real processes: one that rewrites a file while this process reads it, one killed with SIGKILL
 * in the middle of its writes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engine, tempDir } from "./helpers.js";

const size = 1024 * 1024;
const a = "a".repeat(size);
const b = "b".repeat(size);

/** Starts a process that writes `file` with the worker's writer, alternating `a` and `b`, `times` times (0: forever). */
function writer(file: string, times: number) {
  const lib = join(engine, "dist", "src", "worker", "files.js");
  const code = `import { writeFileDurable } from ${JSON.stringify(lib)};
const a = "a".repeat(${size}), b = "b".repeat(${size});
for (let i = 0; ${times} === 0 || i < ${times}; i++) writeFileDurable(${JSON.stringify(file)}, i % 2 ? b : a);`;
  return spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: "ignore" });
}

/** The file's text, or null when it is not there yet. */
function read(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

test("a reader never sees a partial worker file while another process rewrites it", async () => {
  const file = join(tempDir(), "job.json");
  const child = writer(file, 60);
  const ended = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  let running = true;
  void ended.then(() => (running = false));
  let reads = 0;
  const partial: number[] = [];
  while (running) {
    const text = read(file);
    if (text !== null) {
      reads += 1;
      if (text !== a && text !== b) partial.push(text.length);
    }
    await new Promise((r) => setImmediate(r));
  }
  assert.equal(await ended, 0);
  assert.ok(reads > 0);
  assert.deepEqual(partial, [], `${partial.length} of ${reads} reads saw a partial file`);
  assert.equal(read(file), b);
});

test("a writer killed with SIGKILL in the middle of its writes leaves the whole old or the whole new file", async () => {
  const dir = tempDir();
  const file = join(dir, "result.json");
  const seen: string[] = [];
  for (let i = 0; i < 8; i++) {
    const child = writer(file, 0);
    const ended = new Promise((r) => child.on("exit", r));
    // Until it has written at least once, then a little more, so that the kill lands anywhere in a write.
    while (read(file) === null) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 150)));
    child.kill("SIGKILL");
    await ended;
    const text = read(file);
    seen.push(text === a ? "a" : text === b ? "b" : `partial (${text?.length ?? "missing"})`);
  }
  assert.deepEqual(seen.filter((s) => s.startsWith("partial")), [], seen.join(", "));
  // Each killed writer may leave its own temporary file; nothing else is there.
  assert.deepEqual(readdirSync(dir).filter((n) => n !== "result.json" && !/^result\.json\.\d+\.[0-9a-f]{12}\.tmp$/.test(n)), []);
});

test("hostile round 47b (the worker's artifact writer): a link planted at the temporary name a writer would take is never written through", async () => {
  const { writeFileDurable } = await import("../src/worker/files.js");
  const dir = tempDir();
  const target = join(dir, "rules.json");
  writeFileSync(target, "the owner's rules");
  const file = join(dir, "note.md");
  // The old name, <file>.<pid>.tmp: a pid is easy to guess; and a link at the file's own name.
  symlinkSync(target, `${file}.${process.pid}.tmp`);
  symlinkSync(target, join(dir, "out.md"));
  writeFileDurable(file, "the agent's text");
  writeFileDurable(join(dir, "out.md"), "the agent's text");
  assert.equal(readFileSync(target, "utf8"), "the owner's rules");
  assert.deepEqual([readFileSync(file, "utf8"), readFileSync(join(dir, "out.md"), "utf8")], ["the agent's text", "the agent's text"]);
});

test("every file the worker and its supervisor write goes through that writer", () => {
  const dir = join(engine, "src", "worker");
  const direct = readdirSync(dir).filter((n) => n.endsWith(".ts") && n !== "files.ts")
    .flatMap((n) => [...readFileSync(join(dir, n), "utf8").matchAll(/\b(writeFileSync|appendFileSync|createWriteStream|renameSync|writeSync)\(/g)].map((m) => `${n}: ${m[1]}`));
  assert.deepEqual(direct, []);
});
