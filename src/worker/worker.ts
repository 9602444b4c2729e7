/**
 * The worker (protocol.md Agent：领活、干活、交回执): claims runs over HTTP, launches each agent under a detached
 * supervisor, reports start and result, stops runs the owner cancels, and after a restart picks up the runs it
 * was watching. Its own keys never reach the agent: not in the prompt, the context file or the environment.
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { HubClient, HubError, type WorkJob } from "../protocol/client.js";
import { loadPlugin } from "../host/plugins.js";
import type { Home } from "../host/home.js";
import { buildPrompt, rewritePrompt } from "./prompt.js";
import { readMessage, type ReadMessage } from "./receipt.js";
import { childEnv } from "./env.js";
import { readExit, readFrom, readPids, processAlive, sleep, startSupervised, stopGroup } from "./supervise.js";
import type { AgentPlugin, AgentRead, Turn, Usage } from "./agents.js";
import { t, type Lang } from "../i18n/messages.js";
import { longPollMaxSeconds, receiptRewritesMax, runOutputKeepMs } from "../kernel/limits.js";
import { neutralise } from "../kernel/text.js";

/** 接一个新 Agent: after `finished`, a process still there 30 s later is stopped. */
const finishedGraceMs = 30_000;
const watchIntervalMs = 200;

export interface WorkerOptions {
  url: string;
  key: string;
  name: string;
  /** How many runs at once (config.json worker.capacity, default 2). */
  capacity: number;
  home: Home;
  lang: Lang;
  log?: (line: string) => void;
  /** Extra environment variable names passed to agents (config.json worker.env). */
  allowEnv?: string[];
  /** How long a launch may stay after its plugin said `finished` before its group is stopped, in ms (default 30 s). */
  finishedGraceMs?: number;
}

interface Active {
  run: number;
  /** The job being run; a repeated claim replaces its token here (the old token stops working). */
  job: WorkJob;
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

  constructor(readonly opts: WorkerOptions) {
    this.client = new HubClient(opts.url, opts.key);
    this.runsDir = join(opts.home.worker, "runs");
    this.log = opts.log ?? (() => {});
  }

