/**
 * Issue 26 round 35, F35b-1: an agent's receipt named the card template of a plugin its rule has nothing to do with
 * (`example/note`), Needs you showed that plugin's "Got it" button inside the agent's question, and the owner's press
 * posted `plugin:example` `action.ack`, which started the owner's rule for it. A card of a run shows only templates of
 * plugins its rule uses (rules.ts `templateTied`); another's is left off the card, and the result's answer says so.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { baseRules, hubFixture } from "./helpers.js";
import { copyExample } from "./declarative-helpers.js";
import { templateTied, type RuleDef } from "../src/kernel/rules.js";

test("templateTied: a rule ties the plugins of its source, emits, intent, workflow, prompt and tools; nothing else", () => {
  const rule = (extra: Partial<RuleDef>) => ({ name: "r", source: "shop", types: ["*"], cron: null, emits: null, ...extra }) as RuleDef;
  assert.equal(templateTied(rule({}), "example/note"), false);
  assert.equal(templateTied(undefined, "example/note"), false);
  for (const extra of [
    { source: "plugin:example" }, { emits: { source: "plugin:example", types: [] } }, { intent: "example/ask" }, { workflow: "example/triage" },
    { promptRef: "example/writer" }, { tools: ["example.http_fetch"] }, { tools: ["example"] }, { tools: ["*"] }, { tools: ["ex*.x"] },
  ] as Partial<RuleDef>[]) {
    assert.equal(templateTied(rule(extra), "example/note"), true, JSON.stringify(extra));
  }
  assert.equal(templateTied(rule({ source: "plugin:examples", promptRef: "other/writer", tools: ["other.x"] }), "example/note"), false);
});

test("issue 26 r35 F35b-1 (reported case: a rule whose agent may emit only lab:y.* named example/note in its question): the card is made without the template, the result's answer names it; the rule that uses the plugin keeps it", async () => {
  const rules = { ...baseRules, rules: [...baseRules.rules, { ...baseRules.rules[0]!, name: "uses", when: { source: "shop", types: ["use.*"] }, promptRef: "example/writer" }] };
  const f = await hubFixture(rules);
  try {
    copyExample(f.home.plugins);
    assert.equal((await f.call("POST", "/v1/plugins/reload", f.keys.owner)).status, 200);
    const receipt = { outcome: "done", ask: [{ title: "Read this then press Got it", text: "Press **Got it** below.", options: ["ok"], card: "example/note" }], notice: [{ title: "FYI", card: "example/note" }] };
    for (const [id, type] of [["t1", "alert.x"], ["t2", "use.x"]]) {
      await f.call("POST", "/v1/events", f.keys.source, { id, type });
      const job = (await f.call("GET", `/v1/work?claim=${id}`, f.keys.worker)).body.job;
      const answer = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, receipt);
      const cards = (await f.state()).cards.filter((c) => c.run === job.run);
      if (type === "alert.x") {
        assert.deepEqual(cards.map((c) => c.template), [undefined, undefined]);
        const reason = "卡片模板 example/note 不属于这条规则用到的插件，卡片没带它";
        assert.deepEqual(answer.body.rejected, cards.map((c) => ({ card: c.id, reason })));
      } else {
        assert.deepEqual(cards.map((c) => c.template), ["example/note", "example/note"]);
        assert.deepEqual(answer.body.rejected, []);
      }
    }
    // A failed run's notices too (the review of round 35: a `Not run:` message kept its notices' templates).
    await f.call("POST", "/v1/events", f.keys.source, { id: "t3", type: "alert.y" });
    const job = (await f.call("GET", "/v1/work?claim=t3", f.keys.worker)).body.job;
    const answer = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "failed", error: "Not run: no", notice: [{ title: "Failed FYI", card: "example/note" }] });
    const cards = (await f.state()).cards.filter((c) => c.run === job.run && c.title === "Failed FYI");
    assert.deepEqual([cards.map((c) => c.template), answer.body.rejected], [[undefined], [{ card: cards[0]!.id, reason: "卡片模板 example/note 不属于这条规则用到的插件，卡片没带它" }]]);
  } finally {
    await f.close();
  }
});
