/**
 * The worker (protocol.md Agent：领活、干活、交回执): claims runs over HTTP, launches each agent under a detached
 * supervisor, reports start and result, stops runs the owner cancels, and after a restart picks up the runs it
 * was watching. Its own keys never reach the agent: not in the prompt, the context file or the environment.
 *
 * A run's folder (`<home>/worker/runs/<run>-<attempt>/`) keeps the worker's own files (job.json with the run token,
 * result.json, each launch's spec, output and exit code); the agent gets only its `agent/` subfolder (the context
 * file), and where bubblewrap runs it cannot see the rest of the home at all (sandbox.ts).
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { HubClient, HubError } from "../protocol/client.js";
import type { Job } from "../protocol/responses.js";
import type { Result } from "../protocol/schema.js";
import { check } from "../protocol/validate.js";
import { PluginLoader } from "../plugins/index.js";
import type { Home } from "../common/paths.js";
import { buildPrompt, rewritePrompt } from "./prompt.js";
import { receiptErrorNotice, type ReadMessage } from "./receipt.js";
import { childEnv } from "./env.js";
import { launchAlive, launchSupervisors, readExit, readPids, processAlive, sleep, startSupervised, stopGroup } from "./supervise.js";
import { readRegular, writeFileDurable } from "./files.js";
import { OutputReader } from "./output.js";
import { expandTilde, hubOrigin, isInside, placeProblem, readOnlyPaths, realPath, sandboxArgv, sandboxHere, userHomes, type SandboxPlan } from "./sandbox.js";
import { checkDevice, deviceRefusalText } from "../tools/devices.js";
import { launchArgv, toolsMcpVariable, type AgentPlugin, type AgentRead, type Turn, type Usage } from "../sdk/index.js";
import type { RunBridge, ToolBridges } from "./tool-bridge.js";
import type { ToolHost } from "../tools/index.js";
import type { DataTools } from "../tools/index.js";
import { progressOf, runWorkflow } from "./workflow.js";
import { t, type Lang } from "../i18n/messages.js";
import { longPollMaxSeconds, receiptRewritesMax, runErrorMaxCodepoints, runOutputKeepMs, runSummaryMaxCodepoints, sessionMaxCodepoints } from "../kernel/limits.js";
import { neutralise, relayed } from "../kernel/text.js";
import { sessionLinkPattern } from "../protocol/patterns.js";

/** 接一个新 Agent: after `finished`, a process still there 30 s later is stopped. */
const finishedGraceMs = 30_000;
const watchIntervalMs = 200;
/**
 * After a failed write of the worker's own files (EISDIR, ENOSPC, EMFILE, …): the first wait before trying again, in
 * ms; it doubles up to `workerFaultRetryMaxMs`. The claim loop never stops for such a fault.
 */
export const workerFaultRetryFirstMs = 1_000;
export const workerFaultRetryMaxMs = 30_000;
/** Tries to send a workflow's artifact to a hub that cannot be reached (issue 18), with the backoff above. */
export const artifactSendTries = 4;
/**
 * A run the worker fails on (its files cannot be written, say) is tried this many times, then — once none of its
 * agent processes is left — reported "not run", so that it never hangs on the worker.
 */
export const runFaultTriesMax = 5;

export interface WorkerOptions {
  url: string;
  key: string;
  name: string;
  /** How many runs at once (config.json worker.capacity, default 2). */
  capacity: number;
  home: Home;
  lang: Lang;
  log?: (line: string) => void;
  /** How long a launch may stay after its plugin said `finished` before its group is stopped, in ms (default 30 s). */
  finishedGraceMs?: number;
  /** The first wait after a fault of the worker's own files, in ms (default `workerFaultRetryFirstMs`; tests). */
  faultRetryFirstMs?: number;
  /** Finds and keeps agent plugins (`serve` passes its hub's); default: a loader of `home.plugins` of its own. */
  plugins?: PluginLoader;
  /**
   * The declarative plugins' HTTP tools (kind `http`, issue 18) its runs may be offered beside the tool plugins
   * (`serve` passes its hub's catalog: loaded, watched, secrets from the home); default: none.
   */
  data?: DataTools;
  /**
   * The tool host its runs' tools are run by (`serve` passes its hub's: started with serve, its services supervised
   * there, their stderr in the hub's log); default: one of its own over `home`'s plugins, watched, made at first need.
   */
  toolHost?: () => Promise<ToolHost>;
}

interface Active {
  run: number;
  /** The job being run; a repeated claim replaces its token here (the old token stops working). */
  job: Job;
  dir: string;
  cancel: () => void;
  done: Promise<void>;
}

