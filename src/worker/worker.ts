/**
 * The worker (protocol.md Agent：领活、干活、交回执): claims runs over HTTP, launches each agent under a detached
 * supervisor, reports start and result, stops runs the owner cancels, and after a restart picks up the runs it
 * was watching. Its own keys never reach the agent: not in the prompt, the context file or the environment.
 *
 * A run's folder (`<home>/worker/runs/<run>-<attempt>/`) keeps the worker's own files (job.json with the run token,
 * result.json, each launch's spec, output and exit code); the agent gets only its `agent/` subfolder (the context
 * file), and where bubblewrap runs it cannot see the rest of the home at all (sandbox.ts).
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { HubClient, HubError } from "../protocol/client.js";
import type { Job } from "../protocol/responses.js";
import type { Notice, Result } from "../protocol/schema.js";
import { voidedResult } from "./receipt.js";
import { PluginLoader } from "../plugins/index.js";
import type { Home } from "../common/paths.js";
import { sleep } from "./supervise.js";
import { readRegular, writeFileDurable } from "./files.js";
import { OutputReader } from "./output.js";
import { TranscriptSender } from "./transcript.js";
import type { ToolBridges } from "./tool-bridge.js";
import type { ToolHost } from "../tools/index.js";
import type { DataTools } from "../tools/index.js";
import { t, type Lang } from "../i18n/messages.js";
import { longPollMaxSeconds, runErrorMaxCodepoints, runOutputKeepMs, runSummaryMaxCodepoints } from "../kernel/limits.js";
import { relayed } from "../kernel/text.js";
import { backoffMs } from "../kernel/backoff.js";
import { agentRunning, Attempt, Halted, relayedSession, saveJob, type AttemptHost } from "./attempt.js";
import { MovedAside } from "./planted.js";
import { assert } from "../kernel/assert.js";

/** Expanding `~` in a rule's cwd lives in attempt.ts (the doctor uses it too); re-exported here. */
export { expandHome } from "./attempt.js";

/** 接一个新 Agent: after `finished`, a process still there 30 s later is stopped. */
const finishedGraceMs = 30_000;
/**
 * After a failed write of the worker's own files (EISDIR, ENOSPC, EMFILE, …): the first wait before trying again, in
 * ms; it doubles up to `workerFaultRetryMaxMs`. The claim loop never stops for such a fault.
 */
export const workerFaultRetryFirstMs = 1_000;
export const workerFaultRetryMaxMs = 30_000;
/** A result the hub did not answer is sent again after a wait: 1 s, doubling, at most 30 s (ms). */
const resultRetryFirstMs = 1_000;
const resultRetryMaxMs = 30_000;
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
  /** The owner cancelled the run: aborts the attempt under way and every later one. */
  cancel: () => void;
  done: Promise<void>;
}

export class Worker {
  private readonly client: HubClient;
  private readonly active = new Map<number, Active>();
  private pollAbort: AbortController | null = null;
  private stopped = false;
  private readonly runsDir: string;
  private readonly log: (line: string) => void;
  private readonly output: OutputReader;
  /** The runs' transcripts on their way to the hub (issue 30). */
  private readonly transcripts: TranscriptSender;
  private readonly plugins: PluginLoader;
  /** Whether the worker said that agents run without a sandbox here (once per process). */
  private sandboxOffSaid = false;
  private networkSharedSaid = false;
  private bridges: Promise<ToolBridges> | null = null;
  /** What this worker's attempts use of it (attempt.ts). */
  private readonly host: AttemptHost;

