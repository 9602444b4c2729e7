/**
 * Tools offered to the real agent CLIs (issue 16 "Offered to agents"): a real `agent-autoloop serve` process (hub +
 * local worker, real SQLite, the agent in its sandbox when bubblewrap is here) runs the built-in `claude` or `codex`
 * plugin, which launches the real CLI from npm (tests/agent-clis) against the fake model server; the rule offers
 * `hello-python.greet`, the example plugin installed in the home, and the fake model calls it by the name the CLI gives
 * it (Claude Code: `mcp__agent-autoloop__hello-python_greet`; Codex: `hello_python_greet` in namespace
 * `mcp__agent_autoloop`). The plugin really runs (python3), in the worker's tool host.
 *
 * - greet: the first call of the plugin (not built in) asks the owner; "always allow" while the call is held lets it
 *   run; the run's receipt carries the plugin's answer, and `why` shows the call;
 * - approve: the tool's approvals entry says `prompt` and nobody answers within the hold (10 s): the call answers "awaiting approval, card
 *   N", the agent ends its turn and the run ends; the owner answers "allow once"; the lane wakes, the session resumes
 *   and the repeated call passes;
 * - reader: an agent with access "read" (Claude Code's plan mode, which refuses tools not marked read-only; Codex's
 *   read-only sandbox) may call the offered tool;
 * - first: the first call of another plugin that is not built in (`hello-node`, no approvals entry) asks; nobody
 *   answers within the hold: the call answers "awaiting approval, card N — end your turn…", the run ends; the owner
 *   answers "allow once" through POST /v1/cards/:id/answer; the lane wakes, the same session resumes, the repeated call
 *   passes on that answer; the receipt carries the plugin's answer and `why` shows the calls and the approval.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { engine, tempDir, until } from "./helpers.js";
import { receiptMessage, startFakeModel, type FakeModel, type Reply, type Turn } from "./fake-model.js";
import { agentsMissing, realHub, type RealHub } from "./real-agents.js";
import type { OwnerCard, RunView, State } from "../src/protocol/responses.js";

/** rules.json `approvalWaitSeconds` of these scenarios: long enough for the test to answer a card while a call is held. */
const holdSeconds = 10;

/** How each CLI names the tool `<plugin>.greet` of the server `agent-autoloop` to its model. */
const toolCall = {
  claude: (plugin: string, input: Record<string, unknown>): Reply => ({ tool: `mcp__agent-autoloop__${plugin}_greet`, input }),
  codex: (plugin: string, input: Record<string, unknown>): Reply => ({ tool: `${plugin.replaceAll("-", "_")}_greet`, namespace: "mcp__agent_autoloop", input }),
} as const;