/** Expands `~/` and `~\` to the home directory; other paths are resolved as they are. */
export function expandHome(p: string): string {
  if (p === "~") return homedir();
  if (p.startsWith("~/") || p.startsWith("~\\")) return join(homedir(), p.slice(2));
  return resolve(p);
}

export class Worker {
  private readonly client: HubClient;
  private readonly active = new Map<number, Active>();
  private pollAbort: AbortController | null = null;
  private stopped = false;
  private readonly runsDir: string;
  private readonly log: (line: string) => void;
  private readonly output: OutputReader;
  private readonly plugins: PluginLoader;
  /** Whether the worker said that agents run without a sandbox here (once per process). */
  private sandboxOffSaid = false;
  private bridges: Promise<ToolBridges> | null = null;

  constructor(readonly opts: WorkerOptions) {
    this.client = new HubClient(opts.url, opts.key);
    this.runsDir = join(opts.home.worker, "runs");
    this.log = opts.log ?? (() => {});
    this.plugins = opts.plugins ?? new PluginLoader(opts.home.plugins);
    this.output = new OutputReader(opts.name, opts.lang, this.plugins.roots, this.log);
  }

  /**
   * Runs the claim loop until `stop()`. Picks up unfinished runs of an earlier worker process first. Never rejects
   * for a fault of its own files: while the claim id cannot be kept on disk it claims nothing new but still reports
   * the runs in hand (heartbeat), logs the fault once, and tries again with backoff; it says so when the fault goes.
   */
  async run(): Promise<void> {
    // The claim id is kept on disk before each request: a worker that dies before it saw the answer asks again
    // with the same id after a restart and gets the same job back (protocol.md 失败时会怎样: 领活的响应丢了).
    const claimFile = join(this.opts.home.worker, "claim");
    let prepared = false;
    let first = true;
    let claim: string | null = null;
    let fault: string | null = null;
    const firstWaitMs = this.opts.faultRetryFirstMs ?? workerFaultRetryFirstMs;
    let faultWaitMs = firstWaitMs;
    const takeClaim = (): string => {
      if (first) {
        let kept = "";
        try {
          kept = readRegular(claimFile).trim();
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
        }
        first = false;
        if (kept) return kept;
      }
      const id = randomUUID();
      writeFileDurable(claimFile, id);
      return id;
    };
    while (!this.stopped) {
      try {
        if (!prepared) {
          mkdirSync(this.runsDir, { recursive: true, mode: 0o700 });
          this.cleanOld();
          this.recover();
          prepared = true;
        }
        claim ??= takeClaim();
        if (fault !== null) this.log(t(this.opts.lang, "worker.fileRecovered", { name: this.opts.name }));
        fault = null;
        faultWaitMs = firstWaitMs;
      } catch (e) {
        const text = (e as Error).message;
        if (text !== fault) this.log(t(this.opts.lang, "worker.fileFault", { name: this.opts.name, error: text, seconds: faultWaitMs / 1000 }));
        fault = text;
      }
      // While faulty: a heartbeat for the runs in hand under an id kept nowhere, which can be given no job.
      const faulty = fault !== null;
      const free = faulty ? 0 : Math.max(0, this.opts.capacity - this.active.size);
      const ac = new AbortController();
      this.pollAbort = ac;
      let res: Awaited<ReturnType<HubClient["work"]>>;
      try {
        const wait = faulty ? Math.ceil(faultWaitMs / 1000) : longPollMaxSeconds;
        res = await this.client.work({ claim: claim ?? randomUUID(), wait, running: [...this.active.keys()], capacity: free }, ac.signal);
      } catch (e) {
        if (this.stopped) break;
        if (ac.signal.aborted) continue; // same claim id again: a job claimed meanwhile comes back
        if (e instanceof HubError && (e.status === 401 || e.status === 403)) {
          this.log(t(this.opts.lang, "worker.log", { name: this.opts.name, error: e.message }));
          await sleep(30_000);
        } else await sleep(2_000);
        continue;
      } finally {
        this.pollAbort = null;
      }
      if (faulty) faultWaitMs = Math.min(faultWaitMs * 2, workerFaultRetryMaxMs);
      else claim = null; // the next request gets a new id, kept on disk first
      if (res.job) this.begin(res.job);
      for (const id of res.cancel) this.active.get(id)?.cancel();
    }
  }

  /**
   * Stops claiming and watching. Agents keep running under their supervisors; the next worker process picks
   * them up from their run folders and reports them.
   */
  stop(): void {
    this.stopped = true;
    this.pollAbort?.abort();
    this.output.close();
    // The runs' tool servers and the tool host's plugins end with this worker (agents reach them again through their
    // relays once the next worker process serves the runs' sockets).
    void this.bridges?.then((b) => b.close()).catch(() => {});
  }

