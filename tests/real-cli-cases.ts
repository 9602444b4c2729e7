/**
 * The agent plugins against the real CLIs (issue 5 "How it is tested"): a real `agent-autoloop serve` process (hub +
 * local worker, real SQLite) runs the built-in `claude` or `codex` plugin, which launches the real CLI from npm
 * (tests/agent-clis) against the fake model server (tests/fake-model.ts) on 127.0.0.1 port 0.
 *
 * Each scenario is a rule whose prompt carries a marker the fake model reacts to:
 * - ask: the first launch asks a question; the owner answers with the CLI; the next run resumes the same session
 *   and finishes; each run reports only its own launch's tokens (and cost), as `status` shows;
 * - rewrite: the first receipt is malformed; the worker resumes the session asking for the last message again;
 * - needsyou: the first message says "Needs you" without an ask; the rewrite on the same session adds the ask;
 * - lost: the session is deleted from the CLI's storage before the answer; the resume is refused and a new
 *   session opens;
 * - stop: the model runs a long shell command; `stop` ends the run and no process of it is left;
 * - kill: the hub and worker process is killed with SIGKILL while the model's command runs; after a restart the
 *   worker picks the run up and reports its result;
 * - block (issue 29): the prompt the CLI sends carries the operating rules; a model that follows them asks once for a
 *   block, and at the next event of the lane (the card still open) neither asks again nor sets a `later`;
 * - transcript (issue 30): the model runs one shell command; the run's transcript, as the owner reads it from the hub,
 *   holds the launch, the call with its command, the command's output and the last message, mapped from the CLI's own
 *   stream (Claude Code's stream-json, Codex's JSONL).
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, rmSync, mkdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { tempDir, until } from "./helpers.js";
import { receiptMessage, startFakeModel, replyTokens, type FakeModel, type Reply, type Turn } from "./fake-model.js";
import { agentsMissing, realHub, type RealHub } from "./real-agents.js";
import { readPids, groupAlive } from "../src/worker/supervise.js";
import type { RunView } from "../src/protocol/responses.js";

const askReceipt = receiptMessage("Needs you: which database should the migration target?", {
  ask: [{ title: "Pick the database", text: "Which database should the migration target?", options: ["Postgres", "SQLite"], recommend: 0 }],
});
const needsYouAsk = receiptMessage("Needs you: the staging database password expired", {
  ask: [{ title: "Staging password expired", text: "Reset the staging database password, then answer.", options: ["I reset it", "Skip staging"] }],
});

/** A sentence of the prompt's operating rules (src/worker/prompt.ts), in English: the block rule the model follows. */
const blockRule = "When a card in open already covers the same block, do not ask again and do not set a later to retry";
const blockAsk = receiptMessage("Needs you: the VPN login expired", {
  ask: [{ title: "Log in to the VPN", text: "The VPN session expired; log in again, then answer.", options: ["Logged in"], key: "vpn-login", about: "left: only the deploy step" }],
});

/** The processes whose command line contains `marker` (read from /proc; the test's own pgrep would match itself). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").join(" ").includes(marker)) found.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * Registers the scenarios for one built-in agent plugin.
 * @param agent "claude" or "codex"
 * @param sleepMarker a number no other test uses, for the long shell command (found in the process table); this
 *   process's pid is added, so that test runs side by side on one machine do not see each other's commands
 */
