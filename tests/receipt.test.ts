import { test } from "node:test";
import assert from "node:assert/strict";
import { readMessage } from "../src/worker/receipt.js";
import { substitute } from "../src/sdk/index.js";
import { buildPrompt } from "../src/worker/prompt.js";
import { childEnv } from "../src/worker/env.js";
import type { AgentPlugin } from "../src/sdk/index.js";

const block = (lang: string, body: string) => "```" + lang + "\n" + body + "\n```";

test("first-line markers, in Chinese and English", () => {
  const cases: [string, string, string | null, boolean][] = [
    ["没跑成：网络断了", "failed", "网络断了", false],
    ["Not run: the API answered 503", "failed", "the API answered 503", false],
    ["not run:timeout", "failed", "timeout", false],
    ["待你处理：需要登录", "done", null, true],
    ["Needs you: log in again", "done", null, true],
    ["没事可做：没有新反馈", "nothing", null, false],
    ["Nothing to do: no new issues", "nothing", null, false],
    ["Fixed the typo and opened a PR.", "done", null, false],
    ["\n\n  Trailing blank lines first\n", "done", null, false],
  ];
  for (const [text, outcome, error, needsYou] of cases) {
    const m = readMessage(text);
    assert.equal(m.outcome, outcome, text);
    assert.equal(m.error, error, text);
    assert.equal(m.needsYou, needsYou, text);
    assert.equal(m.receiptError === null, !needsYou, "a call for the owner without an ask is a receipt error (below)");
    assert.deepEqual(m.receipt, {});
  }
  assert.equal(readMessage("\n\n  Trailing blank lines first\n").summary, "Trailing blank lines first");
});

test("the last agent-autoloop block is the receipt", () => {
  const text = [
    "Asked the owner.",
    block("agent-autoloop", '{"notice":[{"title":"old"}]}'),
    "some words",
    block("json", '{"unrelated": true}'),
    block("agent-autoloop", '{"ask":[{"title":"Go?","options":["yes","no"],"recommend":1}],"later":[{"key":"k","cancel":true}]}'),
  ].join("\n");
  const m = readMessage(text);
  assert.equal(m.receiptError, null);
  assert.deepEqual(m.receipt, { ask: [{ title: "Go?", options: ["yes", "no"], recommend: 1 }], later: [{ key: "k", cancel: true }] });
});