  /** Runs the claim loop until `stop()`. Picks up unfinished runs of an earlier worker process first. */
  async run(): Promise<void> {
    mkdirSync(this.runsDir, { recursive: true, mode: 0o700 });
    this.cleanOld();
    this.recover();
    // The claim id is kept on disk before each request: a worker that dies before it saw the answer asks again
    // with the same id after a restart and gets the same job back (protocol.md 失败时会怎样: 领活的响应丢了).
    const claimFile = join(this.opts.home.worker, "claim");
    const newClaim = () => {
      const id = randomUUID();
      writeFileSync(claimFile, id, { mode: 0o600 });
      return id;
    };
    let claim = existsSync(claimFile) ? readFileSync(claimFile, "utf8").trim() || newClaim() : newClaim();
    while (!this.stopped) {
      const free = Math.max(0, this.opts.capacity - this.active.size);
      const ac = new AbortController();
      this.pollAbort = ac;
      let res: Awaited<ReturnType<HubClient["work"]>>;
      try {
        res = await this.client.work({ claim, wait: longPollMaxSeconds, running: [...this.active.keys()], capacity: free }, ac.signal);
      } catch (e) {
        if (this.stopped) break;
        if (ac.signal.aborted) continue; // same claim id again: a job claimed meanwhile comes back
        if (e instanceof HubError && (e.status === 401 || e.status === 403)) {
          this.log(`worker ${this.opts.name}: ${e.message}`);
          await sleep(30_000);
        } else await sleep(2_000);
        continue;
      } finally {
        this.pollAbort = null;
      }
      if (res.job) this.begin(res.job);
      claim = newClaim();
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
  }

  /** Waits for the runs this process is watching to be reported (tests). */
  async idle(): Promise<void> {
    while (this.active.size > 0) await Promise.all([...this.active.values()].map((a) => a.done));
  }

  private nudge(): void {
    this.pollAbort?.abort();
  }

  private begin(job: WorkJob): void {
    const dir = join(this.runsDir, `${job.run}-${job.attempt}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, "job.json"), JSON.stringify(job), { mode: 0o600 });
    const known = this.active.get(job.run);
    if (known) known.job.token = job.token; // the same job again after a restart: keep watching, new token
    else this.track(job, dir, existsSync(join(dir, "1")));
  }

  private track(job: WorkJob, dir: string, recovered: boolean): void {
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
      try {
        await this.execute(job, dir, recovered, () => cancelled, (f) => (onCancel = f));
      } catch (e) {
        if (!(e instanceof Halted)) this.log(`run ${job.run}: ${(e as Error).stack ?? e}`);
      } finally {
        this.active.delete(job.run);
        this.nudge();
      }
    })();
    this.active.set(job.run, a);
  }

  /** Picks up runs an earlier worker process started and did not report. */
  private recover(): void {
    if (!existsSync(this.runsDir)) return;
    for (const name of readdirSync(this.runsDir)) {
      const dir = join(this.runsDir, name);
      if (existsSync(join(dir, "submitted")) || !existsSync(join(dir, "job.json"))) continue;
      try {
        const job = JSON.parse(readFileSync(join(dir, "job.json"), "utf8")) as WorkJob;
        if (!this.active.has(job.run)) this.track(job, dir, true);
      } catch {
        // an unreadable leftover: leave it for the owner
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

  private async execute(job: WorkJob, dir: string, recovered: boolean, isCancelled: () => boolean, setCancel: (f: () => void) => void): Promise<void> {
    const lang = this.opts.lang;
    const contextFile = join(dir, "context.json");
    if (!recovered) {
      writeFileSync(contextFile, JSON.stringify({ run: job.run, attempt: job.attempt, rule: job.rule.name, ...job.context }, null, 2), { mode: 0o600 });
    }
    const submit = (body: Record<string, unknown>) => this.submit(job, dir, body);
    if (recovered && existsSync(join(dir, "result.json"))) {
      return submit(JSON.parse(readFileSync(join(dir, "result.json"), "utf8")) as Record<string, unknown>);
    }

    let plugin: AgentPlugin;
    try {
      plugin = await loadPlugin<AgentPlugin>("agent", job.agent.use, this.opts.home.plugins);
    } catch (e) {
      return submit({ outcome: "failed", error: (e as Error).message, session: job.session });
    }
    const cwd = expandHome(job.rule.cwd ?? "~");
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
      return submit({ outcome: "failed", error: `cwd ${cwd} is not a folder on worker ${this.opts.name}`, session: job.session });
    }
    const prompt = buildPrompt({ rule: job.rule, askFirst: job.askFirst, contextFile, lang });
    const turnBase: Omit<Turn, "prompt" | "resume"> = {
      session: job.session, cwd, access: job.agent.access as Turn["access"], model: job.agent.model, effort: job.agent.effort,
      command: job.agent.command, program: job.agent.program, contextFile, folder: dir,
    };

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
      if (read && !read.started && resume && (read.error || read.text === undefined) && !isCancelled()) {
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
    if (read.error || read.text === undefined) {
      return submit({ outcome: "failed", error: read.error ?? "the agent gave no last message", session, usage });
    }
    let msg: ReadMessage = readMessage(read.text, lang);
    let receiptError = msg.receiptError;
    // A bad receipt: resume the same session and ask only for the last message again, at most twice.
    for (let i = 0; receiptError && session && i < receiptRewritesMax && !isCancelled(); i++) {
      launch += 1;
      const again = await this.launch(job, plugin, dir, launch, { ...turnBase, prompt: rewritePrompt(receiptError, lang), resume: session }, isCancelled, setCancel);
      addUsage(usage, again?.usage);
      addUsage(usage, this.launchUsage(job.agent.use, again, true));
      if (!again || again.error || again.text === undefined) break;
      const fixed = readMessage(again.text, lang);
      receiptError = fixed.receiptError;
      if (!receiptError) msg = { ...msg, receipt: fixed.receipt, receiptError: null };
    }
    if (isCancelled()) return submit({ outcome: "cancelled", session, usage });
    const body: Record<string, unknown> = { outcome: msg.outcome, summary: msg.summary, session, usage };
    if (msg.error) body.error = msg.error;
    const notice = [...(msg.receipt.notice ?? [])];
    if (receiptError) {
      notice.push({ title: t(lang, "card.receipt.title", { run: job.run }), text: neutralise(`${receiptError}\n${join(dir, String(launch), "stdout")}`, false) });
    }
    if (msg.outcome === "failed") {
      if (notice.length) body.notice = notice;
    } else if (!receiptError) {
      Object.assign(body, msg.receipt);
      if (notice.length) body.notice = notice;
    } else body.notice = notice;
    return submit(body);
  }

  /** Starts one launch of the agent and watches it to its end. */
  private async launch(job: WorkJob, plugin: AgentPlugin, dir: string, n: number, turn: Turn, isCancelled: () => boolean, setCancel: (f: () => void) => void): Promise<AgentRead | null> {
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
    const env = childEnv(process.env, { ...extra, AGENT_AUTOLOOP_CONTEXT: turn.contextFile, AGENT_AUTOLOOP_RUN: String(job.run) }, this.opts.allowEnv);
    await startSupervised(ldir, argv, turn.cwd, env);
    return this.watch(job, plugin, ldir, isCancelled, setCancel, false);
  }

  /** Watches a launch: reports start and session, stops it when cancelled or 30 s after `finished`. */
  private async watch(job: WorkJob, plugin: AgentPlugin, ldir: string, isCancelled: () => boolean, setCancel: (f: () => void) => void, recovered: boolean): Promise<AgentRead | null> {
    let reportedSession: string | null | undefined = recovered ? undefined : null;
    let startedSent = false;
    let finishedAt: number | null = null;
    let stopping: Promise<void> | null = null;
    const stop = () => {
      stopping ??= stopGroup(ldir);
    };
    setCancel(stop);
    if (isCancelled()) stop();
    const safeRead = (code: number | null): AgentRead | null => {
      try {
        return plugin.read(readFrom(join(ldir, "stdout")), code, readFrom(join(ldir, "stderr"))) ?? null;
      } catch {
        return null;
      }
    };
    for (;;) {
      if (this.stopped) throw new Halted();
      const exit = readExit(ldir);
      if (exit) {
        if (stopping) await stopping;
        if (exit.error) return { error: `could not start ${job.agent.use}: ${exit.error}` };
        return safeRead(exit.code ?? 128);
      }
      const pids = readPids(ldir);
      if (pids && !processAlive(pids.supervisor) && !readExit(ldir)) return { error: "the agent's supervisor is gone; its exit code is unknown" };
      if (!pids && !readExit(ldir)) return { error: "the agent process did not start" };
      const r = safeRead(null);
      if (r && !startedSent) {
        startedSent = true;
        await this.client.started(job.run, job.token, {}).catch(() => {});
      }
      if (r?.session && r.session !== reportedSession) {
        reportedSession = r.session;
        const link = plugin.link?.(r.session) ?? null;
        await this.client.started(job.run, job.token, { session: r.session, link }).catch(() => {});
      }
      if (r?.finished && finishedAt === null) finishedAt = Date.now();
      if (finishedAt !== null && Date.now() - finishedAt > (this.opts.finishedGraceMs ?? finishedGraceMs)) stop();
      await sleep(watchIntervalMs);
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
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, `${createHash("sha256").update(`${use}\u0000${read.session}`).digest("hex").slice(0, 40)}.json`);
    let before: Usage | null = null;
    try {
      before = JSON.parse(readFileSync(file, "utf8")) as Usage;
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
    writeFileSync(file, JSON.stringify({ ...before, ...read.sessionUsage }), { mode: 0o600 });
    return out;
  }

  /** Reports a result, retrying until the hub answers (a lost answer is replayed with the same token and body). */
  private async submit(job: WorkJob, dir: string, body: Record<string, unknown>): Promise<void> {
    if (this.stopped) throw new Halted();
    if (body.usage && Object.keys(body.usage as object).length === 0) delete body.usage;
    for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
    // An agent's words and errors may hold characters the hub refuses (src/kernel/text.ts): removed, not refused.
    for (const k of ["summary", "error"]) if (typeof body[k] === "string") body[k] = neutralise(body[k] as string, false);
    writeFileSync(join(dir, "result.json"), JSON.stringify(body), { mode: 0o600 });
    for (let wait = 1000; ; wait = Math.min(wait * 2, 30_000)) {
      try {
        await this.client.result(job.run, job.token, body);
        break;
      } catch (e) {
        if (this.stopped) throw new Halted();
        if (e instanceof HubError && e.status >= 400 && e.status < 500) {
          this.log(`run ${job.run}: the hub refused the result: ${e.message}`);
          break;
        }
        await sleep(wait);
      }
    }
    writeFileSync(join(dir, "submitted"), new Date().toISOString());
  }
}

/** The worker process is stopping: leave the run to the next worker process. */
class Halted extends Error {}

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
