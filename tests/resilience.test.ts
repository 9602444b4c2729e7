/** Failure-table rows of the shell: a channel that throws is restarted; a busy database answers 503 and the hub goes on. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createRequire } from "node:module";
import { hubFixture, tempDir, until } from "./helpers.js";
import { runChannel } from "../src/host/channels.js";
import { PluginLoader } from "../src/plugins/index.js";

test("a channel plugin that throws or returns is logged and restarted; the hub is unaffected", async () => {
  const f = await hubFixture();
  const plugins = tempDir("aa-plugins-");
  mkdirSync(join(plugins, "flaky"));
  // Throws on its first start, returns on its second, then keeps polling.
  writeFileSync(join(plugins, "flaky", "channel.mjs"), `let starts = 0;
export default async function ({ hub, signal }) {
  starts++;
  if (starts === 1) throw new Error("boom on start " + starts);
  if (starts === 2) return;
  while (!signal.aborted) await hub.nextCard(1).catch(() => {});
}
`);
  const lines: string[] = [];
  const ac = new AbortController();
  try {
    const done = runChannel("ch1", { use: "flaky", key: f.keys.channel }, f.url, new PluginLoader(plugins), ac.signal, (l) => lines.push(l), 50);
    await until(() => lines.length >= 2, 5000, "two restarts");
    assert.deepEqual(lines.slice(0, 2), ["channel ch1: Error: boom on start 1; restarting in 0.05 s", "channel ch1: returned; restarting in 0.1 s"]);
    await until(async () => (await f.state()).channels.find((c) => c.id === "ch1")!.seenAt, 5000, "the third start to poll");
    assert.equal((await f.call("POST", "/v1/events", f.keys.source, { id: "ok", type: "alert.x" })).status, 200);
    ac.abort();
    await done;
  } finally {
    ac.abort();
    await f.close();
  }
});

test("another process holding the database: the request answers 503, the hub keeps running and works after", async () => {
  const f = await hubFixture();
  try {
    const sqlite = createRequire(import.meta.url).resolve("better-sqlite3");
    // The holder keeps its lock until the test says so on its stdin (not for a fixed time, which a loaded machine
    // could outlast before the request even reaches SQLite).
    const holder = spawn(process.execPath, ["-e", `const D=require(${JSON.stringify(sqlite)}); const d=new D(${JSON.stringify(f.home.database)}); d.exec("BEGIN EXCLUSIVE"); console.log("locked"); process.stdin.once("data", () => { d.exec("COMMIT"); process.exit(0); });`], { stdio: ["pipe", "pipe", "inherit"] });
    await new Promise<void>((r) => holder.stdout!.once("data", () => r()));
    const busy = await f.call("POST", "/v1/events", f.keys.source, { id: "b1", type: "alert.x" });
    holder.stdin!.end("release\n");
    await new Promise((r) => holder.once("exit", r));
    assert.equal(busy.status, 503);
    assert.match(busy.body.error, /^busy, try again: database is locked/);
    const ok = await f.call("POST", "/v1/events", f.keys.source, { id: "b1", type: "alert.x" });
    assert.deepEqual([ok.status, ok.body.duplicate], [200, false], "nothing of the refused request was kept");
  } finally {
    await f.close();
  }
});