  constructor(readonly opts: WorkerOptions) {
    this.client = new HubClient(opts.url, opts.key);
    this.runsDir = join(opts.home.worker, "runs");
    this.log = opts.log ?? (() => {});
    this.plugins = opts.plugins ?? new PluginLoader(opts.home.plugins);
    this.output = new OutputReader(opts.name, opts.lang, this.plugins.roots, this.log);
    this.transcripts = new TranscriptSender(this.client, (run, error) => this.log(t(opts.lang, "worker.runLog", { run, error })));
    this.host = {
      home: opts.home, lang: opts.lang, name: opts.name, plugins: this.plugins, output: this.output, log: this.log, movedAside: new MovedAside(),
      finishedGraceMs: opts.finishedGraceMs ?? finishedGraceMs,
      stopped: () => this.stopped,
      toolBridges: () => this.toolBridges(),
      started: (job, body) => this.client.started(job.run, job.token, body).then(() => {}, () => {}),
      submit: (job, dir, body, own) => this.submit(job, dir, body, own),
      sendArtifact: (job, file, text) => this.sendArtifact(job, file, text),
      transcript: (job, entries) => this.transcripts.add(job, entries),
      keep: (file, content, run) => this.keep(file, content, run),
      sandboxOff: (why) => {
        if (!this.sandboxOffSaid) this.log(t(opts.lang, "worker.noSandbox", { name: opts.name, why }));
        this.sandboxOffSaid = true;
      },
      hubUrl: opts.url,
      networkShared: (why) => {
        if (!this.networkSharedSaid) this.log(t(opts.lang, "worker.networkShared", { name: opts.name, why }));
        this.networkSharedSaid = true;
      },
    };
  }