test("a receipt in a json block is mislabeled; an ordinary json block is not a receipt", () => {
  const mislabeled = readMessage("Done.\n" + block("json", '{"ask":[{"title":"t","options":["a"]}]}'));
  assert.match(mislabeled.receiptError ?? "", /must be in an ```agent-autoloop block/);
  const ordinary = readMessage("Done.\n" + block("json", '{"status":"ok","ask":1}'));
  assert.equal(ordinary.receiptError, null);
  assert.deepEqual(ordinary.receipt, {});
});

test("a bad receipt is reported with the field", () => {
  assert.match(readMessage(block("agent-autoloop", "{not json}")).receiptError ?? "", /^receipt JSON: /);
  assert.equal(readMessage(block("agent-autoloop", '{"ask":[{"title":"t"}]}')).receiptError, "receipt: ask[0].options: required");
  assert.equal(readMessage(block("agent-autoloop", '{"later":[{"key":"k","at":"2026-13-01T00:00:00Z"}]}')).receiptError, "receipt: later[0].at is not a real date-time");
  assert.equal(readMessage(block("agent-autoloop", '{"bogus":[]}')).receiptError, "receipt: bogus: unknown field");
  // A `later` item is a timer or a cancel: the error comes from the form the item went furthest into.
  const later = (item: string) => readMessage(block("agent-autoloop", `{"later":[${item}]}`)).receiptError;
  assert.deepEqual(
    [later('{"key":"k","cancel":false}'), later('{"key":"k"}'), later('{"at":"2026-01-01T00:00:00Z"}'), later('{"key":"k","at":5}')],
    ["receipt: later[0].cancel: must be one of true", "receipt: later[0].at: required", "receipt: later[0].key: required", "receipt: later[0].at: must be string"],
  );
});

test("command placeholders are substituted once per argument and never again", () => {
  const args = substitute(["run", "{prompt}", "--cwd={cwd}", "{model}/{effort}", "{context}", "{unknown}"], {
    prompt: "text with {cwd} and $& and $1", model: "m", effort: "high", cwd: "/work", context: "/ctx.json",
  });
  assert.deepEqual(args, ["run", "text with {cwd} and $& and $1", "--cwd=/work", "m/high", "/ctx.json", "{unknown}"]);
});

test("the prompt carries the rule's words and the receipt instructions, never event text", () => {
  const p = buildPrompt({ rule: { name: "r", prompt: "Handle the alert.", skill: "run-ops" }, askFirst: ["delete data", "spend money"], contextFile: "/x/context.json", lang: "en" });
  assert.match(p, /^Handle the alert\.\n\nUse the skill "run-ops"\./);
  assert.match(p, /\/x\/context\.json/);
  assert.match(p, /Ask the owner first only for these kinds of actions: delete data, spend money\./);
  assert.match(p, /```agent-autoloop/);
  assert.match(p, /A question outside an ask reaches nobody\.$/);
  const zh = buildPrompt({ rule: { name: "r", prompt: null, skill: null }, askFirst: [], contextFile: "/c", lang: "zh" });
  assert.match(zh, /没跑成：原因/);
  // Issue 29: the operating rules (at least once; blocks), in both languages, before the receipt format.
  assert.match(p, /\n\nThe rules of this place:\n- The same matter may reach you more than once \(at least once\)\. Before any action with side effects/);
  assert.match(p, /do not ask again and do not set a later to retry: the first line says which card it still waits on, with no ask; cancel a check in waiting for the same block with \{ "key": "…", "cancel": true \}\.\n\nWhen you are done/);
  assert.match(zh, /\n\n这里的规矩：\n- 同一件事可能叫你不止一次（至少一次）。/);
  assert.match(zh, /open 里已有卡片说的是同一个阻塞时，不再问，也不用 later 定时重试/);
});

test("the agent's environment is an allowlist: the base names, its plugin's and its own names; no hub keys, no unrelated secrets", async () => {
  const parent = {
    PATH: "/bin", HOME: "/h", LANG: "C.UTF-8", LC_ALL: "C", ANTHROPIC_API_KEY: "a", OPENAI_API_KEY: "o", CODEX_HOME: "/c", IS_SANDBOX: "1",
    AGENT_AUTOLOOP_KEY: "hub-key", AGENT_AUTOLOOP_HOME: "/home", AWS_SECRET_ACCESS_KEY: "s", DATABASE_URL: "postgres://", GITHUB_TOKEN: "g",
    GH_TOKEN: "gh", GIT_ASKPASS: "/askpass", SSH_AUTH_SOCK: "/agent.sock", DEEPSEEK_API_KEY: "d", DISABLE_TELEMETRY: "1",
  };
  const extra = { AGENT_AUTOLOOP_CONTEXT: "/ctx", AGENT_AUTOLOOP_RUN: "3" };
  const base = { PATH: "/bin", HOME: "/h", LANG: "C.UTF-8", LC_ALL: "C", ...extra };
  const plugin = async (name: string) => ((await import(`../plugins/${name}/agent.ts`)) as { default: AgentPlugin }).default.passEnv ?? [];
  assert.deepEqual(childEnv(parent, await plugin("command"), extra), base, "a command agent: the base names only");
  assert.deepEqual(childEnv(parent, await plugin("acp"), extra), base, "acp: its agent's variables come from the agent's env");
  assert.deepEqual(childEnv(parent, await plugin("claude"), extra), { ...base, ANTHROPIC_API_KEY: "a", IS_SANDBOX: "1", DISABLE_TELEMETRY: "1" });
  assert.deepEqual(childEnv(parent, await plugin("codex"), extra), { ...base, OPENAI_API_KEY: "o", CODEX_HOME: "/c" });
  assert.deepEqual(childEnv(parent, await plugin("dsh"), extra), { ...base, DEEPSEEK_API_KEY: "d" });
  // The agent's rules.json `env`: exact names and PREFIX_* prefixes; AGENT_AUTOLOOP_* never, whatever a list says.
  assert.deepEqual(childEnv(parent, ["GH_TOKEN", "GIT_*", "DATABASE_URL", "AGENT_AUTOLOOP_*", "AGENT_AUTOLOOP_KEY"], extra), {
    ...base, GH_TOKEN: "gh", GIT_ASKPASS: "/askpass", DATABASE_URL: "postgres://",
  });
  assert.deepEqual(childEnv(parent, ["SSH_AUTH_SOCK"], extra), { ...base, SSH_AUTH_SOCK: "/agent.sock" });
});

