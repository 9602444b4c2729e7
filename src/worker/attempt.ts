/**
 * One attempt at a run on the worker (protocol.md Agent：领活、干活、交回执): the agent's folder and context file, its
 * plugin, prompt and tool bridge, its launches under detached supervisors (or its workflow), each watched to its end,
 * and its result. The attempt holds one `AbortSignal` (issue 27 #5): the owner's cancel aborts it, which stops the
 * launch under way, the tool call under way and every later step; the worker makes one per attempt (worker.ts).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join, resolve } from "node:path";
import type { Job } from "../protocol/responses.js";
import type { Notice, Result, Started } from "../protocol/schema.js";
import { check } from "../protocol/validate.js";
import type { PluginLoader } from "../plugins/index.js";
import { buildPrompt, rewritePrompt } from "./prompt.js";
import { addUsage, receiptErrorNotice, type ReadMessage } from "./receipt.js";
import { childEnv } from "./env.js";
import { launchAlive, launchSupervisors, readExit, readPids, processAlive, shellCode, sleep, startSupervised, stopGroup } from "./supervise.js";
import { moveAside, readRegular, unsharedCheckBytesMax, writeFileDurable } from "./files.js";
import type { OutputReader } from "./output.js";
import { sandboxArgv, type SandboxPlan } from "./sandbox.js";
import { launchSandbox, sandboxAround, withProgram, type SandboxWorker } from "./launch-sandbox.js";
import { launchArgv, toolsMcpVariable, type AgentPlugin, type AgentRead, type Turn, type Usage } from "../sdk/index.js";
import type { RunBridge, ToolBridges } from "./tool-bridge.js";
import type { TimedStep as TranscriptStep } from "./transcript-lines.js";
import { progressOf, runWorkflow } from "./workflow.js";
import { t } from "../i18n/messages.js";
import { receiptItemsMax, receiptRewritesMax, sandboxLaunchTriesMax, sessionMaxCodepoints } from "../kernel/limits.js";
import { plantedFolderName, type MovedAside } from "./planted.js";
import { markUnchecked } from "./unchecked.js";
import { mergeStateSeen, plantedRunNotice, plantedState, type StateFound, type StateSeen } from "./state-planted.js";
import { latestLaunch, loadLaunchRecord, plantedAfterRun, sandboxedLaunchBegun, saveLaunchRecord, type Watched } from "./launch-record.js";
import { neutralise, redact, relayed } from "../kernel/text.js";
import { sessionLinkPattern } from "../protocol/patterns.js";
import type { TranscriptEntry } from "../protocol/schema.js";
import { redactedDeep, runSecrets } from "./transcript.js";

/** How often a launch's files are read while it runs, in ms. */
const watchIntervalMs = 200;
/** What `watch` answers for a sandboxed launch bwrap ended before the agent ran (`Exit.setupFailed`). */
const setupFailed = Symbol("setupFailed");

/** What an attempt needs of its worker: its files and plugins, the hub, and how it reports. */
export interface AttemptHost extends SandboxWorker {
  plugins: PluginLoader;
  output: OutputReader;
  log: (line: string) => void;
  /** How long a launch may stay after its plugin said `finished` before its group is stopped, in ms. */
  finishedGraceMs: number;
  /** What this worker's checks after runs moved aside (planted.ts `MovedAside`; shared by its runs). */
  movedAside: MovedAside;
  /** Whether the worker process is stopping (the run is left to the next worker process: `Halted`). */
  stopped(): boolean;
  toolBridges(): Promise<ToolBridges>;
  /** Reports that the agent started (with its session and link, when known); never rejects. */
  started(job: Job, body: Started): Promise<void>;
  /**
   * Reports the result (kept in the run folder first), retrying until the hub answers; `own` are the worker's notices
   * in it, kept when the hub refuses the rest.
   */
  submit(job: Job, dir: string, body: Result, own?: Notice[]): Promise<void>;
  /** Sends a workflow's file to the hub: null when the hub has it, else why not (never rejects). */
  sendArtifact(job: Job, file: string, text: string): Promise<string | null>;
  /** Writes a file of a run's folder; a failure is logged, not thrown. */
  keep(file: string, content: string, run: number): void;
  /** Queues entries of the run's transcript for the hub (issue 30; transcript.ts); never throws. */
  transcript(job: Job, entries: TranscriptEntry[]): void;
}

