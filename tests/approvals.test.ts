/**
 * Tool calls and rules.json (issue 16; spec tool-plugins.md §8): which rule offers which tool, and the approval mode of
 * a call — exact plugin+tool, then plugin alone, then `auto`; `allow_session_keys` globs on the session key;
 * `disable_model_invocation`; the owner's own call; the forced first use of a plugin that is not built in. Pure
 * functions of the kernel, table-driven, on rules parsed from a real rules.json text.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { approvalDefault, approvalOf, approvalRuleFor, approvalsOf, pluginDenied, ruleOffers, starMatch, type ApprovalAsk, type Rules } from "../src/kernel/rules.js";
import { parseRules } from "../src/protocol/rules-file.js";

/** The issue's own rules.json, with a rule that offers tools and a few more approvals. */
const text = `{
  "sources": { "gh": {} },
  "agents": { "a": { "worker": "w", "use": "claude" } },
  "rules": [
    { "name": "triage", "when": { "source": "gh" }, "to": "a", "tools": ["hello-python.greet", "file-ops.*", "x.a*b"] },
    { "name": "plain", "when": { "source": "gh" }, "to": "a" }
  ],
  // matched exact plugin+tool first, then plugin only, then auto
  "approvals": [
    { "plugin": "file-ops", "mode": "auto" },
    { "plugin": "file-ops", "tool": "file-ops.write", "mode": "prompt", "allow_session_keys": ["triage:*", "owner:ci"] },
    { "plugin": "dangerous", "mode": "deny", "allow_session_keys": ["*"] },
    { "plugin": "search", "mode": "auto", "allow_session_keys": ["triage:*"] },
    { "plugin": "review", "mode": "prompt", "allow_session_keys": ["triage:repo?", "*:nightly", "a*b*c"] },
  ],
}`;
const parsed = parseRules(text, { timezone: "UTC" });
assert.ok(parsed.ok, parsed.ok ? "" : parsed.error);
const rules: Rules = parsed.rules;
const approvals = approvalsOf(rules);

test("a rule offers the tools its patterns match, * being any run of characters in the tool's part; a rule without tools offers none", () => {
  const [triage, plain] = rules.rules;
  const cases: [string, boolean][] = [
    ["hello-python.greet", true], ["hello-python.greet2", false], ["hello-python.gree", false], ["hello-node.greet", false],
    ["file-ops.read", true], ["file-ops.write", true], ["file-ops.", true], ["file-ops.a.b", true], ["file-opsx.read", false], ["file.ops", false],
    ["x.ab", true], ["x.a-long-b", true], ["x.ba", false], ["x.abc", false],
  ];
  assert.deepEqual(cases.map(([tool]) => [tool, ruleOffers(triage!, tool)]), cases);
  assert.deepEqual(cases.filter(([tool]) => ruleOffers(plain!, tool)), []);
});

test("the governing entry: the one naming plugin and tool, else the one naming the plugin alone, wherever each stands", () => {
  const cases: [string, string, number | null][] = [
    ["file-ops", "file-ops.write", 1], // after the plugin's own entry in the file: the exact one still wins
    ["file-ops", "file-ops.read", 0],
    ["dangerous", "dangerous.rm", 2],
    ["search", "search.web", 3],
    ["hello-python", "hello-python.greet", null],
    ["file-op", "file-op.write", null], // no prefix matching of plugin names
  ];
  assert.deepEqual(cases.map(([p, tool]) => [p, tool, approvalRuleFor(approvals, p, tool)?.index ?? null]), cases);
  // an entry naming another tool of the plugin, before the plugin's own entry, governs only its tool (a mutant that
  // took any entry of the plugin as its plugin entry survived issue 27's mutation run)
  const entry = { allow_session_keys: [], credential_any_url: false, legacy_callbacks: false, legacy_callback_short_ids: false };
  const other: Parameters<typeof approvalRuleFor>[0] = [{ ...entry, plugin: "p", tool: "p.other", mode: "deny" }, { ...entry, plugin: "p", tool: null, mode: "auto" }];
  assert.deepEqual([approvalRuleFor(other, "p", "p.mine")?.index, approvalRuleFor(other, "p", "p.other")?.index], [1, 0]);
});

/** An agent's call of `tool` in session `sessionKey` of a plugin that is not built in and not trusted, with `over` changed. */
const ask = (tool: string, sessionKey: string, over: Partial<ApprovalAsk> = {}): ApprovalAsk => ({
  plugin: tool.slice(0, tool.indexOf(".")), tool, caller: "agent", sessionKey, disableModelInvocation: false, builtin: false, trusted: true, kind: "sync", ...over,
});

