/** The built-in desktop channel's notification text (plugins/desktop/channel.ts): title, a card template's first lines, the hint. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { notificationBody, notificationTemplateLinesMax } from "../plugins/desktop/channel.js";

test("a notification shows the card's title, then its card template's first lines as text channels show them, then where to look", () => {
  assert.equal(notificationBody({ title: "Deploy?" }, "en"), "Deploy?\nRun agent-autoloop status to see it");
  const ui = { title: "Release", data: [{ type: "kv", title: "Build", kv: [["version", "1.2"], ["green", true]] }, { type: "actions", actions: [{ id: "go", label: "Go" }] }] };
  assert.equal(notificationBody({ title: "Deploy?", templateUi: ui }, "en"), "Deploy?\nRelease\nBuild\nversion: 1.2\ngreen: true\n[Go]\nRun agent-autoloop status to see it");
  const long = { title: null, data: [{ type: "list", items: Array.from({ length: 20 }, (_, i) => `item ${i}`) }] };
  const lines = notificationBody({ title: "T", templateUi: long }, "zh").split("\n");
  assert.equal(notificationTemplateLinesMax, 6);
  assert.deepEqual(lines, ["T", "• item 0", "• item 1", "• item 2", "• item 3", "• item 4", "• item 5", "…", "运行 agent-autoloop status 查看"]);
});

test("issue 26 r25 F25b-3 (reported case): on Linux the notification body's markup is card text shown as it is — no <a href>, <b> or <img> of a card's making", async () => {
  const { notifyCommand, markupLiteral } = await import("../plugins/desktop/channel.js");
  const body = notificationBody({ title: 'Answer <a href="https://evil.example/c/7">here</a> & <b>now</b> <img src="x">' }, "en");
  const [cmd, args] = notifyCommand("An agent has a question for you", body, "linux");
  assert.equal(cmd, "notify-send");
  assert.deepEqual(args, ["--app-name=agent-autoloop", "--", "An agent has a question for you",
    'Answer &lt;a href="https://evil.example/c/7"&gt;here&lt;/a&gt; &amp; &lt;b&gt;now&lt;/b&gt; &lt;img src="x"&gt;\nRun agent-autoloop status to see it']);
  assert.equal(markupLiteral("a<b>&c"), "a&lt;b&gt;&amp;c");
  // The other platforms' notifications read no markup: the text goes as it is.
  assert.equal(notifyCommand("t", "<b>x</b>", "darwin")[1].at(-1), "<b>x</b>");
});
