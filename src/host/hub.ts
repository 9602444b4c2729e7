/**
 * The hub's shell (DESIGN.md): one queue of inputs committed in groups, long polls held until something
 * changes, the single timer for the next deadline, and the rules file watched for edits.
 */
import { watchFile, unwatchFile } from "node:fs";
import { join } from "node:path";
import { Store } from "./store.js";
import { readMasterKey, readSecrets, secretsEnvName, type Home } from "./home.js";
import { readHomeId } from "./lock.js";
import { dueKeys, nextDeadline, nextOfferAt } from "../kernel/decide.js";
import { callerOf } from "../kernel/authorize.js";
import { InvariantError, assert } from "../kernel/assert.js";
import { deadlineErrorMaxCodepoints, hubInputQueueMax, workerOnlineMs } from "../kernel/limits.js";
import type { Answers, Env, Fact, Input, InputOf } from "../kernel/types.js";
import { LongPolls, type PollAnswer, type PollInput } from "./long-polls.js";
import type { Committed } from "./committed.js";
import { t, type Lang, refusal, render, said, type Said } from "../i18n/messages.js";
import { readRulesInput } from "./rules-file.js";
import { LastGood, PluginLoader, PluginRegistry, builtinPluginsDir, codePlugins, pluginRoots, watchPlugins, type CodeUse, type PluginRoot, type PluginWatcher } from "../plugins/index.js";
import { BoundedLog } from "./log-limit.js";
import { Presence } from "./presence.js";
import { HubFigures } from "./metrics.js";
import type { WorkerCapacity } from "./state.js";
import type { EndpointName } from "../protocol/endpoints.js";
import type { ToolHost } from "../tools/index.js";
import { ToolPlugins } from "../tools/kind.js";
import { HubTools } from "./hub-tools.js";
import { ConsoleSessions, fileSessionStore } from "./console-session.js";
import { DeclarativeCatalog, declarativePlugins } from "../declarative/index.js";
import { pluginSecret } from "./plugin-settings.js";
import { Transcripts, type TranscriptLimits } from "./transcripts.js";

/** The longest the single timer sleeps, so a clock jump is noticed within this long (ms). */
const timerMaxSleepMs = 60_000;
/** Inputs committed in one transaction at most. */
const commitBatchMax = 512;
/**
 * 失败时会怎样: a busy database is tried again after this long (ms); so is a deadline in the past when the timer's
 * last round changed nothing (its failure could not be recorded either), instead of firing again at once.
 */
const busyRetryMs = 5_000;

/** The committed decision lives in committed.ts (held-poll.ts shares it); re-exported for the routes. */
export type { Committed } from "./committed.js";

/** The input queue is full (`inputQueueMax`, default `hubInputQueueMax`): the caller is told to come back (503 with `Retry-After`). */
export class QueueFull extends Error {
  /** The refusal's text as data (its 503 carries the id and params). */
  readonly text: Said;
  constructor(lang: Lang, limit: number) {
    const text = said("hub.queueFull", { limit });
    super(render(lang, text));
    this.text = text;
  }
}


export interface HubOptions {
  home: Home;
  lang: Lang;
  /** Base URL for card links (publicUrl, or the listen address once known). */
  publicUrl?: string | null;
  /** The clock (ms since epoch); the simulation and tests may inject one. */
  clock?: () => number;
  /** Reports what the hub does that a person running it may want to see (not facts). */
  log?: (line: string) => void;
  /** Finds and keeps the plugins of this home (source adapters here; `serve` shares it with its worker and channels). */
  plugins?: PluginLoader;
  /** No poll for this long (ms) is a worker or channel gone silent (presence.ts); default `workerOnlineMs`, shortened by tests. */
  presenceSilentMs?: number;
  /**
   * Checks every answer the HTTP layer sends against the endpoint's published shape, returning what differs or null
   * (tests pass the client's own check: tests/helpers.ts). A difference fails that request with 500.
   */
  checkAnswer?: (endpoint: EndpointName, status: number, body: unknown) => string | null;
  /** Folders of plugin folders besides `<home>/plugins` (`serve --plugins <dir>`; issues 18, 27): the last roots. */
  pluginDirs?: string[];
  /**
   * A further root of built-in plugins after the engine's `plugins/` (which holds no tool plugins yet); tests give one
   * of their own. `<home>/plugins` follows it as always.
   */
  builtinToolRoot?: string;
  /** Callers' inputs that may wait for a commit at once (default `hubInputQueueMax`; tests make it small). */
  inputQueueMax?: number;
  /** Code plugins to load at start and at each reload besides those rules.json names (`serve`: its channels'). */
  codeUses?: CodeUse[];
  /** The limits of runs' transcripts (issue 30; transcripts.ts), shortened by tests. */ transcriptLimits?: Partial<TranscriptLimits>;
}

