/**
 * The README's "Try it with Claude Code or Codex", walked as written: its rules.json (read from the README itself), a
 * real `agent-autoloop serve`, the real Claude Code against `npm run fake-model`'s model (tests/try-it-model.ts), the
 * key, the event, the card in cards.txt, the answer. What the section says happened must have happened: the answer
 * resumes the same session, NAME.txt holds the chosen name, `status` shows both runs with their own tokens and cost,
 * `why` the story.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engine, tempDir, until } from "./helpers.js";
import { startFakeModel } from "./fake-model.js";
import { tryItReply } from "./try-it-model.js";
import { agentEnv, agentsMissing } from "./real-agents.js";
import type { State } from "../src/protocol/responses.js";

const bin = join(engine, "bin", "agent-autoloop.js");
const execFileAsync = promisify(execFile);
const skip = agentsMissing(["claude"]);

/** The rules.json of the guide's "Try it" section (docs/guide/agents.md), with `folder` as the rule's cwd. */
function readmeRules(folder: string): string {
  const page = readFileSync(join(engine, "docs", "guide", "agents.md"), "utf8");
  const section = page.slice(page.indexOf("## Try it with Claude Code or Codex"));
  const block = /```jsonc\n([\s\S]*?)```/.exec(section)![1]!;
  assert.ok(block.includes('"cwd": "~/code/app"'), block);
  return block.replace('"cwd": "~/code/app"', `"cwd": ${JSON.stringify(folder)}`);
}

test("the guide's Try it section does what it says: a question, the answer resumes the session, NAME.txt holds the chosen name", { skip: skip ?? false }, async () => {
  const dir = tempDir("aa-try-it-");
  const model = await startFakeModel(tryItReply);
  const home = join(dir, "aa-home");
  const folder = join(dir, "app");
  mkdirSync(folder);
  const env = { ...process.env, ...agentEnv(model.url, dir), AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "", TZ: "UTC" };
  let hub: ChildProcess | null = null;
  after(async () => {
    if (hub && hub.exitCode === null) {
      const exited = new Promise((r) => hub!.once("exit", r));
      hub.kill("SIGTERM");
      await exited;
    }
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });
  let url = "";
  const cli = async (...args: string[]) => (await execFileAsync(process.execPath, [bin, ...args], { env: { ...env, AGENT_AUTOLOOP_URL: url }, encoding: "utf8" })).stdout.trim();

  await cli("init");
  writeFileSync(join(home, "rules.json"), readmeRules(folder));
  hub = spawn(process.execPath, [bin, "serve", "--listen", "127.0.0.1:0"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  hub.stdout!.on("data", (d) => (out += d));
  hub.stderr!.on("data", (d) => (out += d));
  url = (await until(() => /listening on (http:\/\/\S+)/.exec(out)?.[1], 60_000, () => `the hub to listen (output: ${out})`))!;

  const key = await cli("key", "new", "source", "demo");
  const posted = await fetch(`${url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: '{"id":"t1","type":"try.it"}' });
  assert.deepEqual(await posted.json(), { event: 1, duplicate: false, routed: ["ask-me"], paused: [] });

  const cards = join(home, "cards.txt");
  await until(() => existsSync(cards) && readFileSync(cards, "utf8").includes("Pick a name"), 180_000, () => `the card in cards.txt (hub output: ${out})`);
  const card = /── card (\d+) · v1 · ask · open · ask-me/.exec(readFileSync(cards, "utf8"))![1]!;
  assert.match(await cli("answer", card, "1"), /^card \d+: answered — Pick a name$/);
  const owner = JSON.parse(readFileSync(join(home, "config.json"), "utf8")).owner as string;
  const state = async () => (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json() as Promise<State>;
  const runs = await until(async () => {
    const s = await state();
    return s.runs.length === 2 && s.runs[0].state === "done" && s.runs;
  }, 180_000, () => `the second run to be done (hub output: ${out})`);

  assert.equal(readFileSync(join(folder, "NAME.txt"), "utf8"), "borealis\n", "the chosen name, written by the agent");
  assert.equal(runs[0].session, runs[1].session, "the answer resumed the same session");
  assert.deepEqual(runs.map((r) => r.summary), ['Done: wrote "borealis" in NAME.txt', "Needs you: which name should the project use?"]);
  const status = await cli("status");
  for (const run of [1, 2]) assert.match(status, new RegExp(`\\n  #${run} ask-me · done · \\S+ \\S+ · local · \\d+ tokens · \\$\\d+\\.\\d{4}\\n`), status);
  const why = await cli("why", "2");
  assert.match(why, new RegExp(`picked up by local · try 1 · continues session ${runs[0].session}`));
  assert.match(why, /done — Done: wrote "borealis" in NAME\.txt/);
});