/** One attempt at a run: `run()` once; `signal` aborts it (the owner cancelled the run). */
export class Attempt {
  /**
   * @param job the job (a repeated claim replaces its token in place)
   * @param dir the run's folder, `<home>/worker/runs/<run>-<attempt>/`
   * @param recovered whether an earlier worker process (or an earlier try) worked on it: go on from its files
   * @param signal aborted when the owner cancels the run
   */
  /**
   * The run's secrets (transcript.ts `runSecrets`): its token and what its rule's `env` grants, then also its CLI's
   * keys once the plugin is loaded. Replaced in everything the attempt reports of the agent (issue 26 round 9: a
   * granted GH_TOKEN the agent printed reached the run's summary, a notice card and the failure reason; only the
   * transcript was redacted).
   */
  private secrets: readonly string[];
  /** What the plugins the run may call take of the hub's environment (tool-bridge.ts `passedSecrets`): secrets too. */
  private passed: readonly string[] = [];

  constructor(
    private readonly host: AttemptHost,
    readonly job: Job,
    readonly dir: string,
    readonly recovered: boolean,
    private readonly signal: AbortSignal,
  ) {
    this.secrets = runSecrets(job, childEnv(process.env, job.agent.env ?? [], {}));
  }

  /** The run's secrets with the agent plugin's own variables (its CLI's keys) too. */
  private knowPlugin(plugin: AgentPlugin): void {
    this.secrets = runSecrets(this.job, childEnv(process.env, [...(plugin.passEnv ?? []), ...(this.job.agent.env ?? [])], {}), this.passed);
  }

  /** What the launches' sandboxes guarded in the folders the agent writes (steering.ts), looked at when the run ends. */
  private watched: Watched | null = null;
  /**
   * Whether this attempt took the run over after a restart with no record of what its earlier launches guarded
   * (launch-record.ts): its folders are then named as not looked at, whatever later launches guard.
   */
  private unrecorded = false;
  /** What the launches saw of the CLI's state folders (state-planted.ts), looked at when the run ends; what that found. */
  private stateWatched: StateSeen | null = null;
  private stateFound: Promise<StateFound> | null = null;

  /**
   * Reports the result with the run's secrets replaced in every text of it; first moves aside what the agent planted
   * for the owner's git that no sandbox mount could refuse (steering.ts `plantedSteering`) and what it left new in its
   * CLI's state (state-planted.ts `plantedState`), saying so in a notice.
   */
  private async submit(body: Result): Promise<void> {
    // What is moved goes where no sandbox reaches, so no other run puts it back (round 29, F29a-1).
    const to = { run: this.job.run, quarantine: join(this.host.home.worker, plantedFolderName), moved: this.host.movedAside, copies: { bytesLeft: unsharedCheckBytesMax, made: new Map<string, string>() } };
    const planted = plantedAfterRun(this.watched, to, this.unrecorded ? this.job : null, expandHome);
    // A folder not looked through holds later launches there until the owner has looked (round 30, F30a-1).
    markUnchecked(this.host.home.worker, this.job.run, planted);
    // Once per attempt: what it moved aside is new beside what the launches saw, and would be moved again. Awaited: the
    // check yields to the hub's other work (F19-6).
    this.stateFound ??= this.stateWatched ? plantedState(this.stateWatched, to) : Promise.resolve({ planted: [], more: 0 });
    const state = await this.stateFound;
    const notice = plantedRunNotice(planted, state.planted, this.host.lang, state.more);
    if (notice) body = { ...body, workerNotice: [notice, ...(body.workerNotice ?? [])].slice(0, receiptItemsMax) };
    return this.host.submit(this.job, this.dir, redactedDeep(body, this.secrets), notice ? [redactedDeep(notice, this.secrets)] : []);
  }

  /** Whether the run was cancelled. */
  private get cancelled(): boolean {
    return this.signal.aborted;
  }

