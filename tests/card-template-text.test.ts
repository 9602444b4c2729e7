/**
 * The text projection of a card template (SDK `templateLines` through `cardText`; issue 18): the exact lines every
 * text channel shows, and where a template's buttons and forms work.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cardText, templateLines, markdownLines, chartLine, type Card } from "../src/sdk/index.js";
import { everyNode } from "./declarative-helpers.js";

const base: Card = {
  id: 7, version: 1, ref: null, kind: "ask", fyi: false, state: "open", title: "Ship 1.2?", text: "Tests pass.", options: ["yes", "no"],
  recommend: 0, choice: null, answer: null, by: null, result: null, link: null, rule: "release", at: "2026-12-02T00:00:00.000Z",
};

test("templateLines: every node of the vocabulary as exact lines (markdown as text, links only http(s), a chart as a few numbers)", () => {
  assert.deepEqual(templateLines(everyNode, "en"), [
    "Release",
    "Notes",
    "Ship today, see the plan (https://example.com/plan) or this).", // the link ends at the first ")", as in the console
    "• one",
    "• two",
    "code x",
    "<b>raw</b>",
    "Status",
    "Build",
    "version: 1.2",
    "green: true",
    "tests: 412",
    "Left",
    "• docs",
    "• tag",
    "Document: Changelog (art_1)",
    "Document: art_2",
    "Runs: a 1 · b 2 · c 3 · d 4 · e 5 · f 6 · …",
    "Form: Why not (Reason, Count)",
    "[Ship it] [Hold]",
  ]);
  assert.deepEqual(templateLines({ title: null, data: [{ type: "gauge" }, null] }, "zh"), ["（未知节点 gauge）", "（未知节点 ）"]);
  assert.deepEqual(markdownLines("[x](data:text/html,hi) [y](http://a.example/)"), ["x y (http://a.example/)"]);
  assert.equal(chartLine(undefined, ["x"], []), "x");
});

test("cardText: the template between the text and the options, where its buttons and forms work, then the card's page", () => {
  const ui = { title: null, data: [{ type: "list", items: ["a"] }, { type: "actions", actions: [{ id: "go", label: "Go" }] }] };
  assert.equal(cardText({ ...base, template: "p/t", templateUi: ui, link: "https://hub.example/c/7/tok" }, "en"), [
    "Ship 1.2? · release", "Tests pass.", "• a", "[Go]", "0. yes (recommended)", "1. no",
    "This card's buttons and forms work in the owner's console (Needs you); a link or a chat message answers the card's own options only", "Answer here: https://hub.example/c/7/tok",
  ].join("\n"));
  // An fyi notice with controls still links its page; without a link a text channel names the command as before.
  assert.equal(cardText({ ...base, kind: "notice", fyi: true, options: [], recommend: null, text: "", template: "p/t", templateUi: ui, link: "https://h/c/7/t" }, "en"),
    "[FYI] Ship 1.2? · release\n• a\n[Go]\nThis card's buttons and forms work in the owner's console (Needs you); a link or a chat message answers the card's own options only\nAnswer here: https://h/c/7/t");
  assert.equal(cardText({ ...base, template: "p/t", templateUi: { title: "T", data: [{ type: "markdown", markdown: "read" }] } }, "en"),
    "Ship 1.2? · release\nTests pass.\nT\nread\n0. yes (recommended)\n1. no\nAnswer: agent-autoloop answer 7 <0-1>");
  // A template that is not loaded is said so; the card's own title, text and options stay.
  assert.equal(cardText({ ...base, options: [], recommend: null, template: "gone/t" }, "zh"),
    "Ship 1.2? · release\nTests pass.\n卡片模板 gone/t 未加载\n回答：agent-autoloop answer 7 0");
  // The channel's markup escaping applies to every template line.
  assert.equal(cardText({ ...base, text: "", options: [], recommend: null, templateUi: { title: "<!channel>", data: [] } }, "en", { literal: (s) => s.replace(/</g, "&lt;") }),
    "Ship 1.2? · release\n&lt;!channel>\nAnswer: agent-autoloop answer 7 0");
});

test("the file channel writes a card's template lines after its text", async () => {
  const { renderCard } = await import("../plugins/file/channel.js");
  const out = renderCard({ ...base, options: [], recommend: null, kind: "notice", templateUi: { title: "T", data: [{ type: "kv", kv: [["k", 1]] }] } });
  assert.deepEqual(out.split("\n").slice(1, 5), ["Ship 1.2?", "Tests pass.", "T", "k: 1"]);
  // Issue 26 round 57, F57a-1 (reported case): a carriage return that ends no line is written out; `cat` showed only
  // "OK: routine weekly note" of the draft. A line's own \r\n stays.
  const cr = renderCard({ ...base, text: "Please wire $5000 to mallory\rOK: routine weekly note\r\nend" });
  assert.deepEqual(cr.split("\n").slice(2, 4), ["Please wire $5000 to mallory\\rOK: routine weekly note\r", "end"]);
});
