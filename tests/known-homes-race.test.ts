/**
 * Two hubs starting together (a full test run's concurrent homes): each read the user's list of homes and wrote it
 * back with only its own added, so a home was lost from the list and not hidden from the other's sandboxes
 * (tests/sandbox-mounts.test.ts failed once so in a full run). One writer at a time now, by a lock file; a real
 * process writing while the test holds the lock.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { tempDir } from "./helpers.js";
import { knownHomesFile } from "../src/worker/known-homes.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("the user's list of homes is written by one writer at a time: a writer waits while another holds the lock, then keeps both homes; a lock left by a dead writer is broken", async () => {
  const base = tempDir("aa-known-race-");
  try {
    const user = join(base, "user");
    const [a, b, c] = ["a", "b", "c"].map((n) => join(base, n)) as [string, string, string];
    for (const d of [user, a, b, c]) mkdirSync(d);
    const list = join(user, knownHomesFile);
    const lock = `${list}.lock`;
    const listed = () => (JSON.parse(readFileSync(list, "utf8")) as { homes: string[] }).homes;
    writeFileSync(list, JSON.stringify({ homes: [a] }));
    const module = pathToFileURL(join(process.cwd(), "src", "worker", "known-homes.ts")).href;
    const writer = (home: string) => new Promise<void>((done, fail) => {
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", `const { recordKnownHome } = await import(${JSON.stringify(module)}); recordKnownHome(${JSON.stringify(home)}, [${JSON.stringify(user)}]);`], { stdio: ["ignore", "ignore", "inherit"] });
      child.on("exit", (code) => (code === 0 ? done() : fail(new Error(`writer exited ${code}`))));
    });
    writeFileSync(lock, "");
    const waiting = writer(b);
    await sleep(2_500); // the writer has started (tsx) and waits on the lock
    assert.deepEqual(listed(), [a], "nothing written while another writer holds the lock");
    rmSync(lock);
    await waiting;
    assert.deepEqual(listed(), [b, a]);
    // A lock its writer left behind (older than the wait) is broken.
    writeFileSync(lock, "");
    utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    await writer(c);
    assert.deepEqual(listed(), [c, b, a]);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