  /**
   * Runs the attempt to its result: the agent folder and context file, the plugin, the cwd, the prompt and the
   * run's tool bridge; then its launches (or its workflow), and the result reported. A cancel ends it early.
   * @throws what the worker's own files or processes throw (the worker tries again as after a restart); `Halted`.
   */
  async run(): Promise<void> {
    const { job, dir, recovered } = this;
    const lang = this.host.lang;
    // The agent's own folder: the only part of the run folder it needs (and, sandboxed, the only part it sees).
    const agentDir = join(dir, "agent");
    const contextFile = join(agentDir, "context.json");
    saveJob(job, dir);
    // What the launches of an earlier worker process guarded, for the check after the run (round 32, F32a-1). A result
    // kept already went through that check (result.json is written after it): checked again, it would move what the
    // owner did since (moved back from the quarantine, say) and say so twice.
    const resultKept = recovered && existsSync(join(dir, "result.json"));
    const record = recovered && !resultKept ? loadLaunchRecord(dir) : null;
    if (record) [this.watched, this.stateWatched] = [record.watched, record.state];
    this.unrecorded = recovered && !resultKept && !record && sandboxedLaunchBegun(dir);
    if (!recovered || !existsSync(contextFile)) {
      mkdirSync(agentDir, { recursive: true, mode: 0o700 });
      writeFileDurable(contextFile, JSON.stringify({ run: job.run, attempt: job.attempt, rule: job.rule.name, ...job.context }, null, 2));
    }
    const submit = (body: Result) => this.submit(body);
    if (resultKept) {
      // The body this worker kept before it stopped; one that no longer reads as a result reports why instead.
      const kept = check("Result", JSON.parse(readRegular(join(dir, "result.json"), lang)), lang);
      return submit(kept.ok ? kept.value : { outcome: "failed", error: t(lang, "run.keptResult", { error: kept.error }), session: job.session });
    }

    let plugin: AgentPlugin;
    try {
      // Before anything is reported: a plugin the run may call can hand the agent what it takes of the hub's environment.
      if ((job.tools ?? []).length > 0) this.passed = await (await this.host.toolBridges()).passedSecrets(job);
      plugin = await this.host.plugins.load<AgentPlugin>("agent", job.agent.use);
      this.knowPlugin(plugin);
    } catch (e) {
      return submit({ outcome: "failed", error: (e as Error).message, session: job.session });
    }
    const cwd = expandHome(job.rule.cwd ?? "~");
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
      return submit({ outcome: "failed", error: t(lang, "run.cwdMissing", { cwd, worker: this.host.name }), session: job.session });
    }
    // A prompt by reference (issue 18): the declarative prompt's text, then the rule's own prompt.
    if (job.declared?.prompt === null) return submit({ outcome: "failed", error: t(lang, "rule.promptNotLoaded", { prompt: job.rule.promptRef ?? "" }), session: job.session });
    const rulePrompt = [job.declared?.prompt, job.rule.prompt].filter((x): x is string => typeof x === "string" && x !== "").join("\n\n") || null;
    const prompt = buildPrompt({ rule: { ...job.rule, prompt: rulePrompt }, askFirst: job.askFirst, contextFile, lang });
    // The rule's tools: a server of this run, answering only its own processes (found under its launches' supervisors),
    // reached through a relay; not for a workflow, whose tools are its tool steps' (issue 26 round 53, F53b-2).
    let bridge: RunBridge | null = null;
    if ((job.tools ?? []).length > 0 && job.rule.workflow === undefined) {
      try {
        bridge = await (await this.host.toolBridges()).open(job, agentDir, () => launchSupervisors(dir), () => this.secrets);
      } catch (e) {
        return submit({ outcome: "failed", error: t(lang, "bridge.open", { error: (e as Error).message }), session: job.session });
      }
    }
    const turnBase: Omit<Turn, "prompt" | "resume"> = {
      session: job.session, cwd, access: job.agent.access as Turn["access"], model: job.agent.model, effort: job.agent.effort,
      command: job.agent.command, program: job.agent.program, contextFile, folder: agentDir, tools: bridge?.offer ?? null,
    };
    try {
      if (job.rule.workflow !== undefined) await this.workflow(plugin, turnBase);
      else await this.launches(plugin, turnBase, prompt);
    } finally {
      await bridge?.close();
    }
  }

  /** The launches of a run: the run itself (or, after a restart, the one under way), receipt rewrites; then its result. */
  private async launches(plugin: AgentPlugin, turnBase: Omit<Turn, "prompt" | "resume">, prompt: string): Promise<void> {
    const { job, dir, recovered } = this;
    const lang = this.host.lang;
    const submit = (body: Result) => this.submit(body);

    // Launch 1: the run itself, continuing the suggested session; a refused session opens a new one.
    let launch = recovered ? latestLaunch(dir) : 0;
    let usage: Usage = {};
    let read: AgentRead | null;
    let resume = job.session;
    if (recovered && launch > 0) {
      read = await this.watch(plugin, join(dir, String(launch)), true);
    } else {
      launch += 1;
      read = await this.launch(plugin, launch, { ...turnBase, prompt, resume });
      if (read && !read.started && resume && (read.error || typeof read.text !== "string") && !this.cancelled) {
        // Not started on the resumed session: it was refused; run the prompt again in a new session.
        resume = null;
        launch += 1;
        read = await this.launch(plugin, launch, { ...turnBase, prompt, resume: null });
      }
    }
    if (this.cancelled) return submit({ outcome: "cancelled", session: read?.session ?? resume ?? null, usage: read?.usage });
    addUsage(usage, read?.usage);
    addUsage(usage, this.launchUsage(job.agent.use, read, resume !== null));
    const session = read?.session ?? (read?.started ? resume : null) ?? null;
    if (!read) return submit({ outcome: "failed", error: t(lang, "field.invalid", { field: `plugin ${job.agent.use}` }), session: resume, usage });
    if (read.error || typeof read.text !== "string") {
      return submit({ outcome: "failed", error: read.error ?? "the agent gave no last message", session, usage });
    }
    // Read in the output thread: a command agent's last message is its whole output, megabytes long.
    let msg: ReadMessage = await this.host.output.message(read.text);
    let receiptError = msg.receiptError;
    // A bad receipt: resume the same session and ask only for the last message again, at most twice.
    for (let i = 0; receiptError && session && i < receiptRewritesMax && !this.cancelled; i++) {
      launch += 1;
      const again = await this.launch(plugin, launch, { ...turnBase, prompt: rewritePrompt(receiptError, lang), resume: session });
      addUsage(usage, again?.usage);
      addUsage(usage, this.launchUsage(job.agent.use, again, true));
      if (!again || again.error || typeof again.text !== "string") break;
      const fixed = await this.host.output.message(again.text);
      receiptError = fixed.receiptError;
      if (!receiptError) msg = { ...msg, receipt: fixed.receipt, receiptError: null };
    }
    if (this.cancelled) return submit({ outcome: "cancelled", session, usage });
    const body: Result = { outcome: msg.outcome, summary: msg.summary, session, usage };
    if (msg.error) body.error = msg.error;
    const notice = [...(msg.receipt.notice ?? [])];
    if (receiptError) {
      // The worker's own word on the receipt: a card of the hub's, which no later receipt closes (F23-2).
      const n = receiptErrorNotice(msg, receiptError, job.run, join(dir, String(launch), "stdout"), lang);
      body.workerNotice = [{ title: neutralise(n.title, true), text: neutralise(n.text, false) }];
    }
    if (msg.outcome === "failed") {
      if (notice.length) body.notice = notice;
    } else if (!receiptError || msg.unasked) { // a message that only lacked an ask keeps the rest of its receipt
      Object.assign(body, msg.receipt);
      if (notice.length) body.notice = notice;
    } else if (notice.length) body.notice = notice;
    return submit(body);
  }

  /**
   * A run of a rule with `"use": "workflow"` (issue 18): the built-in `workflow` agent (workflow.ts) drives the steps
   * from the position the session names; its `prompt` steps are launches of the rule's agent like any run's, its `tool`
   * steps calls through the tool bridge. After a worker restart the run goes on from the last position it kept (a
   * prompt step under way is stopped and run again).
   */
  private async workflow(plugin: AgentPlugin, turnBase: Omit<Turn, "prompt" | "resume">): Promise<void> {
    const { job, dir, recovered } = this;
    const lang = this.host.lang;
    const progressFile = join(dir, "workflow-position");
    let launch = recovered ? latestLaunch(dir) : 0;
    if (recovered && launch > 0 && agentRunning(dir)) await stopGroup(join(dir, String(launch)));
    await runWorkflow({
      job, lang, statesDir: join(this.host.home.worker, "workflows"), agentDir: turnBase.folder,
      launch: async (text) => {
        launch += 1;
        const prompt = buildPrompt({ rule: { name: job.rule.name, prompt: text, skill: job.rule.skill }, askFirst: job.askFirst, contextFile: turnBase.contextFile, lang });
        const read = await this.launch(plugin, launch, { ...turnBase, session: null, prompt, resume: null });
        const extra = this.launchUsage(job.agent.use, read, false);
        return read && extra ? { ...read, usage: { ...read.usage, ...extra } } : read;
      },
      message: (text) => this.host.output.message(text),
      callTool: async (name, args) => {
        const r = await (await this.host.toolBridges()).callFor(job, name, args, this.signal, this.secrets);
        const text = r.content.map((b) => (b.type === "text" ? b.text : JSON.stringify(b))).join("\n");
        if (!r.isError) return { ok: true, text };
        const meta = r._meta as { awaitingCard?: number | null; denied?: boolean } | undefined;
        return { ok: false, error: text, ...(meta?.awaitingCard !== undefined ? { awaitingCard: meta.awaitingCard } : {}), ...(meta?.denied ? { denied: true } : {}) };
      },
      isCancelled: () => this.cancelled,
      sendArtifact: (file, text) => this.host.sendArtifact(job, file, redact(text, this.secrets)),
      progress: (session) => this.host.keep(progressFile, session, job.run),
      submit: (body) => this.submit(body),
    }, recovered ? progressOf(progressFile) : null);
  }

  /**
   * Starts one launch of the agent and watches it to its end. A sandboxed launch that bwrap ended before the agent ran
   * (`Exit.setupFailed`: the plan no longer fit the machine, a mount in it gone since it was read) is planned again
   * and started once more, its first folder kept beside as `<n>.setup-failed`; nothing of the agent ran in it.
   */
  private async launch(plugin: AgentPlugin, n: number, turn: Turn): Promise<AgentRead | null> {
    const ldir = join(this.dir, String(n));
    for (let tries = 1; ; tries++) {
      const read = await this.launchOnce(plugin, n, turn, ldir, tries);
      if (read !== setupFailed) return read;
      moveAside(ldir, `${ldir}.setup-failed`);
    }
  }

  /**
   * One start of launch `n` in `ldir` (try `tries`, from 1), watched to its end: `setupFailed` when bwrap could not set
   * the sandbox up and another try is left (`sandboxLaunchTriesMax`); the last try's failure is read as any exit.
   */
  private async launchOnce(plugin: AgentPlugin, n: number, turn: Turn, ldir: string, tries: number): Promise<AgentRead | null | typeof setupFailed> {
    const { job } = this;
    const lang = this.host.lang;
    mkdirSync(ldir, { recursive: true, mode: 0o700 });
    let argv: string[];
    let env: Record<string, string>;
    let sandbox: ReturnType<typeof launchSandbox>;
    // Before the guard looks: a file changed after this is the run's (its ctime; index-stat.ts).
    const sinceMs = Date.now();
    try {
      const extra = plugin.env?.(turn) ?? {};
      const allow = [...(plugin.passEnv ?? []), ...(job.agent.env ?? [])];
      const tools: Record<string, string> = turn.tools ? { [toolsMcpVariable]: JSON.stringify(turn.tools.command) } : {};
      env = childEnv(process.env, allow, { ...extra, AGENT_AUTOLOOP_CONTEXT: turn.contextFile, AGENT_AUTOLOOP_RUN: String(job.run), ...tools });
      sandbox = launchSandbox(this.host, job, turn, plugin, env);
      if ("error" in sandbox) return { error: sandbox.error };
      const watch = sandbox.plan?.watch;
      // What was guarded before the run's first launch: a later launch guards what the first one planted.
      if (watch) this.watched ??= { folders: new Set(watch.folders), guarded: new Set(watch.guarded), seen: watch.seen, sinceMs, config: watch.config, gitState: watch.gitState };
      if (sandbox.stateSeen) this.stateWatched = this.stateWatched ? mergeStateSeen(this.stateWatched, sandbox.stateSeen) : sandbox.stateSeen;
      // The plugin learns the sandbox around its CLI before it builds the command line (Turn.sandbox).
      argv = plugin.command({ ...turn, sandbox: sandboxAround(sandbox.plan) });
    } catch (e) {
      return { error: t(lang, "run.pluginFailed", { plugin: job.agent.use, error: (e as Error).message }) };
    }
    // Kept before the launch starts, for a worker that takes the run over after a restart (launch-record.ts).
    const unkept = sandbox.plan ? saveLaunchRecord(this.dir, this.watched, this.stateWatched, lang) : null;
    if (unkept !== null) return { error: unkept };
    if (!Array.isArray(argv) || argv.length === 0 || argv.some((a) => typeof a !== "string")) return { error: t(lang, "run.pluginNoArgv", { plugin: job.agent.use }) };
    // Windows: PATH + PATHEXT, npm's .cmd shims run by their JS entry, other batch files refused (src/sdk/launch.ts).
    const program = launchArgv(argv, { env, cwd: turn.cwd, lang: this.host.lang });
    if ("error" in program) return { error: program.error };
    if (sandbox.plan) {
      // Every bind source is opened by the supervisor and given to bwrap by descriptor (issue 26 round 2 #3–#5).
      const launch = sandboxArgv(withProgram(sandbox.plan, program.argv[0]!, env), program.argv);
      await startSupervised(ldir, launch.argv, turn.cwd, env, true, this.host.lang, launch.sources, launch.network);
    } else await startSupervised(ldir, program.argv, turn.cwd, env, false, this.host.lang);
    if (tries === 1) this.host.transcript(job, [{ at: Date.now(), attempt: job.attempt, launch: n, kind: "start" }]);
    return this.watch(plugin, ldir, false, sandbox.plan !== null && tries < sandboxLaunchTriesMax);
  }

  /** Watches a launch: reports start and session, stops it when cancelled or 30 s after `finished`. */
  private async watch(plugin: AgentPlugin, ldir: string, recovered: false, setupMayFail: boolean): Promise<AgentRead | null | typeof setupFailed>;
  private async watch(plugin: AgentPlugin, ldir: string, recovered: true): Promise<AgentRead | null>;
  /** @param setupMayFail a fresh sandboxed launch: one bwrap ended before the agent ran answers `setupFailed`. */
  private async watch(plugin: AgentPlugin, ldir: string, recovered: boolean, setupMayFail = false): Promise<AgentRead | null | typeof setupFailed> {
    const job = this.job;
    let reportedSession: string | null | undefined = recovered ? undefined : null;
    let startedSent = false;
    let finishedAt: number | null = null;
    let stopping: Promise<void> | null = null;
    const stop = () => {
      stopping ??= stopGroup(ldir);
    };
    // The attempt's signal stops the launch under way (the owner cancelled the run).
    this.signal.addEventListener("abort", stop, { once: true });
    if (this.cancelled) stop();
    // The plugin reads a bounded window of the output, in the output thread: off this event loop (output.ts). The
    // same reading maps new lines to transcript steps, with the run's secrets replaced there (transcript-lines.ts).
    const launch = Number(basename(ldir));
    const transcript = {
      secrets: this.secrets,
      steps: (steps: TranscriptStep[]) => this.host.transcript(job, steps.map((s) => ({ ...s, attempt: job.attempt, launch }))),
    };
    const read = (code: number | null) => this.host.output.read(ldir, job.agent.use, code, transcript);
    try {
      for (;;) {
        if (this.host.stopped()) throw new Halted();
        const exit = readExit(ldir);
        if (exit) {
          if (stopping) await stopping;
          if (exit.setupFailed && setupMayFail && !stopping) return setupFailed;
          if (exit.error) return { error: t(this.host.lang, "run.couldNotStart", { agent: job.agent.use, error: exit.error }) };
          return await read(shellCode(exit));
        }
        const pids = readPids(ldir);
        if (pids && !processAlive(pids.supervisor) && !readExit(ldir)) return { error: t(this.host.lang, "run.supervisorGone") };
        if (!pids && !readExit(ldir)) return { error: t(this.host.lang, "run.didNotStart") };
        const r = await read(null);
        if (r && !startedSent) {
          startedSent = true;
          await this.host.started(job, {});
        }
        if (r?.session && r.session !== reportedSession) {
          reportedSession = r.session;
          const link = plugin.link?.(r.session) ?? null;
          const shown = typeof link === "string" && new RegExp(sessionLinkPattern).test(link) ? link : null;
          await this.host.started(job, redactedDeep({ session: relayedSession(r.session), link: shown }, this.secrets));
        }
        if (r?.finished && finishedAt === null) finishedAt = Date.now();
        if (finishedAt !== null && Date.now() - finishedAt > this.host.finishedGraceMs) stop();
        await sleep(watchIntervalMs);
      }
    } finally {
      this.signal.removeEventListener("abort", stop);
      this.host.output.forget(ldir);
    }
  }

  /**
   * This launch's share of figures a CLI reports only per session (`sessionUsage`): the new total minus the total
   * recorded after the session's previous launch, from the ledger in `worker/usage/` (kept across worker restarts).
   * A new session's total is all this launch's. A resumed session without a record, or a total that went down,
   * reports nothing for that figure: no guessing.
   */
  private launchUsage(use: string, read: AgentRead | null, resumed: boolean): Usage | undefined {
    if (!read?.sessionUsage || !read.session) return undefined;
    const dir = join(this.host.home.worker, "usage");
    const file = join(dir, `${createHash("sha256").update(`${use}\u0000${read.session}`).digest("hex").slice(0, 40)}.json`);
    let before: Usage | null = null;
    try {
      before = JSON.parse(readRegular(file)) as Usage;
    } catch {
      before = null;
    }
    const out: Usage = {};
    for (const k of ["input", "output", "cached", "cost"] as const) {
      const now = read.sessionUsage[k];
      if (typeof now !== "number") continue;
      const prev = before?.[k];
      if (!resumed) out[k] = now;
      else if (typeof prev === "number" && now >= prev) out[k] = now - prev;
    }
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileDurable(file, JSON.stringify({ ...before, ...read.sessionUsage }));
    } catch (e) {
      // This launch's figures stand; the ledger stays behind, so the session's next launch counts them again.
      this.host.log(t(this.host.lang, "worker.log", { name: this.host.name, error: (e as Error).message }));
    }
    return out;
  }
}