  /** The wait after `failures` faults in a row of the worker's own files or of a run (doubling, at most 30 s), in ms. */
  private faultWaitMs(failures: number): number {
    return backoffMs(failures, this.opts.faultRetryFirstMs ?? workerFaultRetryFirstMs, workerFaultRetryMaxMs);
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
    let seq = 0;
    let fault: string | null = null;
    // Faults of the worker's files in a row: the claim loop waits `faultWaitMs(faults)` before the next request.
    let faults = 0;
    const takeClaim = (): string => {
      if (first) {
        let kept = "";
        try {
          kept = readRegular(claimFile, this.opts.lang).trim();
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
        faults = 0;
      } catch (e) {
        const text = (e as Error).message;
        // The same fault is said once: its temporary file's name is new at every try (files.ts writeFileDurable).
        const same = text.replace(/\.\d+\.[0-9a-f]{12}\.tmp\b/g, ".tmp");
        if (same !== fault) this.log(t(this.opts.lang, "worker.fileFault", { name: this.opts.name, error: text, seconds: this.faultWaitMs(faults + 1) / 1000 }));
        fault = same;
      }
      // While faulty: a heartbeat for the runs in hand under an id kept nowhere, which can be given no job.
      const faulty = fault !== null;
      const free = faulty ? 0 : Math.max(0, this.opts.capacity - this.active.size);
      const ac = new AbortController();
      this.pollAbort = ac;
      let res: Awaited<ReturnType<HubClient["work"]>>;
      try {
        const wait = faulty ? Math.ceil(this.faultWaitMs(faults + 1) / 1000) : longPollMaxSeconds;
        // Each poll's place (the clock's ms, increasing): a poll this worker gave up that reaches the hub after a later one
        // of the same claim decides nothing there (it would claim again and replace the later one's token).
        seq = Math.max(seq + 1, Date.now());
        res = await this.client.work({ claim: claim ?? randomUUID(), wait, running: [...this.active.keys()], capacity: free, seq }, ac.signal);
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
      if (faulty) faults += 1;
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
    this.transcripts.close();
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
        saveJob(known.job, known.dir);
      } catch (e) {
        this.log(t(this.opts.lang, "worker.runLog", { run: job.run, error: (e as Error).message }));
      }
    } else this.track(job, join(this.runsDir, `${job.run}-${job.attempt}`), existsSync(join(this.runsDir, `${job.run}-${job.attempt}`, "1")));
  }

  /**
   * Watches a run to its reported result: one `Attempt` per try, each with its own `AbortController`, which the owner's
   * cancel aborts (a cancel that came before a try aborts that try's at once).
   */
  private track(job: Job, dir: string, recovered: boolean): void {
    // begin() and recover() take a run already watched as such: two watchers of one run would report it twice.
    assert(!this.active.has(job.run), "worker-watches-a-run-once");
    let attempt = new AbortController();
    const a: Active = { run: job.run, job, dir, cancel: () => attempt.abort(), done: Promise.resolve() };
    a.done = (async () => {
      // A failure of the worker's own files or processes (not of the agent) is tried again as after a restart; after
      // `runFaultTriesMax` tries, a run with no agent process left is reported "not run", so it never hangs.
      for (let tries = 1, again = recovered; ; tries++, again = true) {
        if (tries > 1) {
          const next = new AbortController();
          if (attempt.signal.aborted) next.abort(); // cancelled during an earlier try or the wait after it
          attempt = next;
        }
        try {
          await new Attempt(this.host, job, dir, again, attempt.signal).run();
          return;
        } catch (e) {
          if (e instanceof Halted || this.stopped) return;
          const error = (e as Error).message;
          if (tries >= runFaultTriesMax && !agentRunning(dir)) {
            await this.submit(job, dir, { outcome: "failed", error: t(this.opts.lang, "worker.runGaveUp", { error }), session: job.session }).catch(() => {});
            return;
          }
          const waitMs = this.faultWaitMs(tries);
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
        const job = JSON.parse(readRegular(join(dir, "job.json"), this.opts.lang)) as Job;
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


  /**
   * Reports a result, retrying until the hub answers (a lost answer is replayed with the same token and body). A body
   * the hub refuses for its shape or size (400, 413) never leaves the run hanging (issue 26 round 12, F12-9: the run
   * stayed "running" until its lease ran out, its lane blocked): it is reported again with its receipt voided — the
   * outcome, summary, error, session and usage kept, the worker's `own` notices first and one saying why — and, if
   * that is refused too, as failed with the hub's reason.
   */
  private async submit(job: Job, dir: string, body: Result, own: Notice[] = []): Promise<void> {
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
    // The transcript's last steps (the final message, stderr's tail) reach the hub before the run ends there.
    await this.transcripts.end(job);
    const lang = this.opts.lang;
    let refused = await this.report(job, body);
    if (refused !== null) refused = await this.report(job, voidedResult(body, own, refused, job.run, dir, lang));
    // Refused again: failed with the hub's reason, the worker's own notices still on it (round 13, F13-4).
    if (refused !== null) refused = await this.report(job, { outcome: "failed", error: relayed(t(lang, "worker.resultRefused", { run: job.run, error: refused }), false, runErrorMaxCodepoints), session: body.session, ...(own.length > 0 ? { workerNotice: own } : {}) });
    if (refused !== null && own.length > 0) await this.report(job, { outcome: "failed", error: relayed(t(lang, "worker.resultRefused", { run: job.run, error: refused }), false, runErrorMaxCodepoints), session: body.session });
    this.keep(join(dir, "submitted"), new Date().toISOString(), job.run);
  }

  /**
   * Sends `body` as the run's result, retrying while the hub cannot be reached or fails (5xx). Resolves to null when
   * the hub took it or refused it for a reason another body cannot change (the run is not this token's any more), or
   * to the hub's reason when it refused this body (400, 413: logged).
   */
  private async report(job: Job, body: Result): Promise<string | null> {
    for (let tries = 1; ; tries++) {
      try {
        await this.client.result(job.run, job.token, body);
        return null;
      } catch (e) {
        if (this.stopped) throw new Halted();
        if (e instanceof HubError && e.status >= 400 && e.status < 500) {
          this.log(t(this.opts.lang, "worker.resultRefused", { run: job.run, error: e.message }));
          return e.status === 400 || e.status === 413 ? e.shownIn(this.opts.lang) : null;
        }
        await sleep(backoffMs(tries, resultRetryFirstMs, resultRetryMaxMs));
      }
    }
  }

  /**
   * Sends a workflow's file to the hub (issue 18), as a result is reported: a refusal (4xx) is final, a hub that cannot
   * be reached or fails (5xx) is tried again with backoff, at most `artifactSendTries` times in all, since the
   * workflow waits for it. Resolves to null when the hub has it, else to the last error (logged).
   */
  private async sendArtifact(job: Job, file: string, text: string): Promise<string | null> {
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
        await sleep(this.faultWaitMs(tries));
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