  /** The tool bridges of this worker, loaded at the first run that offers tools (a worker without any loads none). */
  private toolBridges(): Promise<ToolBridges> {
    this.bridges ??= import("./tool-bridge.js").then(({ ToolBridges }) => new ToolBridges({
      url: this.opts.url, home: this.opts.home, lang: this.opts.lang, log: this.log, ...(this.opts.data ? { data: this.opts.data } : {}),
      ...(this.opts.toolHost ? { toolHost: this.opts.toolHost } : {}),
    }));
    return this.bridges;
  }

  /** Waits for the runs this process is watching to be reported (tests). */
  async idle(): Promise<void> {
    while (this.active.size > 0) await Promise.all([...this.active.values()].map((a) => a.done));
  }

  private nudge(): void {
    this.pollAbort?.abort();
  }

  /** Takes a claimed job: watches it, or updates the token of one watched already. Never throws. */
  private begin(job: Job): void {
    const known = this.active.get(job.run);
    if (known) {
      // the same job again after a restart: keep watching, new token
      known.job.token = job.token;
      try {
        this.saveJob(known.job, known.dir);
      } catch (e) {
        this.log(t(this.opts.lang, "worker.runLog", { run: job.run, error: (e as Error).message }));
      }
    } else this.track(job, join(this.runsDir, `${job.run}-${job.attempt}`), existsSync(join(this.runsDir, `${job.run}-${job.attempt}`, "1")));
  }

  /** Writes the run's folder and `job.json`, from which a restarted worker picks the run up. */
  private saveJob(job: Job, dir: string): void {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileDurable(join(dir, "job.json"), JSON.stringify(job));
  }

  private track(job: Job, dir: string, recovered: boolean): void {
    let cancelled = false;
    let onCancel: (() => void) | null = null;
    const a: Active = {
      run: job.run,
      job,
      dir,
      cancel: () => {
        cancelled = true;
        onCancel?.();
      },
      done: Promise.resolve(),
    };
    a.done = (async () => {
      // A failure of the worker's own files or processes (not of the agent) is tried again as after a restart; after
      // `runFaultTriesMax` tries, a run with no agent process left is reported "not run", so it never hangs.
      for (let tries = 1, again = recovered; ; tries++, again = true) {
        try {
          await this.execute(job, dir, again, () => cancelled, (f) => (onCancel = f));
          return;
        } catch (e) {
          if (e instanceof Halted || this.stopped) return;
          const error = (e as Error).message;
          if (tries >= runFaultTriesMax && !agentRunning(dir)) {
            await this.submit(job, dir, { outcome: "failed", error: t(this.opts.lang, "worker.runGaveUp", { error }), session: job.session }).catch(() => {});
            return;
          }
          const waitMs = Math.min((this.opts.faultRetryFirstMs ?? workerFaultRetryFirstMs) * 2 ** (tries - 1), workerFaultRetryMaxMs);
          this.log(t(this.opts.lang, "worker.runFault", { run: job.run, error, seconds: waitMs / 1000 }));
          await sleep(waitMs);
        }
      }
    })().finally(() => {
      this.active.delete(job.run);
      this.nudge();
    });
    this.active.set(job.run, a);
  }

  /** Picks up runs an earlier worker process started and did not report. */
  private recover(): void {
    if (!existsSync(this.runsDir)) return;
    for (const name of readdirSync(this.runsDir)) {
      const dir = join(this.runsDir, name);
      if (existsSync(join(dir, "submitted")) || !existsSync(join(dir, "job.json"))) continue;
      try {
        const job = JSON.parse(readRegular(join(dir, "job.json"))) as Job;
        if (!this.active.has(job.run)) this.track(job, dir, true);
      } catch (e) {
        // A file that is not JSON (written before writes were atomic) or not a regular file is left for the owner, and
        // said; too many open files fails this pick-up, which the claim loop tries again.
        if (["EMFILE", "ENFILE"].includes((e as NodeJS.ErrnoException).code ?? "")) throw e;
        this.log(t(this.opts.lang, "worker.unreadableJob", { name: this.opts.name, file: join(dir, "job.json"), error: (e as Error).message }));
      }
    }
  }

  /** Removes run folders that were reported more than 14 days ago. */
  private cleanOld(): void {
    if (!existsSync(this.runsDir)) return;
    const limit = Date.now() - runOutputKeepMs;
    for (const name of readdirSync(this.runsDir)) {
      const marker = join(this.runsDir, name, "submitted");
      try {
        if (statSync(marker).mtimeMs < limit) rmSync(join(this.runsDir, name), { recursive: true, force: true });
      } catch {
        // not reported yet or already gone
      }
    }
  }