export function realCliScenarios(agent: "claude" | "codex", sleepMarker: number): void {
  const stopMarker = `${sleepMarker}.${process.pid}e3`; // a JavaScript number: setTimeout's delay
  const killMarker = `slept-${sleepMarker + 1}-${process.pid}`;
  const transcriptMarker = `transcribed-${sleepMarker + 2}-${process.pid}`;
  const program = agent;
  const skip = agentsMissing([program]);
  const dir = tempDir(`aa-${agent}-cli-`);
  const project = join(dir, "project");
  let model: FakeModel;
  let hub: RealHub | null = null;
  const fresh = new Map<string, number>(); // scenario → fresh conversations seen

  const shell = (command: string): Reply =>
    agent === "claude" ? { tool: "Bash", input: { command, description: "run it" } } : { tool: "exec_command", input: { cmd: command } };

  /** The fake model's behaviour: from the scenario marker in the prompt and what the conversation holds. */
  function script(turn: Turn): Reply {
    const scenario = /SCENARIO:(\w+)/.exec(turn.allUser)?.[1] ?? "none";
    const resumed = (turn.allUser.match(/SCENARIO:\w+/g) ?? []).length >= 2;
    if (turn.toolResult !== null) return { text: `Done: the command ran (${scenario})` };
    if (turn.lastUser.includes("could not be read")) {
      return { text: scenario === "needsyou" ? needsYouAsk : receiptMessage("Done: rewrote the receipt", { notice: [{ title: "Rewritten", text: "the receipt was rewritten" }] }) };
    }
    if (!resumed) fresh.set(scenario, (fresh.get(scenario) ?? 0) + 1);
    switch (scenario) {
      case "ask":
        return resumed ? { text: "Done: migrated to the chosen database" } : { text: askReceipt };
      case "rewrite":
        return { text: "Done: all good\n```agent-autoloop\n{\"notice\": [ this is not json\n```" };
      case "needsyou":
        return { text: "Needs you: the staging database password expired" };
      case "lost":
        return fresh.get("lost")! >= 2 ? { text: "Done: started over on a new session" } : { text: askReceipt };
      case "stop":
        // Claude Code 2.1.332 blocks long sleeps ("Blocked: standalone sleep 9871", also when followed by other
        // commands), and asks approval for `node -e` below access "full" (so this rule's agent has "full")
        return shell(`node -e "setTimeout(() => {}, ${stopMarker})"`);
      case "kill":
        return shell(`sleep 4 && echo ${killMarker}`);
      case "transcript":
        return shell(`echo ${transcriptMarker}`);
      case "block":
        // A model that never saw the rules asks again at every event, with a retry timer.
        if (!turn.allUser.includes(blockRule)) return { text: receiptMessage("Needs you: the VPN login expired", { ask: [{ title: "Log in to the VPN (again)", text: "Still expired.", options: ["Logged in"] }], later: [{ key: "vpn-retry", at: "2099-01-01T00:00:00Z" }] }) };
        return fresh.get("block")! >= 2
          ? { text: receiptMessage("Still waiting on the VPN login card.", { later: [{ key: "vpn-retry", cancel: true }] }) }
          : { text: blockAsk };
      default:
        return { text: "Nothing to do: unknown scenario" };
    }
  }

  const cli = (...args: string[]) => hub!.cli(...args);
  const ownerState = () => hub!.state();
  const post = (type: string) => hub!.post(type);

  /** The runs of one rule, oldest first, once `done(runs)` holds. */
  async function runsOf(rule: string, done: (runs: RunView[]) => boolean, ms = 90_000): Promise<RunView[]> {
    let seen: RunView[] = [];
    try {
      return (await until(async () => {
        seen = (await ownerState()).runs.filter((r) => r.rule === rule).reverse();
        return done(seen) ? seen : null;
      }, ms, `runs of ${rule}`))!;
    } catch (e) {
      throw new Error(`${(e as Error).message}; last seen: ${JSON.stringify(seen)}; hub output: ${hub!.output().slice(-3000)}`);
    }
  }

  /** Deletes the CLI's stored sessions, as if they had been cleaned up (Claude Code: ~/.claude/projects; Codex: CODEX_HOME/sessions). */
  function forgetSessions(): void {
    const where = agent === "claude" ? join(hub!.env.HOME!, ".claude", "projects") : join(hub!.env.CODEX_HOME!, "sessions");
    assert.ok(existsSync(where), `${where} exists before it is deleted`);
    rmSync(where, { recursive: true, force: true });
  }

  before(async () => {
    if (skip) return;
    model = await startFakeModel(script);
    mkdirSync(project, { recursive: true });
    const scenarios = ["ask", "rewrite", "needsyou", "lost", "stop", "kill", "block", "transcript"];
    hub = await realHub(dir, model.url, {
      timezone: "UTC",
      sources: { lab: { name: "Lab" } },
      agents: { [agent]: { worker: "local", use: agent }, full: { worker: "local", use: agent, access: "full" } },
      channels: { file: {} },
      rules: scenarios.map((s) => ({ name: s, when: { source: "lab", types: [`${s}.*`] }, to: s === "stop" ? "full" : agent, cwd: project, prompt: `SCENARIO:${s}` })),
    });
  });

  after(async () => {
    await hub?.kill();
    for (const pid of [...processesWith(dir), ...processesWith(stopMarker), ...processesWith(killMarker)]) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    await model?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const served = () => model.served.length;

  test(`${agent}: asks, the owner answers, the same session resumes and finishes; usage per launch`, { skip: skip ?? false }, async () => {
    const before = served();
    await post("ask.opened");
    const [first] = await runsOf("ask", (r) => r[0]?.state === "waiting" || r[0]?.state === "done");
    // What the run said besides its summary (an intermittent null summary on CI, 2026-12-06: its state, error and the
    // model's count tell a CLI that failed from a reply that was not read).
    const seen = JSON.stringify({ state: first.state, error: first.error, outcome: first.outcome, served: served() - before });
    assert.equal(first.summary, "Needs you: which database should the migration target?", seen);
    assert.equal(served() - before, 1, "one model reply in the first launch");
    assert.match(first.session!, /^[0-9a-f-]{36}$/);
    const card = (await ownerState()).cards.find((c) => c.title === "Pick the database");
    assert.ok(card, "the question card is open");
    assert.deepEqual(card.options, ["Postgres", "SQLite"]);
    assert.equal(await cli("answer", String(card.id), "1"), `card ${card.id}: answered — Pick the database`);
    const runs = await runsOf("ask", (r) => r.length === 2 && r[1].state === "done");
    assert.equal(runs[1].summary, "Done: migrated to the chosen database");
    assert.equal(runs[1].session, first.session, "the answer resumed the asking session");
    assert.equal(served() - before, 2, "one model reply in the resumed launch");
    // each launch reports its own tokens, not the session's running total
    const perLaunch = { input: replyTokens.input, output: replyTokens.output };
    for (const r of runs) assert.deepEqual({ input: r.usage?.input, output: r.usage?.output }, perLaunch);
    if (agent === "claude") {
      assert.ok(runs[0]!.usage!.cost! > 0, "Claude Code reports a cost");
      assert.equal(runs[1]!.usage!.cost!.toFixed(8), runs[0]!.usage!.cost!.toFixed(8), "the resumed launch's own cost, not the session total");
    } else {
      assert.equal(runs[1]!.usage?.cost, undefined, "Codex reports no cost");
    }
    const status = await cli("status");
    const tokens = replyTokens.input + replyTokens.output;
    const lines = status.split("\n").filter((l) => l.includes(`· ${tokens} tokens`));
    assert.equal(lines.length, 2, `two runs with ${tokens} tokens each in:\n${status}`);
  });

  test(`${agent}: a malformed receipt is written again on the same session`, { skip: skip ?? false }, async () => {
    const before = served();
    await post("rewrite.opened");
    const [run] = await runsOf("rewrite", (r) => r[0]?.state === "done");
    assert.equal(run.summary, "Done: all good", "the business outcome of the first message stands");
    assert.equal(served() - before, 2, "the first reply and the rewrite");
    const notice = (await ownerState()).cards.find((c) => c.title === "Rewritten");
    assert.ok(notice, "the rewritten receipt's notice became a card");
    assert.deepEqual({ input: run.usage?.input, output: run.usage?.output }, { input: 2 * replyTokens.input, output: 2 * replyTokens.output });
  });

  test(`${agent}: "Needs you" without an ask is written again on the same session; its ask becomes the card`, { skip: skip ?? false }, async () => {
    const before = served();
    await post("needsyou.opened");
    const [run] = await runsOf("needsyou", (r) => r[0]?.state === "done");
    assert.equal(run.summary, "Needs you: the staging database password expired");
    assert.equal(served() - before, 2, "the first reply and the rewrite");
    const cards = (await ownerState()).cards.filter((c) => c.rule === "needsyou");
    assert.deepEqual(cards.map((c) => [c.kind, c.title, c.options]), [["ask", "Staging password expired", ["I reset it", "Skip staging"]]]);
    assert.deepEqual({ input: run.usage?.input, output: run.usage?.output }, { input: 2 * replyTokens.input, output: 2 * replyTokens.output });
  });

  test(`${agent}: a session that no longer exists opens a new one`, { skip: skip ?? false }, async () => {
    await post("lost.opened");
    const [first] = await runsOf("lost", (r) => r[0]?.state === "waiting" || r[0]?.state === "done");
    assert.equal(first.summary, "Needs you: which database should the migration target?");
    forgetSessions();
    const card = (await ownerState()).cards.find((c) => c.title === "Pick the database" && c.state === "open");
    assert.ok(card, "the question card is open");
    await cli("answer", String(card.id), "0");
    const runs = await runsOf("lost", (r) => r.length === 2 && r[1].state === "done");
    assert.equal(runs[1].summary, "Done: started over on a new session");
    assert.match(runs[1]!.session!, /^[0-9a-f-]{36}$/);
    assert.notEqual(runs[1].session, first.session, "a new session");
  });

  test(`${agent}: the prompt's operating rules reach the model; a block covered by an open card is not asked again, no later is set`, { skip: skip ?? false }, async () => {
    await post("block.one");
    await runsOf("block", (r) => r[0]?.state === "waiting" || r[0]?.state === "done");
    await post("block.two");
    const runs = await runsOf("block", (r) => r.length === 2 && r[1]!.state === "done");
    assert.deepEqual(runs.map((r) => r.summary), ["Needs you: the VPN login expired", "Still waiting on the VPN login card."]);
    const s = await ownerState();
    assert.deepEqual(s.cards.filter((c) => c.rule === "block").map((c) => [c.kind, c.title, c.state]), [["ask", "Log in to the VPN", "open"]]);
    assert.deepEqual(s.timers.filter((t) => t.key === "vpn-retry"), [], "no timer to retry the block");
  });

  test(`${agent}: stopping a run in the middle of a tool call leaves no process behind`, { skip: skip ?? false }, async () => {
    const marker = stopMarker;
    await post("stop.opened");
    await until(() => processesWith(marker).length > 0, 90_000, `the model's command (${marker}) to run`);
    const [run] = await runsOf("stop", (r) => r[0]?.state === "running");
    const ldirs = readdirSync(join(dir, "aa", "worker", "runs", `${run.id}-1`)).filter((d) => /^\d+$/.test(d));
    const pids = readPids(join(dir, "aa", "worker", "runs", `${run.id}-1`, ldirs[0]!));
    assert.ok(pids && groupAlive(pids.pgid), "the launch's process group runs");
    assert.equal(await cli("stop", String(run.id)), `run ${run.id}: stopping`);
    await runsOf("stop", (r) => r[0]?.state === "cancelled", 30_000);
    assert.deepEqual(processesWith(marker), [], "the tool's command is gone");
    assert.equal(groupAlive(pids!.pgid, pids!.start), false, "the whole process group is gone");
  });

  test(`${agent}: the worker killed with SIGKILL mid-run and restarted still reports the result`, { skip: skip ?? false }, async () => {
    await post("kill.opened");
    await until(() => processesWith(killMarker).length > 0, 90_000, "the model's command to run");
    await hub!.kill();
    await hub!.start();
    const [run] = await runsOf("kill", (r) => r[0]?.state === "done");
    assert.equal(run.summary, "Done: the command ran (kill)");
    assert.deepEqual({ input: run.usage?.input, output: run.usage?.output }, { input: 2 * replyTokens.input, output: 2 * replyTokens.output });
  });

  test(`${agent}: the run's transcript shows the launch, the shell call, its output and the last message (issue 30)`, { skip: skip ?? false }, async () => {
    await post("transcript.opened");
    const [run] = await runsOf("transcript", (r) => r[0]?.state === "done");
    assert.equal(run.summary, "Done: the command ran (transcript)");
    type Entry = { kind: string; attempt: number; tool?: string; id?: string; input?: string; text?: string; error?: boolean };
    const entries: Entry[] = [];
    for (let after = 0, more = true; more;) {
      const res = await fetch(`${hub!.url}/v1/runs/${run.id}/transcript?after=${after}`, { headers: { authorization: `Bearer ${hub!.owner}` } });
      assert.equal(res.status, 200);
      const page = (await res.json()) as { entries: Entry[]; next: number; more: boolean };
      entries.push(...page.entries);
      ({ next: after, more } = page);
    }
    const kinds = entries.map((e) => e.kind);
    assert.equal(kinds[0], "start");
    assert.ok(entries.every((e) => e.attempt === 1), JSON.stringify(entries));
    const call = entries.find((e) => e.kind === "tool");
    assert.ok(call, `a tool step in ${JSON.stringify(entries)}`);
    // Each CLI names its shell tool its own way; the command is in the call's input either way.
    assert.equal(call.tool, agent === "claude" ? "Bash" : "shell");
    assert.ok(call.input!.includes(`echo ${transcriptMarker}`), call.input);
    const result = entries.find((e) => e.kind === "toolResult" && e.id === call.id);
    assert.ok(result, `the call's result in ${JSON.stringify(entries)}`);
    assert.equal(result.text!.trim(), transcriptMarker);
    assert.equal(result.error, undefined);
    assert.ok(kinds.indexOf("tool") < kinds.indexOf("toolResult"), kinds.join(","));
    // The last message: Claude Code's stream says which one is final (its `result` line); Codex's JSONL does not, so
    // there it is the last `message` (its `read` takes the same one as the receipt).
    const last = entries.at(-1)!;
    assert.deepEqual([last.kind, last.text], [agent === "claude" ? "final" : "message", "Done: the command ran (transcript)"]);
  });
}
