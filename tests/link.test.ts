/** Card link pages (protocol.md 通道: links): a plain form, answerable once, 7 days, token never stored. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { hubFixture, baseRules } from "./helpers.js";
import { Clock, K } from "./clock.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { copyExample, editJson, everyNode, routedEvents } from "./declarative-helpers.js";

// The rule uses the example plugin's prompt: its runs' cards may show that plugin's card templates (rules.ts templateTied).
const rules = { ...baseRules, rules: baseRules.rules.map((r) => ({ ...r, promptRef: "example/writer" })), channels: { ch1: { name: "Text only", links: true } } };

test("a links channel gets a link; the page shows the card with buttons and no script; the first answer wins", async () => {
  const f = await hubFixture(rules);
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "l1", type: "alert.x" });
    const job = (await f.call("GET", "/v1/work?claim=l", f.keys.worker)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: "Roll back <v2>?", text: "errors & timeouts", options: ["yes", "no"], recommend: 1 }] });
    const card = (await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card;
    assert.match(card.link, new RegExp(`^${f.url}/c/1/[A-Za-z0-9_-]{43}$`));
    const page = await fetch(card.link);
    const html = await page.text();
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-security-policy")!, /default-src 'none'/);
    assert.match(html, /<h1>Roll back &lt;v2&gt;\?<\/h1>/);
    assert.match(html, /<pre>errors &amp; timeouts<\/pre>/);
    assert.match(html, /<button name="choice" value="0">yes<\/button><button name="choice" value="1">no \(recommended\)<\/button>/);
    assert.doesNotMatch(html, /<script/i);
    const post = await fetch(card.link, { method: "POST", body: new URLSearchParams({ choice: "1" }), redirect: "manual" });
    assert.equal(post.status, 303);
    const after = await (await fetch(card.link)).text();
    assert.match(after, /<strong>Answer:<\/strong> no \(link\)/);
    assert.doesNotMatch(after, /<form/);
    const again = await fetch(card.link, { method: "POST", body: new URLSearchParams({ choice: "0" }), redirect: "manual" });
    assert.equal(again.status, 409);
    assert.match(await again.text(), /this card was already answered/);
    const wrong = await fetch(card.link.replace(/.$/, (ch: string) => (ch === "A" ? "B" : "A")));
    assert.equal(wrong.status, 404);
    assert.doesNotMatch(await wrong.text(), /Roll back/);
    const st = (await f.call("GET", "/v1/state", f.keys.owner)).body;
    assert.equal(st.cards[0].by, "link");
    assert.equal(st.cards[0].choice, 1);
  } finally {
    await f.close();
  }
});

test("a publicUrl with a trailing slash still gives working links", async () => {
  const f = await hubFixture(rules);
  try {
    f.running.hub.setPublicUrl(f.url + "/");
    await f.call("POST", "/v1/events", f.keys.source, { id: "s1", type: "alert.x" });
    const job = (await f.call("GET", "/v1/work?claim=s", f.keys.worker)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: "Q", options: ["a"] }] });
    const card = (await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card;
    assert.match(card.link, new RegExp(`^${f.url}/c/1/`));
    assert.equal((await fetch(card.link)).status, 200);
  } finally {
    await f.close();
  }
});

test("after 7 days the link no longer shows the card or takes an answer", () => {
  const k = new Clock(rules, "2026-11-02T08:00:00Z");
  k.event("e1");
  const job = k.claim("c1").job!;
  k.result(job.run, { outcome: "done", ask: [{ title: "Secret question", options: ["a"] }] });
  k.env.publicUrl = "http://h";
  const token = k.nextCard()!.link!.split("/").pop()!;
  assert.equal(k.linkPage(1, token, k.now + 7 * 86_400_000).status, 200);
  const late = k.linkPage(1, token, k.now + 7 * 86_400_000 + 1);
  assert.equal(late.status, 410);
  assert.doesNotMatch(late.html, /Secret question/);
  k.now += 8 * 86_400_000;
  const r = k.commit({ kind: "linkAnswer", card: 1, token, choice: 0, text: null });
  assert.deepEqual([r.status, r.body], [410, { error: "This link has expired (links last 7 days from the card's creation)" }]);
  k.close();
});

test("an answer over the limit is refused with the limit named, never cut, and nothing is recorded", async () => {
  const f = await hubFixture(rules);
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "long1", type: "alert.x" });
    const job = (await f.call("GET", "/v1/work?claim=long", f.keys.worker)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: "Why?", options: ["a"] }] });
    const card = (await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card;
    const seq = f.seq();
    const refused = await fetch(card.link, { method: "POST", body: new URLSearchParams({ text: "x".repeat(4001) }), redirect: "manual" });
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /<body><p><strong>text: at most 4000 characters<\/strong><\/p>/);
    assert.equal(f.seq(), seq, "nothing recorded");
    const page = await (await fetch(card.link)).text();
    assert.match(page, /<textarea name="text" rows="3" maxlength="4000" required aria-label="Answer with these words">/);
    const longest = await fetch(card.link, { method: "POST", body: new URLSearchParams({ text: "😀".repeat(4000) }), redirect: "manual" });
    assert.equal(longest.status, 303, "4000 code points are taken whole");
    assert.equal((await f.call("GET", "/v1/state", f.keys.owner)).body.cards[0].answer, "😀".repeat(4000));
  } finally {
    await f.close();
  }
});

test("a card with a card template: the link page renders it whole on the server, escaped, its buttons shown disabled with where they work", async () => {
  const f = await hubFixture(rules);
  try {
    copyExample(f.home.plugins);
    assert.equal((await f.call("POST", "/v1/plugins/reload", f.keys.owner)).status, 200);
    await f.call("POST", "/v1/events", f.keys.source, { id: "l9", type: "alert.x" });
    const job = (await f.call("GET", "/v1/work?claim=l9", f.keys.worker)).body.job;
    const answer = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: "Note?", options: ["yes"], card: "example/note" }, { title: "Gone?", options: ["ok"], card: "example/ghost" }, { title: "Other's?", options: ["ok"], card: "nobody/note" }] });
    // A plugin the rule does not use: the card is made without its template (issue 26 round 35, F35b-1).
    const others = (await f.state()).cards.find((c) => c.title === "Other's?")!;
    assert.deepEqual([others.template, answer.body.rejected], [undefined, [{ card: others.id, reason: "卡片模板 nobody/note 不属于这条规则用到的插件，卡片没带它" }]]);
    const cards = [(await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card];
    await f.call("POST", `/v1/cards/${cards[0].id}/delivered`, f.keys.channel, { version: cards[0].version, ref: "m1" });
    cards.push((await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card);
    const note = cards.find((c) => c.title === "Note?");
    const gone = cards.find((c) => c.title === "Gone?");
    const html = await (await fetch(note.link)).text();
    assert.ok(html.includes(`<div class="template"><h2 dir="auto">A note</h2>
<div class="md" dir="auto"><p>A note from the example plugin.</p></div>
<p><button type="button" disabled><bdi dir="auto">Got it</bdi></button></p>
<p class="muted">This card&#39;s buttons and forms work in the owner&#39;s console (Needs you); a link or a chat message answers the card&#39;s own options only</p></div>`), html);
    assert.doesNotMatch(html, /nonce|\/act"/);
    assert.match(html, /<button name="choice" value="0">yes<\/button>/, "the card's own answers stay");
    assert.doesNotMatch(html, /<script/i);
    assert.match(await (await fetch(gone.link)).text(), /<p class="muted">Card template example\/ghost is not loaded<\/p>/);
  } finally {
    await f.close();
  }
});

test("templateHtml: every node of the vocabulary, every text escaped, direction controls shown, links only http(s)", async () => {
  const { templateHtml } = await import("../src/host/template-html.js");
  assert.equal(templateHtml({ title: "Re\u202elease <b>", data: everyNode.data as never }, "en"), [
    `<div class="template"><h2 dir="auto">Re⟦U+202E⟧lease &lt;b&gt;</h2>`,
    `<div class="md" dir="auto"><h3>Notes</h3><p>Ship <strong>today</strong>, see <a href="https://example.com/plan" rel="noopener noreferrer nofollow">the plan</a> or this).</p><ul><li>one</li><li>two</li></ul><pre><code>code \`x\`</code></pre><p>&lt;b&gt;raw&lt;/b&gt;</p></div>`,
    `<section><h3 dir="auto">Status</h3><div><h4 dir="auto">Build</h4><dl><div><dt dir="auto">version</dt><dd dir="auto">1.2</dd></div><div><dt dir="auto">green</dt><dd dir="auto">true</dd></div><div><dt dir="auto">tests</dt><dd dir="auto">412</dd></div></dl></div><div><h4 dir="auto">Left</h4><ul><li dir="auto">docs</li><li dir="auto">tag</li></ul></div></section>`,
    `<p>Document <bdi dir="auto">Changelog</bdi> <code>art_1</code></p>`,
    `<p>Document <bdi dir="auto">art_2</bdi></p>`,
    `<table><caption><bdi dir="auto">Runs</bdi></caption><tbody>${["a", "b", "c", "d", "e", "f", "g"].map((l, i) => `<tr><th scope="row"><bdi dir="auto">${l}</bdi></th><td>${i + 1}</td></tr>`).join("")}</tbody></table>`,
    `<fieldset disabled><legend><bdi dir="auto">Why not</bdi></legend><p><label for="f1-reason"><bdi dir="auto">Reason</bdi></label><input type="text" id="f1-reason" disabled value=""></p><p><label for="f1-n"><bdi dir="auto">Count</bdi></label><input type="number" id="f1-n" disabled value=""></p><button type="button" disabled><bdi dir="auto">Submit</bdi></button></fieldset>`,
    `<p><button type="button" disabled><bdi dir="auto">Ship it</bdi></button><button type="button" disabled><bdi dir="auto">Hold</bdi></button></p>`,
    `<p class="muted">This card&#39;s buttons and forms work in the owner&#39;s console (Needs you); a link or a chat message answers the card&#39;s own options only</p></div>`,
  ].join("\n"));
  assert.equal(templateHtml({ title: null, data: [{ type: "markdown", markdown: "[x](javascript:alert%281%29) \"q\" & <i>" }] }, "zh"),
    `<div class="template">\n<div class="md" dir="auto"><p>x &quot;q&quot; &amp; &lt;i&gt;</p></div></div>`);
  // Another port or scheme of the page's own host name stays text (the browser sends the console's cookie there: issue
  // 26 round 32, F32b-1); the page's own origin and other host names are links.
  const links = "[a](http://127.0.0.1:3001/why) [b](https://127.0.0.1:8787/) [c](http://127.0.0.1:8787/console/) [d](http://localhost:3001/)";
  assert.equal(templateHtml({ title: null, data: [{ type: "markdown", markdown: links }] }, "en", "http://127.0.0.1:8787"),
    `<div class="template">\n<div class="md" dir="auto"><p>a b <a href="http://127.0.0.1:8787/console/" rel="noopener noreferrer nofollow">c</a> <a href="http://localhost:3001/" rel="noopener noreferrer nofollow">d</a></p></div></div>`);
});

test("a card's link answers that card only: a press of its template's buttons or forms posted to its page is refused and records nothing; the owner's console press starts the run (issue 26, finding 16)", async () => {
  // The reported case: the link page pressed a card's plugin buttons and started runs, so a link forwarded into a
  // group chat could start runs. Varied: a button and a form, with and without the nonce the page once carried, a
  // card without a template, a wrong link (its own refusal first); the link still answers its card.
  const f = await hubFixture({
    ...rules,
    rules: [...rules.rules, { name: "pressed", when: { source: "plugin:example", types: ["action.*", "form.*"] }, to: "bot", cwd: "/tmp", prompt: "pressed" }],
  });
  try {
    const dir = copyExample(f.home.plugins);
    writeFileSync(join(dir, "cards", "poll.json"), JSON.stringify({
      kind: "poll", title: "Poll",
      data: [
        { type: "form", id: "vote", title: "Vote", submit: "Vote", fields: [{ name: "pick", label: "Pick", type: "select", options: ["a", "b"], required: true }] },
        { type: "actions", actions: [{ id: "ack", label: "Got it" }] },
      ],
    }));
    editJson(dir, "plugin.json", (m) => ({ ...m, provides: { ...m.provides, cards: [...m.provides.cards, "poll"] } }));
    assert.deepEqual((await f.call("POST", "/v1/plugins/reload", f.keys.owner)).body.rejected, []);
    await f.call("POST", "/v1/events", f.keys.source, { id: "p1", type: "alert.x" });
    const job = (await f.call("GET", "/v1/work?claim=p1", f.keys.worker)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: "Poll?", options: ["done"], card: "example/poll" }, { title: "Plain?", options: ["ok"] }] });
    const card = (await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card;
    await f.call("POST", `/v1/cards/${card.id}/delivered`, f.keys.channel, { version: card.version, ref: "m1" });
    const plain = (await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card;
    const html = await (await fetch(card.link)).text();
    assert.ok(html.includes(`<fieldset disabled><legend><bdi dir="auto">Vote</bdi></legend>`), html);
    assert.ok(html.includes(`<p><button type="button" disabled><bdi dir="auto">Got it</bdi></button></p>`), html);
    assert.doesNotMatch(html, /<form method="post" action="[^"]*\/act"/);
    const post = (body: Record<string, string>, url: string) => fetch(url, { method: "POST", body: new URLSearchParams(body), redirect: "manual" });
    const seq = f.seq();
    const refusal = "This link answers its card only: the card&#39;s buttons and forms work in the owner&#39;s console \\(Needs you\\)";
    const presses: [Record<string, string>, string][] = [
      [{ nonce: "A".repeat(22), action: "ack" }, `${card.link}/act`],
      [{ action: "ack" }, `${card.link}/act`],
      [{ nonce: "A".repeat(22), form: "vote", "v.pick": "b" }, `${card.link}/act`],
      [{ action: "ack" }, `${plain.link}/act`],
    ];
    for (const [body, url] of presses) {
      const r = await post(body, url);
      assert.equal(r.status, 403, url);
      assert.match(await r.text(), new RegExp(`<body><p><strong>${refusal}</strong></p>`));
    }
    assert.equal((await post({ action: "ack" }, `${card.link}x/act`)).status, 404, "a wrong link: its own refusal");
    assert.equal(f.seq(), seq, "nothing recorded");
    assert.deepEqual(await routedEvents(f, "pressed"), []);
    // The owner's press in the console (Needs you) is what posts the template's events and starts the rule's runs.
    const pressed = await f.call("POST", "/v1/plugins/example/events", f.keys.owner, { card: "poll", action: "ack" });
    assert.equal(pressed.status, 200, JSON.stringify(pressed.body));
    assert.deepEqual(await routedEvents(f, "pressed"), [["plugin:example", "action.ack", "card/poll", "Got it", null]]);
    // The link still answers its own card.
    assert.equal((await post({ choice: "0" }, card.link)).status, 303);
    const s = await f.state();
    assert.equal([...s.cards, ...s.recentCards].find((c) => c.id === card.id)?.choice, 0);
  } finally {
    await f.close();
  }
});

test("the link page's language is the reader's: Accept-Language's best Chinese or English tag, else the hub's (issue 30)", async () => {
  const { langOfAcceptLanguage } = await import("../src/host/accept-language.js");
  const cases: [string | undefined, "zh" | "en", "zh" | "en"][] = [
    [undefined, "en", "en"], ["", "zh", "zh"], ["zh-CN,zh;q=0.9,en;q=0.8", "en", "zh"], ["en-US,en;q=0.9,zh-CN;q=0.8", "zh", "en"],
    ["fr-FR,fr;q=0.9", "zh", "zh"], ["fr;q=1, en;q=0.5, zh;q=0.7", "en", "zh"], ["ZH-tw", "en", "zh"], ["zh;q=0, en", "zh", "en"],
    ["zh;q=abc, en;q=2", "en", "en"], ["english, zhx", "zh", "zh"], [Array.from({ length: 40 }, () => "fr").join(",") + ",en", "zh", "zh"],
  ];
  for (const [header, fallback, want] of cases) assert.equal(langOfAcceptLanguage(header, fallback), want, String(header));
});

test("issue 26 r26 F26b-3, F26b-4 (reported cases): a card link cannot close a worker's own warning, nor answer a card sent to a channel that names who answers (a tool approval's once or deny still can: tests of round 18)", async () => {
  const f = await hubFixture({ ...rules, channels: { ch1: { name: "Text only", links: true }, chat: { name: "Chat", links: true, answerers: ["U_OWNER"] } } });
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "w1", type: "alert.x" });
    const job = (await f.call("GET", "/v1/work?claim=w", f.keys.worker)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, {
      outcome: "done", workerNotice: [{ title: "The agent wrote files your git would run", text: "/p/.git: a repository the agent made" }], ask: [{ title: "Ship?", options: ["yes", "no"] }],
    });
    const links = new Map<string, string>();
    for (let card; (card = (await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card); ) {
      links.set(card.title, card.link);
      await f.call("POST", `/v1/cards/${card.id}/delivered`, f.keys.channel, { version: card.version, ref: `m${card.id}` });
    }
    const warning = links.get("The agent wrote files your git would run")!;
    const post = await fetch(warning, { method: "POST", body: new URLSearchParams({ choice: "0" }), redirect: "manual" });
    assert.equal(post.status, 403);
    assert.match(await post.text(), /this is one of the hub&#39;s own cards: a card link cannot answer it; answer in the console or with the CLI/);
    const page = await (await fetch(warning)).text();
    assert.match(page, /a card link cannot answer it/);
    assert.doesNotMatch(page, /<form|<button/);
    const st = (await f.call("GET", "/v1/state", f.keys.owner)).body;
    assert.deepEqual(st.cards.map((c: { title: string; state: string; system: string | null }) => [c.title, c.state]), [["The agent wrote files your git would run", "open"], ["Ship?", "open"]]);
    // The ask goes to both channels, one of which names who answers: its link is not the way to answer it.
    const ship = await fetch(links.get("Ship?")!, { method: "POST", body: new URLSearchParams({ choice: "0" }), redirect: "manual" });
    assert.equal(ship.status, 403);
    assert.match(await ship.text(), /this card&#39;s channel names who may answer it: answer in the chat as one of them, in the console or with the CLI/);
  } finally {
    await f.close();
  }
});
