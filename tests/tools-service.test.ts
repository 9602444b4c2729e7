/**
 * Service tool plugins (spec tool-plugins.md §6) with the small Node service of examples/tool-plugins/hello-service:
 * started by the host with CORLINMAN_PLUGIN_ADDR, spoken to over gRPC PluginBridge.Execute (progress, result, error,
 * awaiting_approval), supervised (restart with backoff, crash loop), restarted only by its own manifest's change.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { examples, hostFixture, running, syncManifest, toolToml, until, writePlugin, type HostFixture } from "./tools-helpers.js";

const main = join(examples, "hello-service", "main.mjs");

/** Installs hello-service in the fixture's root (its script by absolute path) and starts the host. */
async function withService(f: HostFixture): Promise<string> {
  const manifest = readFileSync(join(examples, "hello-service", "manifest.toml"), "utf8").replace('args = ["main.mjs"]', `args = [${JSON.stringify(main)}]`);
  const dir = writePlugin(f.root, "hello-service", manifest);
  f.registry.rescan();
  await f.host.start();
  return dir;
}

const pid = (f: HostFixture) => f.host.statuses().find((s) => s.plugin === "hello-service")?.pid ?? null;

test("a service plugin is started with CORLINMAN_PLUGIN_ADDR and answers over PluginBridge.Execute", async () => {
  const f = hostFixture();
  try {
    await withService(f);
    assert.deepEqual(f.host.statuses().map((s) => [s.plugin, s.kind, s.state]), [["hello-service", "service", "running"]]);
    // Each service has a folder of its own in the host's socket folder (issue 26: a sandboxed service is shown only its own).
    assert.deepEqual(f.logs, [`plugin.hello-service hello-service listening on ${join(f.root, ".sock", "1", "plugin.sock")}`]);
    const progress: unknown[] = [];
    const greet = await f.host.call("hello-service.greet", { name: "Ada" }, { sessionKey: "owner:me", onProgress: (p) => progress.push(p) });
    assert.equal(greet.status === "ok" && JSON.stringify(greet.result), '{"content":"hello, Ada"}');
    assert.deepEqual(progress, [{ percent: 50, message: "looking up the name" }]);
    const count = await f.host.call("hello-service.count", {}, { sessionKey: "owner:me" });
    assert.deepEqual(count.status === "ok" && count.result, { served: 2, session_key: "owner:me" }, "one process keeps its state between calls");
    const refuse = await f.host.call("hello-service.refuse", {}, { sessionKey: "s" });
    assert.deepEqual([refuse.status, "code" in refuse && refuse.code, "message" in refuse && refuse.message], ["error", "FORMAT", "refused on purpose"]);
    const ask = await f.host.call("hello-service.ask", { path: "/x" }, { sessionKey: "s" });
    assert.deepEqual([ask.status, "reason" in ask && ask.reason, "argsPreview" in ask && ask.argsPreview], ["awaiting_approval", "this writes files", '{"path":"/x"}']);
    const bad = await f.host.call("hello-service.greet", {}, { sessionKey: "s" });
    assert.equal(bad.status, "refused");
  } finally {
    await f.close();
  }
});

test("supervision: a crash mid-call is an error, the service is restarted; more than 3 crashes in 60 s is a crash loop", async () => {
  const f = hostFixture({ restartBackoffMs: [50] });
  const seen: string[] = [];
  f.host.onStatus((s) => seen.push(s.state));
  try {
    await withService(f);
    const first = pid(f)!;
    const crash = await f.host.call("hello-service.crash", {}, { sessionKey: "s" });
    assert.deepEqual([crash.status, "code" in crash && crash.code], ["error", "tools.plugin_exited"]);
    await until(() => f.host.statuses()[0]?.state === "running" && pid(f) !== first, 20_000, "the restart");
    assert.equal(running(first), false);
    const again = await f.host.call("hello-service.greet", { name: "Bo" }, { sessionKey: "s" });
    assert.equal(again.status === "ok" && JSON.stringify(again.result), '{"content":"hello, Bo"}');
    for (let i = 0; i < 3; i++) {
      const p = pid(f);
      if (p === null) break;
      process.kill(p, "SIGKILL");
      await until(() => pid(f) !== p && ["running", "crash_loop"].includes(f.host.statuses()[0]!.state), 20_000, `crash ${i + 2}`);
    }
    assert.equal(f.host.statuses()[0]?.state, "crash_loop");
    // each restart is said in the log, the SIGKILLs too (the verification of issue 34 saw a killed service come back in silence)
    assert.deepEqual(f.logs.filter((l) => l.includes("restarting it in")).map((l) => l.replace(/\(.*\)/, "(…)")), Array(3).fill("plugin.hello-service service plugin hello-service ended (…); restarting it in 50 ms"));
    assert.equal(f.logs.filter((l) => l.includes("(exit SIGKILL); restarting")).length, 2);
    const refused = await f.host.call("hello-service.greet", { name: "Cy" }, { sessionKey: "s" });
    assert.deepEqual([refused.status, "message" in refused && refused.message], [
      "refused", "plugin hello-service crashed 4 times within 60 s and is not restarted again (edit its manifest or restart the tool host to try again)",
    ]);
    assert.ok(seen.includes("backoff"));
  } finally {
    await f.close();
  }
});

