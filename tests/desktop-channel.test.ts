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