  private async execute(job: Job, dir: string, recovered: boolean, isCancelled: () => boolean, setCancel: (f: () => void) => void): Promise<void> {
    const lang = this.opts.lang;
    // The agent's own folder: the only part of the run folder it needs (and, sandboxed, the only part it sees).
    const agentDir = join(dir, "agent");
    const contextFile = join(agentDir, "context.json");
    this.saveJob(job, dir);
    if (!recovered || !existsSync(contextFile)) {
      mkdirSync(agentDir, { recursive: true, mode: 0o700 });
      writeFileDurable(contextFile, JSON.stringify({ run: job.run, attempt: job.attempt, rule: job.rule.name, ...job.context }, null, 2));
    }
    const submit = (body: Result) => this.submit(job, dir, body);
    if (recovered && existsSync(join(dir, "result.json"))) {
      // The body this worker kept before it stopped; one that no longer reads as a result reports why instead.
      const kept = check("Result", JSON.parse(readRegular(join(dir, "result.json"))), lang);
      return submit(kept.ok ? kept.value : { outcome: "failed", error: `result.json: ${kept.error}`, session: job.session });
    }

    let plugin: AgentPlugin;
    try {
      plugin = await this.plugins.load<AgentPlugin>("agent", job.agent.use);
    } catch (e) {
      return submit({ outcome: "failed", error: (e as Error).message, session: job.session });
    }
    const cwd = expandHome(job.rule.cwd ?? "~");
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
      return submit({ outcome: "failed", error: `cwd ${cwd} is not a folder on worker ${this.opts.name}`, session: job.session });
    }
    // A prompt by reference (issue 18): the declarative prompt's text, then the rule's own prompt.
    if (job.declared?.prompt === null) return submit({ outcome: "failed", error: t(lang, "rule.promptNotLoaded", { prompt: job.rule.promptRef ?? "" }), session: job.session });
    const rulePrompt = [job.declared?.prompt, job.rule.prompt].filter((x): x is string => typeof x === "string" && x !== "").join("\n\n") || null;
    const prompt = buildPrompt({ rule: { ...job.rule, prompt: rulePrompt }, askFirst: job.askFirst, contextFile, lang });
    // The tools the rule offers: a server of this run in this worker, which the agent's CLI reaches through a relay.
    let bridge: RunBridge | null = null;
    if ((job.tools ?? []).length > 0) {
      try {
        // Only the run's own processes, found under its launches' supervisors, are answered (issue 26).
        bridge = await (await this.toolBridges()).open(job, agentDir, () => launchSupervisors(dir));
      } catch (e) {
        return submit({ outcome: "failed", error: t(lang, "bridge.open", { error: (e as Error).message }), session: job.session });
      }
    }
    const turnBase: Omit<Turn, "prompt" | "resume"> = {
      session: job.session, cwd, access: job.agent.access as Turn["access"], model: job.agent.model, effort: job.agent.effort,
      command: job.agent.command, program: job.agent.program, contextFile, folder: agentDir, tools: bridge?.offer ?? null,
    };
    try {
      if (job.rule.workflow !== undefined) await this.workflow(job, dir, recovered, plugin, turnBase, isCancelled, setCancel);
      else await this.launches(job, dir, recovered, plugin, turnBase, prompt, isCancelled, setCancel);
    } finally {
      await bridge?.close();
    }
  }

  /** The launches of a run: the run itself (or, after a restart, the one under way), receipt rewrites; then its result. */
  private async launches(
    job: Job, dir: string, recovered: boolean, plugin: AgentPlugin, turnBase: Omit<Turn, "prompt" | "resume">, prompt: string,
    isCancelled: () => boolean, setCancel: (f: () => void) => void,
  ): Promise<void> {
    const lang = this.opts.lang;
    const submit = (body: Result) => this.submit(job, dir, body);

    // Launch 1: the run itself, continuing the suggested session; a refused session opens a new one.
    let launch = recovered ? latestLaunch(dir) : 0;
    let usage: Usage = {};
    let read: AgentRead | null;
    let resume = job.session;
    if (recovered && launch > 0) {
      read = await this.watch(job, plugin, join(dir, String(launch)), isCancelled, setCancel, true);
    } else {
      launch += 1;
      read = await this.launch(job, plugin, dir, launch, { ...turnBase, prompt, resume }, isCancelled, setCancel);
      if (read && !read.started && resume && (read.error || typeof read.text !== "string") && !isCancelled()) {
        // Not started on the resumed session: it was refused; run the prompt again in a new session.
        resume = null;
        launch += 1;
        read = await this.launch(job, plugin, dir, launch, { ...turnBase, prompt, resume: null }, isCancelled, setCancel);
      }
    }
    if (isCancelled()) return submit({ outcome: "cancelled", session: read?.session ?? resume ?? null, usage: read?.usage });
    addUsage(usage, read?.usage);
    addUsage(usage, this.launchUsage(job.agent.use, read, resume !== null));
    const session = read?.session ?? (read?.started ? resume : null) ?? null;
    if (!read) return submit({ outcome: "failed", error: t(lang, "field.invalid", { field: `plugin ${job.agent.use}` }), session: resume, usage });
    if (read.error || typeof read.text !== "string") {
      return submit({ outcome: "failed", error: read.error ?? "the agent gave no last message", session, usage });
    }
    // Read in the output thread: a command agent's last message is its whole output, megabytes long.
    let msg: ReadMessage = await this.output.message(read.text);
    let receiptError = msg.receiptError;
    // A bad receipt: resume the same session and ask only for the last message again, at most twice.
    for (let i = 0; receiptError && session && i < receiptRewritesMax && !isCancelled(); i++) {
      launch += 1;
      const again = await this.launch(job, plugin, dir, launch, { ...turnBase, prompt: rewritePrompt(receiptError, lang), resume: session }, isCancelled, setCancel);
      addUsage(usage, again?.usage);
      addUsage(usage, this.launchUsage(job.agent.use, again, true));
      if (!again || again.error || typeof again.text !== "string") break;
      const fixed = await this.output.message(again.text);
      receiptError = fixed.receiptError;
      if (!receiptError) msg = { ...msg, receipt: fixed.receipt, receiptError: null };
    }
    if (isCancelled()) return submit({ outcome: "cancelled", session, usage });
    const body: Result = { outcome: msg.outcome, summary: msg.summary, session, usage };
    if (msg.error) body.error = msg.error;
    const notice = [...(msg.receipt.notice ?? [])];
    if (receiptError) {
      const n = receiptErrorNotice(msg, receiptError, job.run, join(dir, String(launch), "stdout"), lang);
      notice.push({ title: neutralise(n.title, true), text: neutralise(n.text, false) });
    }
    if (msg.outcome === "failed") {
      if (notice.length) body.notice = notice;
    } else if (!receiptError || msg.unasked) { // a message that only lacked an ask keeps the rest of its receipt
      Object.assign(body, msg.receipt);
      if (notice.length) body.notice = notice;
    } else body.notice = notice;
    return submit(body);
  }

  /**
   * A run of a rule with `"use": "workflow"` (issue 18): the built-in `workflow` agent (workflow.ts) drives the steps
   * from the position the session names; its `prompt` steps are launches of the rule's agent like any run's, its `tool`
   * steps calls through the tool bridge. After a worker restart the run goes on from the last position it kept (a
   * prompt step under way is stopped and run again).
   */
  private async workflow(
    job: Job, dir: string, recovered: boolean, plugin: AgentPlugin, turnBase: Omit<Turn, "prompt" | "resume">,
    isCancelled: () => boolean, setCancel: (f: () => void) => void,
  ): Promise<void> {
    const lang = this.opts.lang;
    const progressFile = join(dir, "workflow-position");
    let launch = recovered ? latestLaunch(dir) : 0;
    if (recovered && launch > 0 && agentRunning(dir)) await stopGroup(join(dir, String(launch)));
    await runWorkflow({
      job, lang, statesDir: join(this.opts.home.worker, "workflows"), agentDir: turnBase.folder,
      launch: async (text) => {
        launch += 1;
        const prompt = buildPrompt({ rule: { name: job.rule.name, prompt: text, skill: job.rule.skill }, askFirst: job.askFirst, contextFile: turnBase.contextFile, lang });
        const read = await this.launch(job, plugin, dir, launch, { ...turnBase, session: null, prompt, resume: null }, isCancelled, setCancel);
        const extra = this.launchUsage(job.agent.use, read, false);
        return read && extra ? { ...read, usage: { ...read.usage, ...extra } } : read;
      },
      message: (text) => this.output.message(text),
      callTool: async (name, args) => {
        const ac = new AbortController();
        setCancel(() => ac.abort());
        if (isCancelled()) ac.abort();
        const r = await (await this.toolBridges()).callFor(job, name, args, ac.signal);
        const text = r.content.map((b) => (b.type === "text" ? b.text : JSON.stringify(b))).join("\n");
        if (!r.isError) return { ok: true, text };
        const card = (r._meta as { awaitingCard?: number | null } | undefined)?.awaitingCard;
        return { ok: false, error: text, ...(card !== undefined ? { awaitingCard: card } : {}) };
      },
      isCancelled,
      sendArtifact: (file, text) => this.sendArtifact(job, file, text),
      progress: (session) => this.keep(progressFile, session, job.run),
      submit: (body) => this.submit(job, dir, body),
    }, recovered ? progressOf(progressFile) : null);
  }

  /** Starts one launch of the agent and watches it to its end. */
  private async launch(job: Job, plugin: AgentPlugin, dir: string, n: number, turn: Turn, isCancelled: () => boolean, setCancel: (f: () => void) => void): Promise<AgentRead | null> {
    const ldir = join(dir, String(n));
    mkdirSync(ldir, { recursive: true, mode: 0o700 });
    let argv: string[];
    let extra: Record<string, string> = {};
    try {
      argv = plugin.command(turn);
      extra = plugin.env?.(turn) ?? {};
    } catch (e) {
      return { error: `plugin ${job.agent.use}: ${(e as Error).message}` };
    }
    if (!Array.isArray(argv) || argv.length === 0 || argv.some((a) => typeof a !== "string")) return { error: `plugin ${job.agent.use}: command() gave no argument list` };
    const allow = [...(plugin.passEnv ?? []), ...(job.agent.env ?? [])];
    const tools: Record<string, string> = turn.tools ? { [toolsMcpVariable]: JSON.stringify(turn.tools.command) } : {};
    const env = childEnv(process.env, allow, { ...extra, AGENT_AUTOLOOP_CONTEXT: turn.contextFile, AGENT_AUTOLOOP_RUN: String(job.run), ...tools });
    let sandbox: { plan: SandboxPlan | null } | { error: string };
    try {
      sandbox = this.sandbox(job, turn, plugin, env);
    } catch (e) {
      return { error: `plugin ${job.agent.use}: ${(e as Error).message}` };
    }
    if ("error" in sandbox) return { error: sandbox.error };
    // Windows: PATH + PATHEXT, npm's .cmd shims run by their JS entry, other batch files refused (src/sdk/launch.ts).
    const program = launchArgv(argv, { env, cwd: turn.cwd, lang: this.opts.lang });
    if ("error" in program) return { error: program.error };
    if (sandbox.plan) await startSupervised(ldir, sandboxArgv(sandbox.plan, program.argv), turn.cwd, env, true, this.opts.lang);
    else await startSupervised(ldir, program.argv, turn.cwd, env, false, this.opts.lang);
    return this.watch(job, plugin, ldir, isCancelled, setCancel, false);
  }

  /**
   * The sandbox of a launch (sandbox.ts): the worker's home hidden, the agent's folder (and its plugin's, when
   * installed in the home) shown read-only; writable only the cwd (unless it is the hub user's home), the temporary
   * folders, the plugin's state and the agent's `writable`; the agent's `devices` passed through. None when the agent
   * says `"sandbox": false` or bubblewrap cannot run here (said once in the log). Refused, saying why: a cwd inside
   * the worker's home (it cannot be hidden and shown at once), a cwd that holds the hub user's home or lies in a
   * read-only folder, a `writable` entry that is missing or lies in such places, a device the sandbox does not pass.
   * @throws what the plugin's `state` throws.
   */
  private sandbox(job: Job, turn: Turn, plugin: AgentPlugin, env: Record<string, string>): { plan: SandboxPlan | null } | { error: string } {
    if (job.agent.sandbox === false) return { plan: null };
    const here = sandboxHere(process.platform, process.env.PATH ?? "", this.opts.lang);
    if ("off" in here) {
      if (!this.sandboxOffSaid) this.log(t(this.opts.lang, "worker.noSandbox", { name: this.opts.name, why: here.off }));
      this.sandboxOffSaid = true;
      return { plan: null };
    }
    const home = realPath(this.opts.home.dir);
    const cwd = realPath(turn.cwd);
    if (isInside(cwd, home)) {
      return { error: `cwd ${turn.cwd} is inside the worker's home ${home}, which the sandbox hides from agents: choose another folder, or set "sandbox": false on agent ${job.agent.id}` };
    }
    const lang = this.opts.lang;
    const agent = job.agent.id;
    const homes = userHomes();
    const held = homes.find((h) => h !== cwd && isInside(h, cwd));
    if (held) return { error: t(lang, "sandbox.cwdHoldsHome", { cwd: turn.cwd, home: held, agent }) };
    // What the hub runs outside the sandbox stays read-only in it; an agent cannot work in such a folder.
    const readOnly = readOnlyPaths(hubOrigin()).filter((d) => !isInside(d, home));
    const locked = readOnly.find((d) => isInside(cwd, d));
    if (locked) return { error: t(lang, "sandbox.cwdReadOnly", { cwd: turn.cwd, folder: locked, agent }) };
    const places = { hubHome: home, homes, readOnly };
    const userHome = env.HOME || homedir();
    const writable: string[] = [];
    for (const w of job.agent.writable ?? []) {
      const path = expandTilde(w, userHome);
      if (!existsSync(path)) return { error: t(lang, "sandbox.writable.missing", { path: w, agent, worker: this.opts.name }) };
      const problem = placeProblem(realPath(path), places);
      if (problem?.why === "inHubHome") return { error: t(lang, "sandbox.writable.inHubHome", { path: w, agent, home }) };
      if (problem?.why === "holdsHome") return { error: t(lang, "sandbox.writable.holdsHome", { path: w, agent, home: problem.home }) };
      if (problem?.why === "readOnly") return { error: t(lang, "sandbox.writable.readOnly", { path: w, agent, folder: problem.folder }) };
      writable.push(realPath(path));
    }
    // The CLI's own state: folders made when missing; a path in a place the sandbox keeps as it is stays so.
    const state = plugin.state?.(env) ?? {};
    for (const [paths, folders] of [[state.folders ?? [], true], [state.files ?? [], false]] as const) {
      for (const s of paths) {
        const path = expandTilde(s, userHome);
        if (folders && !existsSync(path)) {
          try {
            mkdirSync(path, { recursive: true, mode: 0o700 });
          } catch {
            continue; // cannot be made: the CLI says what it misses
          }
        }
        if (existsSync(path) && !placeProblem(realPath(path), places)) writable.push(realPath(path));
      }
    }
    for (const tmp of ["/tmp", "/var/tmp", env.TMPDIR, env.TEMP, env.TMP]) {
      if (!tmp || !existsSync(tmp) || !statSync(tmp).isDirectory()) continue;
      const real = realPath(tmp);
      // A temporary folder may hold the home (it stays read-only inside), not lie in a hidden or read-only one.
      const problem = placeProblem(real, places);
      if (!problem || problem.why === "holdsHome") writable.push(real);
    }
    if (!homes.includes(cwd)) writable.push(cwd);
    const devices: string[] = [];
    for (const d of job.agent.devices ?? []) {
      const checked = checkDevice(d);
      if (!checked.ok) return { error: t(lang, "sandbox.deviceRefused", { device: d, agent, why: deviceRefusalText(lang, checked.why) }) };
      devices.push(checked.real);
    }
    const pluginFile = this.plugins.find("agent", job.agent.use);
    const show = [realPath(turn.folder), ...(pluginFile ? [realPath(dirname(pluginFile))] : [])].filter((d) => isInside(d, home) && d !== home);
    return { plan: { bwrap: here.bwrap, writable: [...new Set(writable)], homes, readOnly, hide: home, show, devices, cwd } };
  }

  /** Watches a launch: reports start and session, stops it when cancelled or 30 s after `finished`. */
  private async watch(job: Job, plugin: AgentPlugin, ldir: string, isCancelled: () => boolean, setCancel: (f: () => void) => void, recovered: boolean): Promise<AgentRead | null> {
    let reportedSession: string | null | undefined = recovered ? undefined : null;
    let startedSent = false;
    let finishedAt: number | null = null;
    let stopping: Promise<void> | null = null;
    const stop = () => {
      stopping ??= stopGroup(ldir);
    };
    setCancel(stop);
    if (isCancelled()) stop();
    // The plugin reads a bounded window of the output, in the output thread: off this event loop (output.ts).
    const read = (code: number | null) => this.output.read(ldir, job.agent.use, code);
    try {
      for (;;) {
        if (this.stopped) throw new Halted();
        const exit = readExit(ldir);
        if (exit) {
          if (stopping) await stopping;
          if (exit.error) return { error: `could not start ${job.agent.use}: ${exit.error}` };
          return await read(exit.code ?? 128);
        }
        const pids = readPids(ldir);
        if (pids && !processAlive(pids.supervisor) && !readExit(ldir)) return { error: "the agent's supervisor is gone; its exit code is unknown" };
        if (!pids && !readExit(ldir)) return { error: "the agent process did not start" };
        const r = await read(null);
        if (r && !startedSent) {
          startedSent = true;
          await this.client.started(job.run, job.token, {}).catch(() => {});
        }
        if (r?.session && r.session !== reportedSession) {
          reportedSession = r.session;
          const link = plugin.link?.(r.session) ?? null;
          const shown = typeof link === "string" && new RegExp(sessionLinkPattern).test(link) ? link : null;
          await this.client.started(job.run, job.token, { session: relayedSession(r.session), link: shown }).catch(() => {});
        }
        if (r?.finished && finishedAt === null) finishedAt = Date.now();
        if (finishedAt !== null && Date.now() - finishedAt > (this.opts.finishedGraceMs ?? finishedGraceMs)) stop();
        await sleep(watchIntervalMs);
      }
    } finally {
      this.output.forget(ldir);
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
    const dir = join(this.opts.home.worker, "usage");
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
      this.log(t(this.opts.lang, "worker.log", { name: this.opts.name, error: (e as Error).message }));
    }
    return out;
  }

  /** Reports a result, retrying until the hub answers (a lost answer is replayed with the same token and body). */
  private async submit(job: Job, dir: string, body: Result): Promise<void> {
    if (this.stopped) throw new Halted();
    if (body.usage && Object.keys(body.usage).length === 0) delete body.usage;
    // Fields left undefined are left out of the JSON kept and sent alike.
    // An agent's words, errors and session id may hold characters the hub refuses or be too long (src/kernel/text.ts):
    // removed and cut, not refused with the whole result.
    if (typeof body.summary === "string") body.summary = relayed(body.summary, false, runSummaryMaxCodepoints);
    if (typeof body.error === "string") body.error = relayed(body.error, false, runErrorMaxCodepoints);
    if (typeof body.session === "string") body.session = relayedSession(body.session);
    // Kept so that a restarted worker reports the same body; when it cannot be kept, the result is still reported.
    this.keep(join(dir, "result.json"), JSON.stringify(body), job.run);
    for (let wait = 1000; ; wait = Math.min(wait * 2, 30_000)) {
      try {
        await this.client.result(job.run, job.token, body);
        break;
      } catch (e) {
        if (this.stopped) throw new Halted();
        if (e instanceof HubError && e.status >= 400 && e.status < 500) {
          this.log(t(this.opts.lang, "worker.resultRefused", { run: job.run, error: e.message }));
          break;
        }
        await sleep(wait);
      }
    }
    this.keep(join(dir, "submitted"), new Date().toISOString(), job.run);
  }

  /**
   * Sends a workflow's file to the hub (issue 18), as a result is reported: a refusal (4xx) is final, a hub that cannot
   * be reached or fails (5xx) is tried again with backoff, at most `artifactSendTries` times in all, since the
   * workflow waits for it. Resolves to null when the hub has it, else to the last error (logged).
   */
  private async sendArtifact(job: Job, file: string, text: string): Promise<string | null> {
    let wait = this.opts.faultRetryFirstMs ?? workerFaultRetryFirstMs;
    for (let tries = 1; ; tries++) {
      try {
        await this.client.artifactPut(job.run, job.token, file, text);
        return null;
      } catch (e) {
        const error = e instanceof HubError && e.error ? e.error : (e as Error).message;
        if (this.stopped || (e instanceof HubError && e.status >= 400 && e.status < 500) || tries >= artifactSendTries) {
          this.log(t(this.opts.lang, "worker.runLog", { run: job.run, error: `${file}: ${error}` }));
          return error;
        }
        await sleep(wait);
        wait = Math.min(wait * 2, workerFaultRetryMaxMs);
      }
    }
  }

  /** Writes a file of a run's folder; a failure is logged, not thrown (what it protects is a restart's work). */
  private keep(file: string, content: string, run: number): void {
    try {
      writeFileDurable(file, content);
    } catch (e) {
      this.log(t(this.opts.lang, "worker.runLog", { run, error: (e as Error).message }));
    }
  }
}

/** A session id as a CLI printed it, made acceptable to the hub (one line, at most `sessionMaxCodepoints`). */
function relayedSession(session: string): string {
  return relayed(session, true, sessionMaxCodepoints);
}

/** The worker process is stopping: leave the run to the next worker process. */
class Halted extends Error {}

/** Whether an agent process of the run in `dir` may still be there: its latest launch has a live group and no exit. */
function agentRunning(dir: string): boolean {
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

function latestLaunch(dir: string): number {
  let n = 0;
  for (const name of readdirSync(dir)) if (/^\d+$/.test(name)) n = Math.max(n, Number(name));
  return n;
}

function addUsage(sum: Usage, u: Usage | undefined): void {
  if (!u) return;
  for (const k of ["input", "output", "cached", "cost"] as const) {
    const v = u[k];
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) sum[k] = (sum[k] ?? 0) + v;
  }
}