/** Reading rules.json lives in rules-file.ts, which `check` and `doctor` use without loading the hub; re-exported here. */
export { readRulesInput, systemTimeZone } from "./rules-file.js";

export class Hub {
  readonly store: Store;
  readonly env: Env;
  private readonly clock: () => number;
  private readonly log: (line: string) => void;
  /** What callers' inputs make the hub log (a commit that failed, a decision that threw): at most one of a kind a minute. */
  private readonly callerLog: BoundedLog;
  /** Inputs waiting for the next group commit: at most `inputQueueMax` of callers' (the hub's own are never refused). */
  private queue: { input: Input; now: number; resolve: (d: Committed) => void; reject: (e: Error) => void }[] = [];
  private readonly inputQueueMax: number;
  private flushing = false;
  private timer: NodeJS.Timeout | null = null;
  /** The timer's round is running (see fire): it arms the timer itself when done. */
  private firing = false;
  /** Channels were woken for every card offer up to this time (ms): an offer in the past waits for its channel's poll. */
  private offersWokenUntil = -Infinity;
  /** The one extra read of rules.json after the watcher started (see start). */
  private rulesRecheck: NodeJS.Timeout | null = null;
  private closed = false;
  /** The held long polls (long-polls.ts). */
  private readonly polls = new LongPolls({ submit: (input) => this.submit(input), claimed: (t0) => this.figures.claim.since(t0) });
  /** The workers and channels polling, for the hub's "connected" and "went silent" lines. */
  readonly presence: Presence;
  /** What the HTTP layer counts for GET /metrics (claim, event and result latency; failed deliveries). */
  readonly figures = new HubFigures();
  /** Called with every committed fact (the stream). */
  readonly listeners = new Set<(facts: Fact[]) => void>();

  private readonly secrets: Record<string, string>;
  /** The id of the home this hub serves, sent on every answer (lock.ts); a home without one gets it here. */
  readonly homeId: string;
  /** The roots of this home's plugins of every kind (issue 27): built in, `<home>/plugins`, then `pluginDirs`. */
  readonly pluginRoots: readonly PluginRoot[];
  /** The code plugins this hub loads (source adapters; `serve` shares it with its worker and channels). */
  readonly plugins: PluginLoader;
  /** This home's tool plugins as discovered (issue 16): records from the start; see `toolHost` for running them. */
  readonly toolPlugins: ToolPlugins;
  /**
   * The one registry of this home's plugins of every kind (issue 27): loaded at start, reloaded on POST
   * /v1/plugins/reload and by the one watcher when files change; `GET /v1/plugins` lists its records.
   */
  readonly pluginRegistry: PluginRegistry;
  private pluginWatch: PluginWatcher | null = null;
  /** The tool host of this home's tool plugins (hub-tools.ts), made when first asked for. */
  private readonly tools: HubTools;
  /** The owner console's sign-in links (in memory) and sessions (kept hashed in the home: a restart keeps them). */
  readonly console: ConsoleSessions;
  /**
   * The declarative plugins of this home (issue 18): built in, `<home>/plugins`, then each `pluginDirs` folder; loaded
   * at start (refusals in the log), reloaded with every kind.
   */
  readonly declarative: DeclarativeCatalog;
  /** Runs' transcripts (issue 30), kept in `<home>/transcripts` outside the fact log; `serve` runs their sweep. */
  readonly transcripts: Transcripts;