/** Writes the run's folder and `job.json`, from which a restarted worker picks the run up. */
export function saveJob(job: Job, dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileDurable(join(dir, "job.json"), JSON.stringify(job));
}

/** Expands `~/` and `~\` to the home directory; other paths are resolved as they are. */
export function expandHome(p: string): string {
  if (p === "~") return homedir();
  if (p.startsWith("~/") || p.startsWith("~\\")) return join(homedir(), p.slice(2));
  return resolve(p);
}

/** A session id as a CLI printed it, made acceptable to the hub (one line, at most `sessionMaxCodepoints`). */
export function relayedSession(session: string): string {
  return relayed(session, true, sessionMaxCodepoints);
}

/** The worker process is stopping: leave the run to the next worker process. */
export class Halted extends Error {}

/** Whether an agent process of the run in `dir` may still be there: its latest launch has a live group and no exit. */
export function agentRunning(dir: string): boolean {
  try {
    const ldir = join(dir, String(latestLaunch(dir)));
    const pids = readPids(ldir);
    return pids !== null && readExit(ldir) === null && launchAlive(pids);
  } catch (e) {
    // No folder (or a file in its place): nothing was started. Any other error (EMFILE, EIO): cannot tell, so keep
    // trying rather than report a run whose agent may go on.
    const code = (e as NodeJS.ErrnoException).code;
    return code !== "ENOENT" && code !== "ENOTDIR";
  }
}
