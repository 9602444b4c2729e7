/**
 * Declarative plugins' panels and cards over /v1 (issue 18): `GET /v1/plugins/:id/ui` answers the panels and card
 * templates as loaded; `POST /v1/plugins/:id/events` turns a panel's button or form into an event from source
 * `plugin:<id>` (type `action.<id>` / `form.<id>`) that a rule routes to a run — the same id twice is one event, a
 * form's values are checked against its fields, every refusal names the field and posts nothing; the console's cookie
 * works only with the console's Origin. Every answer is checked against the published shape.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { baseRules, hubFixture } from "./helpers.js";
import { copyExample, editJson, routedEvents } from "./declarative-helpers.js";
import { parseRules } from "../src/protocol/rules-file.js";

const rules = {
  ...baseRules,
  // The base rule uses the example plugin's prompt: its runs' cards may show that plugin's card templates.
  rules: [
    ...baseRules.rules.map((r) => ({ ...r, promptRef: "example/writer" })),
    { name: "panel", when: { source: "plugin:example", types: ["action.*", "form.*"] }, to: "bot", cwd: "/tmp", prompt: "the owner pressed something" },
  ],
};

test("a panel's button and form become events from plugin:<id> that a rule routes; the ui as loaded", async () => {
  const f = await hubFixture(rules);
  try {
    const dir = copyExample(f.home.plugins);
    editJson(dir, "panels/main.json", (p) => ({
      ...p,
      body: [...p.body, { type: "form", id: "every", fields: [
        { name: "n", label: "N", type: "number" }, { name: "ok", label: "OK", type: "checkbox" },
        { name: "pick", label: "Pick", type: "select", options: ["a", "b"] }, { name: "notes", label: "Notes", type: "textarea" },
      ] }],
    }));
    assert.equal((await f.call("POST", "/v1/plugins/reload", f.keys.owner)).status, 200);

    const ui = await f.call("GET", "/v1/plugins/example/ui", f.keys.owner);
    assert.equal(ui.status, 200);
    assert.deepEqual([ui.body.plugin, ui.body.name, ui.body.panels.map((p: { id: string }) => p.id)], ["example", "Example", ["main"]]);
    assert.deepEqual(ui.body.cards, [{ name: "note", kind: "note", title: "A note", data: [
      { type: "markdown", markdown: "A note from the example plugin." },
      { type: "actions", actions: [{ id: "ack", label: "Got it" }] },
    ] }]);
    assert.equal(ui.body.panels[0].body[0].type, "markdown");
    assert.deepEqual((await f.call("GET", "/v1/plugins/nope/ui", f.keys.owner)).body, { error: "no such declarative plugin loaded: nope" });

    const pressed = await f.call("POST", "/v1/plugins/example/events", f.keys.owner, { id: "press-1", panel: "main", action: "refresh" });
    assert.deepEqual(pressed, { status: 200, body: { event: pressed.body.event, duplicate: false, routed: ["panel"], paused: [] } });
    const again = await f.call("POST", "/v1/plugins/example/events", f.keys.owner, { id: "press-1", panel: "main", action: "refresh" });
    assert.deepEqual(again.body, { event: pressed.body.event, duplicate: true, routed: ["panel"], paused: [] });
    // Inside a section, with its values checked and normalised (an empty optional value left out).
    const asked = await f.call("POST", "/v1/plugins/example/events", f.keys.owner, { panel: "main", form: "ask", values: { topic: "Q3 report" } });
    assert.equal(asked.status, 200);
    const every = await f.call("POST", "/v1/plugins/example/events", f.keys.owner, { panel: "main", form: "every", values: { n: 2.5, ok: false, pick: "b", notes: "line one\nline two" } });
    assert.equal(every.status, 200);
    const card = await f.call("POST", "/v1/plugins/example/events", f.keys.owner, { card: "note", action: "ack" });
    assert.equal(card.status, 200);

    // Each event routed to a run of rule `panel`, whose context holds it as from source plugin:example, with the
    // form's values as its detail.
    const seen = await routedEvents(f, "panel");
    assert.deepEqual(seen, [
      ["plugin:example", "action.ack", "card/note", "Got it", null],
      ["plugin:example", "action.refresh", "panel/main", "Refresh", null],
      ["plugin:example", "form.ask", "panel/main", "Ask for a report", '{"topic":"Q3 report"}'],
      ["plugin:example", "form.every", "panel/main", "every", '{"n":2.5,"ok":false,"pick":"b","notes":"line one\\nline two"}'],
    ]);
  } finally {
    await f.close();
  }
});

test("every refusal of a plugin event names the field and posts nothing", async () => {
  const f = await hubFixture(rules);
  try {
    copyExample(f.home.plugins);
    await f.call("POST", "/v1/plugins/reload", f.keys.owner);
    const seq = f.seq();
    const post = (body: unknown, key: string | null = f.keys.owner, plugin = "example") => f.call("POST", `/v1/plugins/${plugin}/events`, key, body);
    const cases: [unknown, number, string][] = [
      [{ action: "refresh" }, 400, "panel or card: one of them is required"],
      [{ panel: "main", card: "note", action: "refresh" }, 400, "give panel or card, not both"],
      [{ panel: "main" }, 400, "action or form: one of them is required"],
      [{ panel: "main", action: "refresh", form: "ask" }, 400, "give action or form, not both"],
      [{ panel: "nope", action: "refresh" }, 404, "plugin example has no panel nope"],
      [{ card: "main", action: "refresh" }, 404, "plugin example has no card main"],
      [{ panel: "main", action: "ack" }, 404, "panel/main has no action ack"],
      [{ panel: "main", form: "refresh" }, 404, "panel/main has no form refresh"],
      [{ panel: "main", action: "refresh", values: {} }, 400, "values: unknown field"],
      [{ panel: "main", form: "ask" }, 400, "values.topic: required"],
      [{ panel: "main", form: "ask", values: { topic: "" } }, 400, "values.topic: required"],
      [{ panel: "main", form: "ask", values: { topic: "x", extra: 1 } }, 400, "values.extra: unknown field"],
      [{ panel: "main", form: "ask", values: { topic: 3 } }, 400, "values.topic: must be string"],
      [{ panel: "main", form: "ask", values: { topic: "two\nlines" } }, 400, "values.topic: wrong format, expected one line, no control characters"],
      [{ panel: "main", form: "ask", values: { topic: "a\u202eb" } }, 400, "values.topic: wrong format, expected no control characters except line breaks and tabs"],
      [{ panel: "main", form: "ask", values: { topic: "a\u2028b" } }, 400, "values.topic: wrong format, expected one line, no control characters"],
      [{ panel: "main", form: "ask", values: { topic: "x".repeat(4001) } }, 400, "values.topic: at most 4000 characters"],
      [{ panel: "main", action: "refresh", hops: 1 }, 400, "hops: unknown field"],
      [{ panel: "../main", action: "refresh" }, 400, "panel: wrong format, expected letters, digits, _ and -"],
    ];
    for (const [body, status, error] of cases) assert.deepEqual(await post(body), { status, body: { error } }, JSON.stringify(body));
    assert.deepEqual(await post({ panel: "main", action: "refresh" }, f.keys.owner, "nope"), { status: 404, body: { error: "no such declarative plugin loaded: nope" } });
    assert.equal((await post({ panel: "main", action: "refresh" }, null)).status, 401);
    assert.equal((await post({ panel: "main", action: "refresh" }, f.keys.source)).status, 403);
    assert.equal(f.seq(), seq, "nothing written");
  } finally {
    await f.close();
  }
});

test("the console's cookie presses a button only from the console's own Origin, with the console page's secret", async () => {
  const f = await hubFixture(rules);
  try {
    copyExample(f.home.plugins);
    await f.call("POST", "/v1/plugins/reload", f.keys.owner);
    const token = /#sign-in=(.+)$/.exec((await f.call("POST", "/v1/console/sign-in", f.keys.owner)).body.link)![1]!;
    const signed = await fetch(`${f.url}/console/session`, { method: "POST", headers: { origin: f.url, "content-type": "application/json" }, body: JSON.stringify({ token }) });
    const cookie = signed.headers.get("set-cookie")!.split(";")[0]!;
    const { page } = (await signed.json()) as { page: string };
    const press = (origin: string | null, secret: string | null = page) => fetch(`${f.url}/v1/plugins/example/events`, {
      method: "POST", headers: { cookie, "content-type": "application/json", ...(origin ? { origin } : {}), ...(secret ? { "x-aa-console": secret } : {}) }, body: JSON.stringify({ panel: "main", action: "refresh" }),
    });
    const seq = f.seq();
    for (const o of [null, "http://evil.example", f.url.replace("127.0.0.1", "localhost")]) {
      const r = await press(o);
      assert.equal(r.status, 403, String(o));
    }
    // The cookie replayed by a program with the right Origin but without the page secret (issue 26 round 32, F32b-1).
    assert.equal((await press(f.url, null)).status, 403);
    assert.equal(f.seq(), seq);
    assert.equal((await press(f.url)).status, 200);
    const ui = await fetch(`${f.url}/v1/plugins/example/ui`, { headers: { cookie } });
    assert.equal(ui.status, 200);
  } finally {
    await f.close();
  }
});

test("rules.json: a rule may name source plugin:<id> without declaring it; anything else undeclared is refused; no source is named so", () => {
  const parse = (source: string, sources: Record<string, unknown> = {}) => {
    const r = parseRules(JSON.stringify({ sources, agents: { bot: { worker: "w1", use: "command", command: ["true"] } }, rules: [{ name: "r", when: { source }, to: "bot" }] }), { timezone: "UTC" });
    return r.ok ? r.rules.rules[0]!.source : r.error;
  };
  assert.equal(parse("plugin:example"), "plugin:example");
  assert.equal(parse("plugin:my-plugin-2"), "plugin:my-plugin-2");
  for (const s of ["plugin:", "plugin:Example", "plugin:-x", "plugin:a_b", "plugins:x", "plugin:a/b"]) {
    assert.match(String(parse(s)), /^rules\[0\]\.when\.source: /, s);
  }
  assert.match(String(parse("shop", { "plugin:x": {} })), /^sources\.plugin:x: /, "a declared source cannot take the name");
});

test("a receipt's ask or notice may name a card template <plugin>/<template>: kept on the card for every view; a malformed name refuses the receipt", async () => {
  const f = await hubFixture(rules);
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "t1", type: "alert.x", subject: "s1" });
    const job = (await f.call("GET", "/v1/work?claim=t1", f.keys.worker)).body.job;
    const bad = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: "Q", options: ["a"], card: "Example/note" }] });
    assert.deepEqual([bad.status, bad.body.error], [400, "ask[0].card: wrong format, expected <plugin id>/<card template>"]);
    const good = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: "Q", options: ["a"], card: "example/note" }], notice: [{ title: "N" }] });
    assert.equal(good.status, 200);
    const cards = (await f.state()).cards;
    assert.deepEqual(cards.map((c) => [c.title, c.template ?? null]).sort(), [["N", null], ["Q", "example/note"]]);
    assert.equal("template" in cards.find((c) => c.title === "N")!, false, "absent, not null, on a card without one");
    copyExample(f.home.plugins);
    assert.equal((await f.call("POST", "/v1/plugins/reload", f.keys.owner)).status, 200);
    const offered = (await f.call("GET", "/v1/cards/next?wait=0", f.keys.channel)).body.card;
    assert.equal(offered?.template ?? null, offered?.title === "Q" ? "example/note" : null);
    // A channel gets the template as loaded now (it holds no owner key to read GET /v1/plugins/:id/ui).
    assert.deepEqual(offered?.templateUi ?? null, offered?.title === "Q"
      ? { title: "A note", data: [{ type: "markdown", markdown: "A note from the example plugin." }, { type: "actions", actions: [{ id: "ack", label: "Got it" }] }] }
      : null);
  } finally {
    await f.close();
  }
});
