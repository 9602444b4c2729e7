/**
 * Issue 26 round 9, Low (reported case kept): an unsandboxed service plugin outlived each SIGKILL of its hub (parent
 * pid 1), one more copy per crash. The next start of a hub on the home ends what a killed one left (src/tools/service.ts
 * `endOrphans`): after two kills and a start, only the new hub's copy runs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeHome, removeAfterKill, serveProcess, until, type ServeProcess } from "./helpers.js";
import { examples, processesIn, running } from "./tools-helpers.js";

test("issue 26 r9 (reported case): a killed hub's unsandboxed service plugin is ended by the next start on the home; one copy runs", { timeout: 120_000 }, async () => {
  const { dir, home } = makeHome();
  const hubs: ServeProcess[] = [];
  try {
    const plugins = home.plugins;
    mkdirSync(plugins, { recursive: true });
    cpSync(join(examples, "hello-service"), join(plugins, "hello-service"), { recursive: true });
    const folder = join(plugins, "hello-service");
    // The service leaves a child of its own behind it (as the reported shell service did): the service alone may end
    // when its pipes close, a child of it does not.
    const manifest = join(folder, "manifest.toml");
    writeFileSync(manifest, readFileSync(manifest, "utf8").replace('command = "node"\nargs = ["main.mjs"]', 'command = "sh"\nargs = ["-c", "sleep 1000 & exec node main.mjs"]'));
    assert.match(readFileSync(manifest, "utf8"), /sleep 1000/);
    const seen: number[][] = [];
    for (let i = 0; i < 3; i++) {
      const hub = await serveProcess(dir);
      hubs.push(hub);
      const copies = (await until(() => { const p = processesIn(folder); return p.length >= 2 && p; }, 30_000, "the service and its child to start"))!;
      seen.push(copies);
      if (i < 2) {
        hub.child.kill("SIGKILL");
        await until(() => hub.child.exitCode !== null || hub.child.signalCode !== null, 10_000, "the hub to die");
      } else {
        // The copies the killed hubs left are gone; only this hub's runs.
        await until(() => seen.slice(0, 2).flat().every((pid) => !running(pid)), 10_000, () => `the old copies to end: ${JSON.stringify(seen)} now ${JSON.stringify(processesIn(folder))}`);
        assert.equal(processesIn(folder).length, 2, `this hub's service and its child: ${JSON.stringify(processesIn(folder))}`);
        await hub.stop();
      }
    }
  } finally {
    for (const h of hubs) h.child.kill("SIGKILL");
    for (const pid of processesIn(join(home.plugins, "hello-service"))) process.kill(pid, "SIGKILL");
    removeAfterKill(dir);
  }
});