  constructor(readonly opts: HubOptions) {
    this.pluginRoots = pluginRoots(opts.home.plugins, opts.pluginDirs ?? [], [builtinPluginsDir, ...(opts.builtinToolRoot ? [opts.builtinToolRoot] : [])]);
    this.plugins = opts.plugins ?? new PluginLoader(this.pluginRoots, opts.lang);
    this.homeId = readHomeId(opts.home, true);
    this.secrets = readSecrets(opts.home);
    const master = readMasterKey(opts.home);
    this.store = new Store({ path: opts.home.database, master, lang: opts.lang });
    this.env = { master, lang: opts.lang, publicUrl: opts.publicUrl ? opts.publicUrl.replace(/\/+$/, "") : null };
    this.clock = opts.clock ?? Date.now;
    this.inputQueueMax = opts.inputQueueMax ?? hubInputQueueMax;
    this.log = opts.log ?? (() => {});
    this.callerLog = new BoundedLog(this.log, () => this.now(), opts.lang);
    this.console = new ConsoleSessions(this.clock, (h) => callerOf(this.store.view, h)?.kind === "owner", fileSessionStore(opts.home.consoleSessions, opts.home.consoleLinks),
      (e) => this.log(t(opts.lang, "console.sessionsFile", { file: opts.home.consoleSessions, error: e.message })));
    this.transcripts = new Transcripts(join(opts.home.dir, "transcripts"), this.clock, (run) => this.store.view.get("runs", run)?.endedAt, opts.transcriptLimits, (e) => this.log(t(opts.lang, "hub.transcripts", { error: e.message })));
    this.presence = new Presence({ clock: this.clock, silentAfterMs: opts.presenceSilentMs ?? workerOnlineMs, log: this.log, lang: opts.lang });
    // Last good versions are the home's: the CLI, a worker and a hub started again use the versions this hub uses.
    const lastGood = new LastGood(opts.home.pluginState);
    this.toolPlugins = new ToolPlugins(this.pluginRoots, opts.lang, lastGood);
    this.declarative = new DeclarativeCatalog({
      roots: this.pluginRoots, lang: opts.lang, log: this.log, lastGood,
      secret: (plugin, key) => pluginSecret(opts.home, plugin, key),
      hubUrls: () => [this.env.publicUrl],
    });
    this.tools = new HubTools({ plugins: this.toolPlugins, lang: opts.lang, homeDir: opts.home.dir, data: this.declarative, log: this.log, view: () => this.store.view });
    this.pluginRegistry = new PluginRegistry({
      roots: this.pluginRoots, lang: opts.lang, log: this.log, afterLoad: () => this.tools.found(),
      loaders: [
        declarativePlugins(this.declarative), this.toolPlugins,
        codePlugins({ loader: this.plugins, lang: opts.lang, log: this.log, wanted: () => this.codeUses(), installed: true }),
      ],
    });
  }

  /** The code plugins this hub's files name: rules.json's source adapters and agents, and `codeUses` (channels). */
  private codeUses(): CodeUse[] {
    const rules = this.store.view.rules()?.rules;
    return [
      ...Object.values(rules?.sources ?? {}).flatMap((s) => (s.adapter ? [{ kind: "source" as const, name: s.adapter }] : [])),
      ...Object.values(rules?.agents ?? {}).map((a) => ({ kind: "agent" as const, name: a.use })),
      ...(this.opts.codeUses ?? []),
    ];
  }

