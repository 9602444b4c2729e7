/**
 * Issue 26 hostile round 22, F22-1: descriptors the hub inherits without close-on-exec went on to every program it
 * starts — through the worker's supervisor and bubblewrap into every sandboxed agent and plugin. A hub started under
 * `( flock -n 200 || exit 1; exec agent-autoloop serve ) 200< ~/.agent-autoloop` gave each sandbox the home as
 * `/proc/self/fd/200/`. Now `serve` closes them before it starts anything (src/common/inherited-fds.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { engine, makeHome } from "./helpers.js";

test("issue 26 r22 F22-1 (reported case: serve started with the home open as descriptor 200): the hub holds no descriptor it inherited without close-on-exec, so none reaches what it starts", async () => {
  const { dir, home } = makeHome();
  // As the reported starter did, through bash (Node's own spawn gives a child's extra descriptors close-on-exec):
  // descriptor 200 the home (a directory), 201 another file, both without the flag.
  const child = spawn("bash", ["-c", 'exec 200<"$AGENT_AUTOLOOP_HOME" 201</dev/null; exec "$0" "$@"', process.execPath, join(engine, "bin", "agent-autoloop.js"), "serve", "--listen", "127.0.0.1:0"], {
    env: { ...process.env, AGENT_AUTOLOOP_HOME: home.dir, AGENT_AUTOLOOP_LANG: "en" }, stdio: ["ignore", "pipe", "pipe"],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (d) => ((out += d), /listening on/.test(out) && resolve()));
      child.on("exit", (code) => reject(new Error(`serve exited ${code}`)));
    });
    const fds = readdirSync(`/proc/${child.pid}/fd`).map(Number);
    assert.equal(fds.includes(200), false, "the home's descriptor closed");
    assert.equal(fds.includes(201), false);
    // What it starts sees none either: a child of the hub's process is what a sandbox's supervisor is.
    const probe = spawnSync("sh", ["-c", `ls /proc/${child.pid}/fd`], { encoding: "utf8" });
    assert.equal(probe.stdout.split("\n").includes("200"), false);
  } finally {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});

test("closeInheritedDescriptors closes exactly the descriptors above 2 without close-on-exec, and keeps Node's own", () => {
  // A child node with descriptor 40 inherited (through bash, as above), and one it opens itself (close-on-exec, as Node
  // opens every file).
  const script = `
    const fs = require("node:fs");
    const own = fs.openSync("/dev/null", "r");
    import(${JSON.stringify(join(engine, "dist", "src", "common", "inherited-fds.js"))}).then(({ closeInheritedDescriptors }) => {
      const closed = closeInheritedDescriptors();
      const left = fs.readdirSync("/proc/self/fd").map(Number);
      console.log(JSON.stringify({ closed, ownLeft: left.includes(own), fortyLeft: left.includes(40) }));
    });`;
  const r = spawnSync("bash", ["-c", 'exec 40</dev/null; exec "$0" "$@"', process.execPath, "-e", script], { encoding: "utf8" });
  const got = JSON.parse(r.stdout.trim().split("\n").pop()!) as { closed: number[]; ownLeft: boolean; fortyLeft: boolean };
  assert.equal(got.closed.includes(40), true, r.stderr);
  assert.deepEqual([got.ownLeft, got.fortyLeft], [true, false]);
});