test("a message that calls for the owner without an ask is a receipt error: 'Needs you' / 待你处理, or ending with a question", () => {
  const ask = block("agent-autoloop", '{"ask":[{"title":"Which?","options":["a","b"]}]}');
  const cases: [string, "needsYou" | "question" | null, string | null][] = [
    // the first-line marker, in both languages and any case, with or without other receipt items
    ["Needs you: the npm token expired; log in again", "needsYou", "Needs you: the npm token expired; log in again"],
    ["待你处理：需要重新登录 npm", "needsYou", "待你处理：需要重新登录 npm"],
    ["needs you: pick one\n" + block("agent-autoloop", '{"notice":[{"title":"t"}],"ask":[]}'), "needsYou", "needs you: pick one"],
    ["Needs you: is the key revoked?", "needsYou", "Needs you: is the key revoked?"],
    // the last line outside code blocks ends with a question mark (ASCII or full width), emphasis aside
    ["Which of the two names should the project use?", "question", "Which of the two names should the project use?"],
    ["Fixed the flaky test.\n\nShould I also raise the timeout?  \n", "question", "Should I also raise the timeout?"],
    ["我改好了。\n要不要顺便升级依赖？", "question", "要不要顺便升级依赖？"],
    ["**Should I merge it?**", "question", "**Should I merge it?**"],
    ["Which branch?\n" + block("agent-autoloop", '{"later":[{"key":"k","cancel":true}]}'), "question", "Which branch?"],
    ["Two ways out:\n```sh\nnpm ci\n```\nWhich one?", "question", "Which one?"],
    // not a call for the owner: an ask is there, the question is not last, or sits in code, or a marker says otherwise
    ["Needs you: log in again\n" + ask, null, null],
    ["Which branch should I merge into?\n" + ask, null, null],
    ["Fixed the typo and opened a PR.", null, null],
    ["Why did CI fail? A stale cache; cleared it.", null, null],
    ['Answered the FAQ entry "How do I reset my password?"', null, null],
    ["Done.\n```sh\necho 'really?'\n```", null, null],
    ["Nothing to do: should anything change?", null, null],
    ["Not run: is the API down?", null, null],
    ["", null, null],
  ];
  for (const [text, kind, line] of cases) {
    const m = readMessage(text);
    assert.deepEqual(m.unasked, kind === null ? null : { kind, line }, text);
    if (kind === null) assert.equal(m.receiptError, null, text);
  }
  assert.equal(readMessage("Needs you: log in").receiptError,
    "the first line says the owner must act, but the receipt has no ask (a question for the owner must be an ask in the receipt, or nobody sees it)");
  assert.equal(readMessage("Which one?").receiptError,
    "the message ends with a question, but the receipt has no ask (a question for the owner must be an ask in the receipt, or nobody sees it; if it is not for the owner, end with your conclusion)");
  assert.equal(readMessage("待你处理：登录", "zh").receiptError, "第一行说要本人处理，但回执里没有 ask（给本人的问题要写成回执里的 ask，否则没人看得到）");
  // the readable receipt is kept: what it lacks is the ask
  assert.deepEqual(readMessage("Which branch?\n" + block("agent-autoloop", '{"later":[{"key":"k","cancel":true}]}')).receipt, { later: [{ key: "k", cancel: true }] });
  // an unreadable receipt is that error, not this one
  assert.equal(readMessage("Needs you: x\n" + block("agent-autoloop", "{bad")).unasked, null);
});