  /**
   * Loads the rules file and starts the timer and the file watch.
   * @throws Error when rules were never loaded and the file cannot be read or is invalid (the hub must not start).
   */
  async start(): Promise<void> {
    const first = readRulesInput(this.opts.home.rules, this.env.lang);
    if (first.kind === "rulesError" && !this.store.view.rules()) {
      throw new Error(t(this.env.lang, "serve.noRules", { file: this.opts.home.rules, error: first.error }));
    }
    await this.enqueue(first);
    if (first.kind === "rulesError") this.log(first.error);
    watchFile(this.opts.home.rules, { interval: 1000 }, () => void this.reloadRules());
    // The watcher compares with its own first look at the file, taken a moment after this: an edit saved between
    // the read above and that look would never be seen. Read once more after it (unchanged rules write nothing).
    this.rulesRecheck = setTimeout(() => void this.reloadRules(), 1500);
    this.rulesRecheck.unref?.();
    this.arm();
    // Plugins of every kind; refused ones are logged with every error, the hub starts all the same, without them.
    await this.pluginRegistry.reload();
    if (!this.closed) this.pluginWatch = watchPlugins(this.pluginRegistry);
  }

  /** Reads the rules file again; the kernel ignores it when nothing changed. Never rejects (the watcher does not wait for it). */
  async reloadRules(): Promise<void> {
    if (this.closed) return;
    try {
      const input = readRulesInput(this.opts.home.rules, this.env.lang);
      if (input.kind === "rulesError") this.log(input.error);
      await this.enqueue(input);
    } catch (e) {
      this.log(t(this.env.lang, "hub.rulesFailed", { error: (e as Error).message }));
    }
  }

  /** The webhook secret of a source: AGENT_AUTOLOOP_SECRET_<SOURCE> from secrets.env (read at start), or null. */
  secret(source: string): string | null {
    return this.secrets[`AGENT_AUTOLOOP_SECRET_${secretsEnvName(source)}`] ?? null;
  }

  /** Sets the base of card links; trailing slashes are dropped so links have one `/` before `c/`. */
  setPublicUrl(url: string | null): void {
    this.env.publicUrl = url === null ? null : url.replace(/\/+$/, "");
  }

  now(): number {
    return this.clock();
  }

  /**
   * Queues a caller's input for the next group commit and resolves with its decision after COMMIT, typed by its kind's
   * answer. Rejects with `QueueFull` when `inputQueueMax` inputs already wait (the caller is answered 503), and when
   * the hub is closing.
   */
  submit<I extends Input>(input: I): Promise<Committed<Answers[I["kind"]]>> {
    if (this.queue.length >= this.inputQueueMax) return Promise.reject(new QueueFull(this.env.lang, this.inputQueueMax));
    return this.enqueue(input);
  }