test("the approval mode of a call, exactly as the contract orders it", () => {
  // [what, ask, mode, why, index of the deciding entry]
  const cases: [string, ApprovalAsk, string, string, number | null][] = [
    ["no entry: auto", ask("hello-python.greet", "triage:"), "auto", "default", null],
    ["plugin alone", ask("file-ops.read", "triage:"), "auto", "plugin", 0],
    ["plugin+tool over plugin alone", ask("file-ops.write", "plain:"), "prompt", "tool", 1],
    ["allow_session_keys lets a session through a prompt", ask("file-ops.write", "triage:"), "auto", "session", 1],
    ["… any run of characters after triage:", ask("file-ops.write", "triage:gh#12 fix:it"), "auto", "session", 1],
    ["… not a session that only starts alike", ask("file-ops.write", "triage2:x"), "prompt", "tool", 1],
    ["… matched whole, not in part", ask("file-ops.write", "x-triage:"), "prompt", "tool", 1],
    ["? is a literal ?", ask("review.diff", "triage:repo1"), "prompt", "plugin", 4],
    ["? matches itself", ask("review.diff", "triage:repo?"), "auto", "session", 4],
    ["* at the start", ask("review.diff", "weekly:nightly"), "auto", "session", 4],
    ["stars between pieces", ask("review.diff", "abbcc"), "auto", "session", 4],
    ["pieces in order only", ask("review.diff", "cba"), "prompt", "plugin", 4],
    ["deny is not lifted by allow_session_keys", ask("dangerous.rm", "triage:"), "deny", "plugin", 2],
    ["auto with allow_session_keys stays auto", ask("search.web", "plain:"), "auto", "plugin", 3],
    ["disable_model_invocation refuses agents", ask("hello-python.greet", "triage:", { disableModelInvocation: true }), "deny", "hidden", null],
    ["… whatever the approvals say", ask("file-ops.write", "triage:", { disableModelInvocation: true }), "deny", "hidden", null],
    ["… but not the owner", ask("hello-python.greet", "owner:owner", { caller: "owner", disableModelInvocation: true }), "auto", "default", null],
    ["the owner is never prompted", ask("file-ops.write", "owner:owner", { caller: "owner" }), "auto", "owner", 1],
    ["… for a plugin-wide prompt either", ask("review.diff", "owner:owner", { caller: "owner" }), "auto", "owner", 4],
    ["… nor on first use", ask("hello-python.greet", "owner:owner", { caller: "owner", trusted: false }), "auto", "default", null],
    ["… and a session key of the owner's may be allowed", ask("file-ops.write", "owner:ci", { caller: "owner" }), "auto", "session", 1],
    ["deny refuses the owner too", ask("dangerous.rm", "owner:owner", { caller: "owner" }), "deny", "plugin", 2],
    ["first use of a plugin not built in: auto becomes prompt", ask("hello-python.greet", "triage:", { trusted: false }), "prompt", "firstUse", null],
    ["… also under a plugin-wide auto", ask("file-ops.read", "triage:", { trusted: false }), "prompt", "firstUse", 0],
    ["… and through allow_session_keys", ask("file-ops.write", "triage:", { trusted: false }), "prompt", "firstUse", 1],
    ["… a prompt stays a prompt", ask("file-ops.write", "plain:", { trusted: false }), "prompt", "tool", 1],
    ["… a deny stays a deny", ask("dangerous.rm", "plain:", { trusted: false }), "deny", "plugin", 2],
    ["a built-in plugin is not forced", ask("hello-python.greet", "triage:", { trusted: false, builtin: true }), "auto", "default", null],
    ["… but its prompt entry applies", ask("file-ops.write", "plain:", { trusted: false, builtin: true }), "prompt", "tool", 1],
  ];
  const got = cases.map(([what, a]) => {
    const v = approvalOf(approvals, a);
    return [what, a, v.mode, v.why, v.index];
  });
  assert.deepEqual(got, cases);
  // No approvals at all: every trusted agent call is auto.
  assert.deepEqual(approvalOf([], ask("any.tool", "r:")), { mode: "auto", why: "default", index: null });
});