/** Registers the tool scenarios for one built-in agent plugin. */
export function realToolScenarios(agent: "claude" | "codex"): void {
  const skip = agentsMissing([agent]);
  const dir = tempDir(`aa-${agent}-tools-`);
  const project = join(dir, "project");
  let model: FakeModel;
  let hub: RealHub | null = null;
  /** What the model saw as each tool result, by scenario. */
  const results = new Map<string, string[]>();

  /** The fake model: call the tool when the user speaks; report what the tool said when its result comes. */
  function script(turn: Turn): Reply {
    const scenario = /SCENARIO:(\w+)/.exec(turn.allUser)?.[1] ?? "none";
    if (turn.toolResult !== null) {
      results.set(scenario, [...(results.get(scenario) ?? []), turn.toolResult]);
      const card = /awaiting approval, card (\d+)/.exec(turn.toolResult);
      if (card) return { text: `Done: waiting for the owner's approval on card ${card[1]}` };
      const said = /hello, \w+/.exec(turn.toolResult)?.[0];
      return { text: receiptMessage(`Done: the tool said ${said ?? `nothing I know (${turn.toolResult})`}`, {}) };
    }
    // Not checked against `turn.tools`: both CLIs may defer MCP tools behind their tool search (Claude Code 2.1.332
    // sends `ToolSearch` instead of them) and still take a call by the name.
    const name = scenario === "approve" ? "Grace" : scenario === "first" ? "Alan" : "Ada";
    return toolCall[agent](scenario === "first" ? "hello-node" : "hello-python", { name });
  }

  const cli = (...args: string[]) => hub!.cli(...args);
  const ownerState = () => hub!.state();
  const post = (type: string) => hub!.post(type);

  /** Something of the hub's state once `get` finds it; the hub's output is shown when it never does. */
  async function waitFor<T>(get: (s: State) => T | undefined | null | false, what: string, ms = 120_000): Promise<T> {
    let seen = null as State | null;
    try {
      return (await until(async () => get((seen = await ownerState())), ms, what)) as T;
    } catch (e) {
      throw new Error(`${(e as Error).message}; last runs: ${JSON.stringify(seen?.runs.slice(0, 3))}; hub output: ${hub!.output().slice(-4000)}`);
    }
  }

  const runsOf = (s: State, rule: string): RunView[] => s.runs.filter((r) => r.rule === rule).reverse();
  const openCard = (s: State, rule: string): OwnerCard | undefined => s.cards.find((c) => c.rule === rule && c.state === "open" && c.title === "Allow hello-python.greet?");
  /** The tool call, trust and card lines of `why <run>` (not the deliveries, whose moment varies), durations blanked. */
  const callLines = (why: string, tool: string): string[] =>
    why.split("\n").map((l) => l.replace(/^\S+ \S+ {2}/, "").replace(/\(\d+ ms\)/, "(… ms)")).filter((l) => l.includes(`tool ${tool}`) || l.startsWith("plugin ") || (l.startsWith("card #") && !l.includes(" delivered to ")));

  before(async () => {
    if (skip) return;
    model = await startFakeModel(script);
    mkdirSync(project, { recursive: true });
    const scenarios = ["greet", "approve", "reader", "first"];
    hub = await realHub(dir, model.url, {
      timezone: "UTC",
      sources: { lab: { name: "Lab" } },
      agents: { [agent]: { worker: "local", use: agent }, reader: { worker: "local", use: agent, access: "read" } },
      channels: { file: {} },
      approvals: [{ plugin: "hello-python", tool: "hello-python.greet", mode: "prompt", allow_session_keys: ["greet:*", "reader:*"] }],
      approvalWaitSeconds: holdSeconds,
      rules: scenarios.map((s) => ({
        name: s, when: { source: "lab", types: [`${s}.*`] }, to: s === "reader" ? "reader" : agent, cwd: project, prompt: `SCENARIO:${s}`,
        tools: [s === "first" ? "hello-node.greet" : "hello-python.greet"],
      })),
    }, (home) => {
      for (const p of ["hello-python", "hello-node"]) cpSync(join(engine, "examples", "tool-plugins", p), join(home, "plugins", p), { recursive: true });
    });
  });

  after(async () => {
    await hub?.kill();
    await model?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test(`${agent}: the model calls hello-python.greet; its first use is approved while held; the plugin's answer is in the receipt; why shows the call`, { skip: skip ?? false }, async () => {
    await post("greet.opened");
    // The first use of a plugin that is not built in asks, whatever allow_session_keys say; the call is held meanwhile.
    const card = await waitFor((s) => openCard(s, "greet"), "the first-use card");
    assert.match(card.text, /first call of plugin hello-python/);
    // Answered while the call is held: the answer decides the call itself, and the card is closed at once.
    assert.equal(await cli("answer", String(card.id), "1"), `card ${card.id}: closed — Allow hello-python.greet?`);
    const [run] = await waitFor((s) => runsOf(s, "greet")[0]?.state === "done" && runsOf(s, "greet"), "the run to end");
    assert.equal(run!.summary, "Done: the tool said hello, Ada");
    assert.equal(results.get("greet")?.length, 1);
    assert.match(results.get("greet")![0]!, /hello, Ada/);
    const why = await cli("why", String(run!.id));
    const calls = why.split("\n").filter((l) => / tool hello-python\.greet\b/.test(l)).map((l) => l.replace(/^\S+ \S+ {2}/, "").replace(/\(\d+ ms\)/, "(… ms)"));
    assert.deepEqual(calls, [
      `wants to call tool hello-python.greet: asks you on card #${card.id}`,
      `called tool hello-python.greet: allowed by the answer on card #${card.id}`,
      "tool hello-python.greet finished (… ms)",
    ], why);
  });

  test(`${agent}: a prompt not answered in time ends the turn; the owner's answer resumes the session and the call passes`, { skip: skip ?? false }, async () => {
    await post("approve.opened");
    const [first] = await waitFor((s) => runsOf(s, "approve")[0]?.state === "done" && runsOf(s, "approve"), "the first run to end");
    const card = (await ownerState()).cards.find((c) => c.rule === "approve" && c.title === "Allow hello-python.greet?")!;
    assert.ok(card, "the approval card");
    assert.equal(first!.summary, `Done: waiting for the owner's approval on card ${card.id}`);
    // Claude Code passes the tool's text on as it is; Codex wraps it in its own output items.
    assert.equal(results.get("approve")?.length, 1);
    assert.ok(results.get("approve")![0]!.includes(`awaiting approval, card ${card.id} — end your turn; you will be resumed`), results.get("approve")![0]);
    assert.equal(await cli("answer", String(card.id), "0"), `card ${card.id}: answered — Allow hello-python.greet?`);
    const runs = await waitFor((s) => runsOf(s, "approve").length === 2 && runsOf(s, "approve")[1]!.state === "done" && runsOf(s, "approve"), "the resumed run to end");
    assert.equal(runs[1]!.summary, "Done: the tool said hello, Grace");
    assert.equal(runs[1]!.session, first!.session, "the answer resumed the session");
    const why = await cli("why", String(runs[1]!.id));
    assert.ok(why.split("\n").some((l) => /tool hello-python\.greet finished \(\d+ ms\)/.test(l)), why);
  });

  test(`${agent}: an agent with access read (Claude Code's plan mode, Codex's read-only sandbox) calls the offered tool`, { skip: skip ?? false }, async () => {
    await post("reader.opened");
    const [run] = await waitFor((s) => runsOf(s, "reader")[0]?.state === "done" && runsOf(s, "reader"), "the run to end");
    assert.equal(run!.summary, "Done: the tool said hello, Ada", "trusted since greet: no card");
  });

  test(`${agent}: the first use of a plugin not built in, left unanswered, ends the turn; "allow once" over /v1 resumes the session and the call passes`, { skip: skip ?? false }, async () => {
    await post("first.opened");
    const [first] = await waitFor((s) => runsOf(s, "first")[0]?.state === "done" && runsOf(s, "first"), "the first run to end");
    const card = (await ownerState()).cards.find((c) => c.rule === "first" && c.title === "Allow hello-node.greet?")!;
    assert.ok(card, "the approval card");
    assert.equal(card.kind, "ask");
    assert.deepEqual(card.options, ["allow once", "always allow", "deny"]);
    // hello-node has no [sandbox]: the card says so before why it asks (issue 26 round 25, F25b-4).
    assert.match(card.text, /^Run \d+ \(session first:\) wants to call tool hello-node\.greet \(kind sync\)\.\nArguments \(sorted keys\): \{"name":"Alan"\}\nRuns WITHOUT a sandbox, with your user's rights: it can read and write all you can \(no \[sandbox\] in its manifest\)\nThis is an agent's first call of plugin hello-node/);
    assert.equal(first!.summary, `Done: waiting for the owner's approval on card ${card.id}`);
    assert.equal(results.get("first")?.length, 1);
    assert.ok(results.get("first")![0]!.includes(`awaiting approval, card ${card.id} — end your turn; you will be resumed`), results.get("first")![0]);
    // The owner answers "allow once" over the real endpoint, as a channel or the console would.
    const res = await fetch(`${hub!.url}/v1/cards/${card.id}/answer`, {
      method: "POST", headers: { authorization: `Bearer ${hub!.owner}`, "content-type": "application/json" }, body: JSON.stringify({ choice: 0 }),
    });
    assert.equal(res.status, 200, await res.text());
    const runs = await waitFor((s) => runsOf(s, "first").length === 2 && runsOf(s, "first")[1]!.state === "done" && runsOf(s, "first"), "the resumed run to end");
    assert.equal(runs[1]!.summary, "Done: the tool said hello, Alan");
    assert.equal(runs[1]!.session, first!.session, "the answer resumed the session");
    assert.equal(results.get("first")?.length, 2);
    assert.match(results.get("first")![1]!, /hello, Alan/);
    assert.deepEqual(callLines(await cli("why", String(first!.id)), "hello-node.greet"), [
      `card #${card.id} question: Allow hello-node.greet?`,
      `wants to call tool hello-node.greet: asks you on card #${card.id}`,
      `wants to call tool hello-node.greet: waits for approval on card #${card.id}`,
      `card #${card.id} answered: allow once (by you)`,
    ]);
    // "Allow once" trusted nothing (no `plugin hello-node trusted` line): a later first use asks again.
    assert.deepEqual(callLines(await cli("why", String(runs[1]!.id)), "hello-node.greet"), [
      `called tool hello-node.greet: allowed by the answer on card #${card.id}`,
      "tool hello-node.greet finished (… ms)",
    ]);
  });
}
