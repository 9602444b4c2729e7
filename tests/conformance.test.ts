/** The project's own hub passes `agent-autoloop conformance`, twice in a row against the same hub. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { hubFixture, baseRules, engine } from "./helpers.js";

test("conformance passes against this hub, and again", async () => {
  const rules = { ...baseRules, rules: [{ name: "conf", when: { source: "shop", types: ["conf.*"] }, to: "bot", parallel: 2 }] };
  const f = await hubFixture(rules);
  try {
    const cfgFile = join(f.home.dir, "conformance.json");
    writeFileSync(cfgFile, JSON.stringify({ keys: { source: f.keys.source, worker: f.keys.worker, channel: f.keys.channel, owner: f.keys.owner }, eventType: "conf.check", answerer: "ou_alice" }));
    for (let i = 0; i < 2; i++) {
      const r = await new Promise<{ code: number; out: string }>((resolve) =>
        execFile(process.execPath, [join(engine, "bin", "agent-autoloop.js"), "conformance", f.url, "--config", cfgFile], (e, out) => resolve({ code: e ? 1 : 0, out: out.trim() })));
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /\n11 passed, 0 failed$/);
      assert.doesNotMatch(r.out, /FAIL/);
    }
    const broken = await new Promise<{ code: number; out: string }>((resolve) => {
      writeFileSync(cfgFile, JSON.stringify({ keys: { source: f.keys.source, worker: f.keys.worker, channel: f.keys.channel, owner: f.keys.owner }, eventType: "conf.check", answerer: "someone-else" }));
      execFile(process.execPath, [join(engine, "bin", "agent-autoloop.js"), "conformance", f.url, "--config", cfgFile], (e, out) => resolve({ code: e ? 1 : 0, out: out.trim() }));
    });
    assert.equal(broken.code, 1, "a wrong answerer makes a check fail");
    assert.match(broken.out, /FAIL answers: a stranger is refused/);
  } finally {
    await f.close();
  }
});