test("star patterns: * is any run of characters, none included; every other character is literal", () => {
  const cases: [string, string, boolean][] = [
    ["", "", true], ["", "a", false], ["*", "", true], ["*", "anything: at all\n", true], ["a", "a", true], ["a", "A", false],
    ["a*", "a", true], ["*a", "ba", true], ["*a", "ab", false], ["a*a", "a", false], ["a*a", "aa", true], ["a*a", "aba", true],
    ["**", "x", true], ["a**b", "ab", true], ["a*b*a", "aba", true], ["a*b*a", "abba", true], ["a*b*a", "aab", false],
    ["?", "x", false], ["?", "?", true], ["[ab]", "a", false], ["[ab]", "[ab]", true], ["a.b", "axb", false], ["x*y*z", "xyyz", true],
    ["ab*ba", "aba", false], ["ab*ba", "abba", true], ["*ab*", "xaxbx", false], ["*ab*", "xabx", true],
    // Middle pieces never overlap (mutation run of glob.ts: a search that restarted before the last piece's end passed).
    ["*ab*ab*", "xabx", false], ["*ab*ab*", "xababx", true], ["x*aa*aa*y", "xaaay", false], ["x*aa*aa*y", "xaaaay", true],
  ];
  assert.deepEqual(cases.map(([p, v]) => [p, v, starMatch(p, v)]), cases);
});

test("star patterns mean what a reference regular expression means, on every pattern over a * . and value over a b . of up to 4", () => {
  const words = (alphabet: string[], n: number): string[] => (n === 0 ? [""] : [...words(alphabet, n - 1), ...words(alphabet, n - 1).filter((w) => w.length === n - 1).flatMap((w) => alphabet.map((c) => w + c))]);
  const patterns = words(["a", "*", "."], 4);
  const values = words(["a", "b", "."], 4);
  const reference = (p: string) => new RegExp(`^${p.split("*").map((s) => s.replace(/[.]/g, "\\.")).join("[^]*")}$`);
  let checked = 0;
  for (const p of patterns) {
    const re = reference(p);
    for (const v of values) {
      assert.equal(starMatch(p, v), re.test(v), `${JSON.stringify(p)} on ${JSON.stringify(v)}`);
      checked++;
    }
  }
  assert.equal(checked, 121 * 121);
});

test("approvalDefault (issue 18): a declarative plugin's HTTP tool asks first when no entry names it; every other kind runs", () => {
  assert.deepEqual(["http", "sync", "async", "service", "mcp"].map(approvalDefault), ["prompt", "auto", "auto", "auto", "auto"]);
});

test("a call of kind http (issue 18): no entry names it → prompt, lifted once the plugin is trusted at this digest; an entry decides as for any kind; the owner is not asked", () => {
  const ask = (o: Partial<ApprovalAsk>): ApprovalAsk => ({
    plugin: "weather", tool: "weather.now", caller: "agent", sessionKey: "triage:1", disableModelInvocation: false, builtin: false, trusted: false, kind: "http", ...o,
  });
  const cases: [Partial<ApprovalAsk>, ReturnType<typeof approvalOf>][] = [
    [{}, { mode: "prompt", why: "default", index: null }],
    [{ builtin: true }, { mode: "prompt", why: "default", index: null }],
    [{ trusted: true }, { mode: "auto", why: "default", index: null }],
    [{ caller: "owner", sessionKey: "owner:me", trusted: true }, { mode: "auto", why: "default", index: null }],
    [{ kind: "sync", builtin: true }, { mode: "auto", why: "default", index: null }],
    [{ plugin: "search", tool: "search.find", trusted: true }, { mode: "auto", why: "plugin", index: 3 }],
    [{ plugin: "dangerous", tool: "dangerous.x", trusted: true }, { mode: "deny", why: "plugin", index: 2 }],
    [{ plugin: "review", tool: "review.x", trusted: true }, { mode: "prompt", why: "plugin", index: 4 }],
  ];
  for (const [o, want] of cases) assert.deepEqual(approvalOf(approvals, ask(o)), want, JSON.stringify(o));
});

test("pluginDenied (issue 26 round 9): a plugin is denied whole only by its plugin entry saying deny with no tool entry saying otherwise; such a plugin is not offered, so never listed for an agent", () => {
  assert.deepEqual(["dangerous", "file-ops", "search", "review", "unnamed"].map((p) => pluginDenied(approvals, p)), [true, false, false, false, false]);
  const entry = { plugin: "x", allow_session_keys: [], credential_any_url: false, legacy_callbacks: false, legacy_callback_short_ids: false };
  const deny = { ...entry, tool: null, mode: "deny" as const };
  const tool = (mode: "auto" | "prompt" | "deny") => ({ ...entry, tool: "x.one", mode });
  assert.deepEqual([pluginDenied([deny], "x"), pluginDenied([deny, tool("deny")], "x"), pluginDenied([deny, tool("auto")], "x"), pluginDenied([tool("deny")], "x")], [true, true, false, false]);
});