test("an unrelated edit does not restart a service; an edit of its own stops it, and it starts again at a version the owner trusts or with the first call the hub allows (issue 26 round 25, F25b-2)", async () => {
  const trusted = new Set<string>();
  const f = hostFixture({ trusted: (plugin, digest) => trusted.has(`${plugin} ${digest}`) });
  try {
    const dir = await withService(f);
    const other = writePlugin(f.root, "other", syncManifest("other", "true", [], toolToml("t")));
    f.registry.rescan();
    const before = pid(f)!;
    writeFileSync(join(other, "manifest.toml"), syncManifest("other", "true", [], toolToml("t2")));
    f.registry.rescan();
    assert.equal(pid(f), before);
    // The reported case: its own files changed (here, its manifest) while it ran, and nobody trusts the new version.
    writeFileSync(join(dir, "manifest.toml"), readFileSync(join(dir, "manifest.toml"), "utf8") + "\n# edited\n");
    f.registry.rescan();
    await until(() => !running(before), 20_000, "the service to stop after its own edit");
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(f.host.statuses().some((s) => s.state === "running"), false, "not started again by itself");
    assert.equal(f.logs.at(-1), "plugin.hello-service plugin hello-service changed while it ran: stopped; the first call of its new version you allow starts it again");
    const greet = await f.host.call("hello-service.greet", { name: "Ada" }, { sessionKey: "s" });
    assert.equal(greet.status, "ok", "a call the hub allowed starts it");
    const second = pid(f)!;
    // A version the owner trusts starts again by itself.
    writeFileSync(join(dir, "manifest.toml"), readFileSync(join(dir, "manifest.toml"), "utf8") + "\n# edited again\n");
    f.registry.rescan();
    const check = await f.host.check("hello-service.greet", { name: "Ada" });
    assert.ok(check.ok);
    trusted.add(`hello-service ${check.digest}`);
    writeFileSync(join(dir, "manifest.toml"), readFileSync(join(dir, "manifest.toml"), "utf8"));
    f.registry.rescan();
    await until(() => f.host.statuses()[0]?.state === "running" && pid(f) !== second, 20_000, "the restart at a trusted version");
  } finally {
    await f.close();
  }
});

test("issue 26 round 3 F2: a service that puts a link in place of its socket (to another service's) is not connected; its calls reach no other plugin", async () => {
  const f = hostFixture();
  try {
    // mimic (sandboxed, folder 2) makes its socket a relative link to hello-service's (folder 1, not sandboxed).
    const mimic = `name = "mimic"\nversion = "0.1.0"\nplugin_type = "service"\n[entry_point]\ncommand = "bash"\nargs = ["main.sh"]\n[sandbox]\n${toolToml("run")}`;
    writePlugin(f.root, "mimic", mimic, { "main.sh": 'ln -sfn "../1/plugin.sock" "$CORLINMAN_PLUGIN_ADDR"\nexec sleep 600\n' });
    await withService(f);
    await until(() => f.host.statuses().find((s) => s.plugin === "mimic")?.lastError, 20_000, "mimic's start to fail");
    const status = f.host.statuses().find((s) => s.plugin === "mimic")!;
    assert.notEqual(status.state, "running");
    assert.match(status.lastError!, /plugin mimic: what is at .*\/2\/plugin\.sock is no socket \(a link or another file\): not connected/);
    const call = await f.host.call("mimic.run", {}, { sessionKey: "owner:me" });
    assert.notEqual(call.status, "ok", JSON.stringify(call));
    const count = await f.host.call("hello-service.count", {}, { sessionKey: "owner:me" });
    assert.deepEqual(count.status === "ok" && count.result, { served: 1, session_key: "owner:me" }, "hello-service served only this call");
  } finally {
    await f.close();
  }
});

test("issue 26 round 57, F57a-3 (reported case: a service denied whole while it ran was started again by its restart after a crash): no process of a plugin denied whole starts, a restart either", async () => {
  let denied = false;
  const f = hostFixture({ denied: (plugin) => denied && plugin === "hello-service", restartBackoffMs: [50] });
  try {
    await withService(f);
    const first = pid(f);
    assert.ok(first, "running before the deny");
    denied = true;
    process.kill(first, "SIGKILL");
    const status = () => f.host.statuses().find((s) => s.plugin === "hello-service");
    await until(() => status()?.state === "stopped", 10_000, () => `the restart refused (${JSON.stringify(status())})`);
    assert.match(status()?.lastError ?? "", /^hello-service was not started: rules\.json's approvals deny it whole/);
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual([status()?.state, pid(f)], ["stopped", null], "no new process");
  } finally {
    await f.close();
  }
});

test("hostile round 41, F41b-4 (reported case: approvals deny hello-service whole, serve started it anyway): a long-lived plugin denied whole is not started; allowed again, the first call the hub allows starts it", async () => {
  let denied = true;
  const f = hostFixture({ denied: (plugin) => denied && plugin === "hello-service" });
  try {
    await withService(f);
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(f.host.statuses().filter((s) => s.state === "running"), [], "not started");
    assert.deepEqual(f.logs, ["plugin.hello-service hello-service was not started: rules.json's approvals deny it whole (a denied plugin never runs). Once that entry changes, the first call the hub allows starts it"]);
    denied = false;
    const greet = await f.host.call("hello-service.greet", { name: "Ada" }, { sessionKey: "s" });
    assert.equal(greet.status === "ok" && JSON.stringify(greet.result), '{"content":"hello, Ada"}');
    assert.equal(f.host.statuses()[0]?.state, "running");
  } finally {
    await f.close();
  }
});