  /** Queues an input of the hub's own (rules, the timer's deadlines): never refused for a full queue. */
  private enqueue<I extends Input>(input: I): Promise<Committed<Answers[I["kind"]]>> {
    if (this.closed) return Promise.reject(new Error(t(this.env.lang, "hub.closing")));
    return new Promise((resolve, reject) => {
      // The store decides this input with `decide`, whose answer for its kind is Answers[kind] (its step table says so):
      // the queue holds inputs of every kind, so the resolver is kept for any answer.
      this.queue.push({ input, now: this.clock(), resolve: resolve as (d: Committed) => void, reject });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    assert(this.flushing, "hub-flush-while-flushing");
    const batch = this.queue.splice(0, commitBatchMax);
    if (batch.length === 0) {
      this.flushing = false;
      return;
    }
    let results: Committed[];
    try {
      results = this.store.commit(batch, this.env);
    } catch (e) {
      for (const b of batch) b.reject(e as Error);
      this.callerLog.say(`commit ${(e as NodeJS.ErrnoException).code ?? (e as Error).name}`, t(this.env.lang, "hub.commitFailed", { error: (e as Error).message }));
      this.continueFlush();
      return;
    }
    const facts: Fact[] = [];
    let wakeWorkers = false;
    const wakeChannels = new Set<string>();
    let keysChanged = false;
    results.forEach((d, i) => {
      if (d.failure) this.logFailure(batch[i]!.input.kind, d.failure);
      facts.push(...d.committed);
      if (d.committed.length > 0) {
        if (d.wake?.workers) wakeWorkers = true;
        for (const ch of d.wake?.channels ?? []) wakeChannels.add(ch);
        if (batch[i]!.input.kind === "keyRemove" || batch[i]!.input.kind === "keyNew") keysChanged = true;
      }
      batch[i]!.resolve(d);
    });
    if (facts.length > 0) for (const l of this.listeners) l(facts);
    if (keysChanged) {
      this.polls.drop((h) => callerOf(this.store.view, h) !== undefined, 401, refusal(this.env.lang, "auth.unknown"));
      this.console.dropRevoked();
    }
    if (wakeWorkers) this.polls.wakeAll("worker:");
    for (const ch of wakeChannels) this.polls.wakeAll(`channel:${ch}`);
    if (facts.length > 0) this.arm();
    this.continueFlush();
  }

  /** Logs an input whose decision threw: its kind, the invariant it broke (or the error) and the stack. */
  private logFailure(kind: string, e: Error): void {
    const what = e instanceof InvariantError ? `invariant ${e.invariant}` : `${e.name}: ${e.message}`;
    this.callerLog.say(`failure ${kind} ${e instanceof InvariantError ? e.invariant : e.name}`, t(this.env.lang, "hub.internalError", { kind, what, stack: e.stack ?? "" }));
  }

  private continueFlush(): void {
    if (this.queue.length > 0) setImmediate(() => this.flush());
    else this.flushing = false;
  }

  /** A worker's slots as its last poll since this hub started said them (`GET /v1/work`), or null. */
  workerCapacity(name: string): WorkerCapacity | null {
    return this.presence.capacityOf(name);
  }

  /** Whether a key hash is still valid (streams check this). */
  keyValid(keyHash: string): boolean {
    return callerOf(this.store.view, keyHash) !== undefined;
  }

  /**
   * Decides a long-poll input; when it finds nothing, holds it up to `waitMs` and decides it again whenever
   * something it may want was committed. Resolves early when `signal` aborts (the client went away). `seq`: a work
   * poll's place among its worker's polls (long-polls.ts).
   */
  poll(input: InputOf<"work">, waitMs: number, signal?: AbortSignal, seq?: number): Promise<Committed<Answers["work"]>>;
  poll(input: InputOf<"cardsNext">, waitMs: number, signal?: AbortSignal): Promise<Committed<Answers["cardsNext"]>>;
  poll(input: PollInput, waitMs: number, signal?: AbortSignal, seq?: number): Promise<Committed<PollAnswer>>;
  async poll(input: PollInput, waitMs: number, signal?: AbortSignal, seq?: number): Promise<Committed<PollAnswer>> {
    const caller = input.keyHash ? callerOf(this.store.view, input.keyHash) : undefined;
    const part = caller?.kind === "worker" || caller?.kind === "channel" ? { kind: caller.kind, name: caller.name } : null;
    if (!part) return this.held(input, waitMs, signal, caller, seq);
    this.presence.pollStarted(part.kind, part.name, input.kind === "work" ? { free: input.capacity, inHand: input.running.length } : null);
    try {
      return await this.held(input, waitMs, signal, caller, seq);
    } finally {
      this.presence.pollEnded(part.kind, part.name);
    }
  }

  /** `poll` itself, for the caller its key names (if any). */
  private held(input: PollInput, waitMs: number, signal: AbortSignal | undefined, caller: ReturnType<typeof callerOf>, seq: number | undefined): Promise<Committed<PollAnswer>> {
    const key = caller ? (caller.kind === "worker" ? `worker:${caller.name}` : `channel:${caller.name}`) : "";
    return this.polls.poll(input, waitMs, signal, caller, key, seq);
  }

  /**
   * Arms the single timer for the next deadline of the due table or the next card offer not yet woken for.
   * While the timer's round runs, `fire` arms it when done. `delayMs` 0: a round now (a read past a deadline asks for
   * the fact it answers from).
   */
  arm(delayMs?: number): void {
    if (this.closed || this.firing) return;
    // One timer: the one armed before is replaced, never left to fire beside it.
    if (this.timer) clearTimeout(this.timer);
    const now = this.clock();
    let wait = delayMs;
    if (wait === undefined) {
      const due = nextDeadline(this.store.view);
      const offer = nextOfferAt(this.store.view, this.offersWokenUntil);
      const next = Math.min(due ?? Infinity, offer ?? Infinity);
      wait = next === Infinity ? timerMaxSleepMs : Math.max(0, next - now);
    }
    this.timer = setTimeout(() => void this.fire(), Math.min(wait, timerMaxSleepMs));
    this.timer.unref?.();
  }

  /**
   * The timer's round: one `tick` per deadline due now, all in one group commit, so that each is decided alone; a
   * tick answered 500 (logged in flush) is reported back as `dueFailed`, which moves that deadline on. Then channels
   * are woken once for offers that came due. A round that changed nothing while a deadline is still past (its
   * failure could not be recorded) waits `busyRetryMs` before the next: the timer never spins on a past time.
   */
  private async fire(): Promise<void> {
    assert(!this.firing, "hub-timer-one-round-at-a-time");
    this.timer = null;
    this.firing = true;
    const now = this.clock();
    let delay: number | undefined;
    try {
      const keys = dueKeys(this.store.view, now, commitBatchMax);
      const ticks = await Promise.all(keys.map((due) => this.enqueue({ kind: "tick", due })));
      const failed = await Promise.all(ticks.flatMap((d, i) => d.failure
        ? [this.enqueue({ kind: "dueFailed", due: keys[i]!, error: [...d.failure.message].slice(0, deadlineErrorMaxCodepoints).join("") })]
        : []));
      if (this.closed) return;
      const changed = [...ticks, ...failed].some((d) => d.committed.length > 0);
      const next = nextDeadline(this.store.view);
      if (!changed && next !== null && next <= this.clock()) {
        this.log(t(this.env.lang, "hub.timerStuck", { seconds: busyRetryMs / 1000 }));
        delay = busyRetryMs;
      }
    } catch (e) {
      if (this.closed) return; // the hub shut down during this round
      this.log(t(this.env.lang, "hub.timerFailed", { error: (e as Error).message, seconds: busyRetryMs / 1000 }));
      delay = busyRetryMs;
    } finally {
      this.firing = false;
    }
    const offer = nextOfferAt(this.store.view, this.offersWokenUntil);
    if (offer !== null && offer <= now) this.polls.wakeAll("channel:");
    this.offersWokenUntil = Math.max(this.offersWokenUntil, now);
    this.arm(delay);
  }

  /** The tool host of this home's tool plugins, made at its first use (hub-tools.ts). */
  toolHost(): Promise<ToolHost> {
    return this.tools.host();
  }

  /** `serve`: starts the tool host with its long-lived plugins as soon as a tool plugin is found (hub-tools.ts). */
  superviseTools(): void {
    this.tools.supervise();
  }

  /** Logs a line a caller's request caused: at most one of `kind` a minute (log-limit.ts). */
  logForCaller(kind: string, line: string): void {
    this.callerLog.say(kind, line);
  }

  /** Stops accepting input, answers held polls, stops the timer and closes the database after the last commit. */
  async close(): Promise<void> {
    if (this.closed) return;
    while (this.flushing || this.queue.length > 0) await new Promise((r) => setTimeout(r, 5));
    this.closed = true;
    this.pluginWatch?.close();
    this.transcripts.close();
    // Long-lived tool plugins (MCP servers) the listing started end with the hub.
    await this.tools.close();
    this.presence.close();
    if (this.timer) clearTimeout(this.timer);
    unwatchFile(this.opts.home.rules);
    if (this.rulesRecheck) clearTimeout(this.rulesRecheck);
    this.polls.drop(() => false, 503, refusal(this.env.lang, "hub.closing"));
    this.store.close();
  }
}
