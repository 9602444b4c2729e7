/**
 * The three example plugins installed with `agent-autoloop add` from local git repositories and run through a real
 * hub: a signed order becomes an event (hello-source), hello-agent runs it, hello-channel receives the card.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, execFile } from "node:child_process";
import { cpSync, existsSync, readFileSync } from "node:fs";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { hubFixture, baseRules, engine, tempDir, until } from "./helpers.js";
import { Worker } from "../src/worker/worker.js";
import { runChannel } from "../src/host/channels.js";

function gitRepo(from: string, name: string): string {
  const dir = join(tempDir("aa-repo-"), name);
  cpSync(from, dir, { recursive: true });
  for (const args of [["init", "-q"], ["add", "."], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "plugin"]]) execFileSync("git", args, { cwd: dir });
  return dir;
}

function cli(home: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => execFile(process.execPath, [join(engine, "bin", "agent-autoloop.js"), ...args], { env: { ...process.env, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en" } },
    (e, out, err) => resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out: out.trim(), err: err.trim() })));
}

test("agent-autoloop add installs the example plugins by cloning; they run through a real hub", async () => {
  const rules = {
    ...baseRules,
    sources: { ...baseRules.sources, orders: { adapter: "hello-source" } },
    agents: { ...baseRules.agents, hello: { worker: "w1", use: "hello-agent", access: "read" } },
    channels: { ch1: { name: "Hello file" } },
    rules: [{ name: "orders", when: { source: "orders", types: ["order.*"] }, to: "hello", tell: "always", resume: true }],
  };
  const f = await hubFixture(rules, {}, "AGENT_AUTOLOOP_SECRET_ORDERS=shh\n");
  const ac = new AbortController();
  try {
    for (const name of ["hello-agent", "hello-channel", "hello-source"]) {
      const r = await cli(f.home.dir, "add", gitRepo(join(engine, "examples", "plugins", name), name));
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, `installed plugin ${name} in ${join(f.home.plugins, name)}; use it with "use": "${name}" or "adapter": "${name}" in rules.json`);
    }
    const again = await cli(f.home.dir, "add", gitRepo(join(engine, "examples", "plugins", "hello-agent"), "hello-agent"));
    assert.match(again.err, /plugin hello-agent is already installed/);
    const bad = await cli(f.home.dir, "add", gitRepo(join(engine, "examples", "plugins", "hello-agent"), "Hello_Agent"));
    assert.equal(bad.code, 1);
    assert.equal(bad.err, 'agent-autoloop: plugin names use lowercase letters, digits and -; the repository name gives "hello_agent"');
    assert.equal(existsSync(join(f.home.plugins, "hello_agent")), false);

    const cards = join(f.home.dir, "hello-cards.txt");
    void runChannel("ch1", { use: "hello-channel", key: f.keys.channel, file: cards }, f.url, f.home.plugins, ac.signal, () => {});
    const worker = new Worker({ url: f.url, key: f.keys.worker, name: "w1", capacity: 1, home: f.home, lang: "en" });
    void worker.run();
    const body = JSON.stringify({ id: 7, status: "paid" });
    const unsigned = await fetch(`${f.url}/v1/in/orders`, { method: "POST", body });
    assert.deepEqual([unsigned.status, await unsigned.json()], [401, { error: "not accepted: this address takes only webhooks signed with their source's secret" }], "refused before the body: the plugin declares its signatureHeader");
    const wrong = await fetch(`${f.url}/v1/in/orders`, { method: "POST", body, headers: { "x-shop-signature": "0".repeat(64) } });
    assert.deepEqual([wrong.status, await wrong.json()], [401, { error: "bad x-shop-signature" }]);
    const signed = await fetch(`${f.url}/v1/in/orders`, { method: "POST", body, headers: { "x-shop-signature": createHmac("sha256", "shh").update(body).digest("hex") } });
    assert.deepEqual((await signed.json()).events.map((e: any) => e.routed), [["orders"]]);
    const st = await until(async () => {
      const s = (await f.call("GET", "/v1/state", f.keys.owner)).body;
      return s.runs[0]?.state === "done" && s;
    }, 15_000, "the hello run");
    assert.equal(st.runs[0].summary, "Done: said hello.");
    assert.match(st.runs[0].session, /^hello-\d+$/);
    const text = await until(() => (existsSync(cards) ? readFileSync(cards, "utf8") : ""), 10_000, "the card file");
    assert.equal(text, 'card 1 v1: "orders" is done \n');
    worker.stop();
  } finally {
    ac.abort();
    await f.close();
  }
});
