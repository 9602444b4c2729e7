/**
 * Test fixtures: a temporary home, a hub on 127.0.0.1 port 0 with a real SQLite file, keys of every kind,
 * and a small HTTP helper. Nothing here is a mock: the hub is the product's own `startServe`.
 */
import { createServer } from "node:net";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { homePaths, newKey, readMasterKey, writeFileAtomic, type Config, type Home } from "../src/host/home.js";
import { registerKeysLocally } from "../src/host/local-commits.js";
// The hub itself (serve.js and all it loads, ~1 s of CPU under tsx) is loaded by the first fixture that starts one:
// most test files start none, and each is its own process.
import type { Running, ServeOptions } from "../src/host/serve.js";
import { endpoints, type EndpointName } from "../src/protocol/endpoints.js";
import { checkResponse } from "../src/protocol/response-check.js";
import { afterEach, beforeEach } from "node:test";
import type { Fact, State } from "../src/protocol/responses.js";
import { render, saidFromWire } from "../src/i18n/messages.js";
import { stopGroup } from "../src/worker/supervise.js";

export const engine = join(import.meta.dirname, "..");

/**
 * Ends the agents a killed hub's worker left running under their own supervisors in the folder `dir` (a hub's home):
 * each launch folder below it with a `pid.json` has its agent's group stopped as the worker stops it (`stopGroup`),
 * after which its supervisor records the end and exits. Never `pkill -f <dir>`: that matched every process whose
 * command line merely names the folder — another test's sandbox, whose bubblewrap arguments hide every known home of
 * the engine (seen in full runs: worker.test.ts's agents ended by a SIGTERM from workflows.test.ts's clean-up).
 */
export async function endAgentsIn(dir: string): Promise<void> {
  let files: string[];
  try {
    files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => basename(f) === "pid.json");
  } catch {
    return; // gone already
  }
  await Promise.all(files.map((f) => stopGroup(dirname(join(dir, f)), 2_000)));
}

/**
 * Why a test that needs the engine outside /tmp cannot run here, or false. A plugin's sandbox has its own /tmp, and
 * an agent's sandbox keeps an engine under /tmp (with the node_modules above it) read-only: a checkout cloned under
 * /tmp changes what those tests can show (a sandboxed plugin cannot load the engine's packages from there).
 */
export const engineUnderTmp: string | false = realpathSync(join(import.meta.dirname, "..")).startsWith("/tmp/")
  ? "the engine lies under /tmp (a checkout cloned there): this case needs it elsewhere" : false;

export function tempDir(prefix = "aa-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Removes a test's folder after processes it started were killed: a process killed a moment ago may still be writing
 * into it (full runs failed cli-home's clean-up with ENOTEMPTY, once again at load 9–20 with Node's retry alone), so
 * a removal that meets a folder filled again is tried again (Node's retry, 10 × 100 ms), and the whole again while
 * the folder is there, for up to 10 s; the last failure is thrown.
 */
export function removeAfterKill(path: string): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; ; i++) {
    try {
      rmSync(path, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch (e) {
      if (i >= 9) throw e;
    }
    Atomics.wait(pause, 0, 0, 100);
    if (!existsSync(path)) return;
    if (i >= 9) throw new Error(`${path} was made again after its removal`);
  }
}

export interface Keys { source: string; source2: string; worker: string; worker2: string; channel: string; channel2: string; owner: string; metrics: string }

/**
 * A GitHub webhook payload of @octokit/webhooks-examples, as real deliveries carry it: the fields the tests read are
 * named, the rest is kept as it comes.
 */
export interface GitHubPayload {
  action?: string;
  ref?: string;
  issue?: { id: number; number: number; title: string; body: string | null; html_url: string; updated_at: string };
  [field: string]: unknown;
}

/** The example payloads of GitHub webhook event `name` (`issues`, `push`, …) from @octokit/webhooks-examples. */
export function githubExamples(name: string): GitHubPayload[] {
  const all = createRequire(import.meta.url)("@octokit/webhooks-examples/api.github.com/index.json") as { name: string; examples: GitHubPayload[] }[];
  return all.find((x) => x.name === name)!.examples;
}

/** Rules used by most HTTP tests: source shop → rule "alerts" → agent on worker w1; channels ch1 (answerers) and ch2. */
export const baseRules = {
  timezone: "UTC",
  askFirst: ["delete data"],
  sources: { shop: { name: "Shop" }, crm: { name: "CRM" } },
  agents: {
    bot: { worker: "w1", use: "command", command: ["echo", "hi"] },
    bot2: { worker: "w2", use: "command", command: ["echo", "hi"] },
  },
  channels: { ch1: { name: "One", answerers: ["ou_alice"] }, ch2: { name: "Two" } },
  rules: [
    { name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "bot", cwd: "/tmp", prompt: "handle it", emits: { source: "shop", types: ["followup.*"] } },
    { name: "per-subject", when: { source: "crm", types: ["ticket.*"] }, to: "bot2", parallel: 2 },
  ],
};

export interface Fixture {
  home: Home;
  url: string;
  keys: Keys;
  running: Running;
  /**
   * One request as it is: `body` sent as JSON, or `raw` as written (malformed on purpose, some tests). Answers the
   * status and the body as sent (JSON, else the text). The body is `any`: whatever any endpoint answered, a refusal
   * included. Tests read an answer through the contract's type (`const job: Job = …`, `state()`); the hub checks every
   * answer against its endpoint's published shape before it sends it (`checkAnswer`).
   */
  call(method: string, path: string, key: string | null, body?: unknown, raw?: string): Promise<{ status: number; body: any }>;
  /** GET /v1/state with the owner's key: the owner's state. @throws when the hub does not answer 200. */
  state(): Promise<State>;
  seq(): number;
  writeRules(rules: unknown): void;
  close(): Promise<void>;
}

/**
 * Writes a home with keys of every kind registered (and those of the channels `config` names), `rules`, `config` and
 * `secrets`, without starting anything: for `startServe` here, or a real `serve` child process.
 */
export function makeHome(rules: unknown = baseRules, config: Partial<Config> = {}, secrets = ""): { dir: string; home: Home; keys: Keys } {
  const dir = tempDir();
  const home = homePaths(dir);
  mkdirSync(home.dir, { recursive: true });
  readMasterKey(home, true);
  const keys: Keys = {
    source: newKey(), source2: newKey(), worker: newKey(), worker2: newKey(), channel: newKey(), channel2: newKey(), owner: newKey(), metrics: newKey(),
  };
  registerKeysLocally(home, [
    { kind: "source", name: "shop", key: keys.source },
    { kind: "source", name: "crm", key: keys.source2 },
    { kind: "worker", name: "w1", key: keys.worker },
    { kind: "worker", name: "w2", key: keys.worker2 },
    { kind: "channel", name: "ch1", key: keys.channel },
    { kind: "channel", name: "ch2", key: keys.channel2 },
    { kind: "owner", name: "owner", key: keys.owner },
    { kind: "metrics", name: "prometheus", key: keys.metrics },
    // the worker and channels that `serve` runs from config.json use their own keys
    ...(config.worker && !["w1", "w2"].includes(config.worker.name) ? [{ kind: "worker" as const, name: config.worker.name, key: config.worker.key }] : []),
    ...Object.entries(config.channels ?? {}).map(([name, ch]) => ({ kind: "channel" as const, name, key: ch.key })),
  ], "en");
  writeFileSync(home.rules, typeof rules === "string" ? rules : JSON.stringify(rules, null, 2));
  if (secrets) writeFileAtomic(home.secrets, secrets);
  const cfg: Config = { listen: "127.0.0.1:0", publicUrl: null, owner: keys.owner, worker: null, channels: {}, ...config };
  writeFileAtomic(home.config, JSON.stringify(cfg));
  return { dir, home, keys };
}

/**
 * Checks an answer the hub sends against the endpoint's published shape (a refusal against `ErrorBody`), as every
 * hub of the tests does: each HTTP test is also a test of the contract.
 * @returns what differs, or null.
 */
export function checkAnswer(endpoint: EndpointName, status: number, body: unknown): string | null {
  const checked = checkResponse(status >= 400 ? "ErrorBody" : endpoints[endpoint].response, body);
  if (checked.ok) return null;
  const problem = `${endpoint} ${status} ${checked.field}: ${checked.error.keyword} ${JSON.stringify(checked.error.params)}`;
  process.stderr.write(`answer off the contract: ${problem} in ${JSON.stringify(body).slice(0, 500)}\n`);
  return problem;
}

/**
 * A refusal as the older tests read it: `{ error }` alone, once its `code` and `params` (issue 27 #2) were checked to
 * word exactly that `error` in Chinese or English, so every refusal any test meets carries a message id and params that
 * give its text. Any other answer comes back as it is. Throws when a refusal has no code, or one that words otherwise.
 */
export function prose<B>(status: number, body: B): B {
  if (status < 400) return reasonProse(body);
  if (typeof body !== "object" || body === null || typeof (body as { error?: unknown }).error !== "string") return body;
  const { error, code, params, ...rest } = body as unknown as { error: string; code?: unknown; params?: unknown };
  const text = saidFromWire(code, params);
  if (text === null) throw new Error(`a refusal without a catalog code and its params: ${JSON.stringify(body)}`);
  if (render("en", text) !== error && render("zh", text) !== error) throw new Error(`code ${String(code)} words otherwise than ${JSON.stringify(error)}: ${render("en", text)}`);
  return { error, ...rest } as B;
}

/** A tool call's decision as the older tests read it: its `reasonText` checked to word its `reason`, then left out. */
function reasonProse<B>(body: B): B {
  if (typeof body !== "object" || body === null || !("reasonText" in body)) return body;
  const { reasonText, ...rest } = body as unknown as { reason: string; reasonText: { code?: unknown; params?: unknown } };
  const text = saidFromWire(reasonText.code, reasonText.params);
  if (text === null || (render("en", text) !== rest.reason && render("zh", text) !== rest.reason)) throw new Error(`reasonText words otherwise: ${JSON.stringify(body)}`);
  return rest as B;
}

/** Starts a hub (alone unless `config` names a worker or channels) with keys of every kind registered. */
export async function hubFixture(rules: unknown = baseRules, config: Partial<Config> = {}, secrets = "", options: Partial<ServeOptions> = {}): Promise<Fixture> {
  return serveFixture(makeHome(rules, config, secrets), options);
}

/**
 * Starts a hub on a home `makeHome` wrote (and something may have used since: a CLI with no hub running). Closing the
 * fixture removes the home.
 */
export async function serveFixture({ dir, home, keys }: { dir: string; home: Home; keys: Keys }, options: Partial<ServeOptions> = {}): Promise<Fixture> {
  const { startServe } = await import("../src/host/serve.js");
  const running = await startServe(home, { lang: "en", log: () => {}, checkAnswer, ...options });
  const url = running.url;
  const fixture: Fixture = {
    home, url, keys, running,
    async call(method, path, key, body, raw) {
      const headers: Record<string, string> = {};
      if (key) headers.authorization = `Bearer ${key}`;
      if (body !== undefined || raw !== undefined) headers["content-type"] = "application/json";
      const send = () => fetch(url + path, { method, headers, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
      // A GET on a kept-alive connection the hub closed at its keep-alive timeout just as it was sent (ECONNRESET; seen
      // once in a fresh run on a loaded machine) is sent again once, as Node's documentation advises: it changes nothing.
      const res = await send().catch((e: { cause?: { code?: string } }) => {
        if (method === "GET" && e.cause?.code === "ECONNRESET") return send();
        throw e;
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON
      }
      return { status: res.status, body: prose(res.status, parsed) as any };
    },
    async state() {
      const r = await fixture.call("GET", "/v1/state", keys.owner);
      if (r.status !== 200) throw new Error(`GET /v1/state answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body as State;
    },
    seq: () => running.hub.store.seq,
    writeRules(r) {
      // as editors save: a new file renamed over the old one
      writeFileAtomic(home.rules, typeof r === "string" ? r : JSON.stringify(r, null, 2), 0o644);
    },
    async close() {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return fixture;
}

/**
 * For a `describe` whose tests each get a fresh hub on `baseRules`: starts it before each test, closes it after, and
 * answers a fixture that stands for the current test's hub (so the tests read `f.call(…)` as with `hubFixture`).
 */
export function hubEachTest(): Fixture {
  let current: Fixture | null = null;
  beforeEach(async () => {
    current = await hubFixture();
  });
  afterEach(async () => {
    await current?.close();
    current = null;
  });
  const now = (): Fixture => {
    if (!current) throw new Error("no hub: hubEachTest's fixture is used outside a test");
    return current;
  };
  return {
    get home() { return now().home; },
    get url() { return now().url; },
    get keys() { return now().keys; },
    get running() { return now().running; },
    call: (method, path, key, body, raw) => now().call(method, path, key, body, raw),
    state: () => now().state(),
    seq: () => now().seq(),
    writeRules: (r) => now().writeRules(r),
    close: () => now().close(),
  };
}

/** One server-sent message of GET /v1/stream: its id, event name and data (a fact: the stream sends only `event: fact`). */
export interface Sse { id: string; event: string; data: Fact }

/** Reads SSE messages from a response body until `stop` says enough; the reader is the caller's to cancel or release. */
export async function readSse(res: Response, stop: (msgs: Sse[]) => boolean) {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = "";
  const msgs: Sse[] = [];
  while (!stop(msgs)) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (block.startsWith(":")) continue;
      const m: Record<string, string> = {};
      for (const line of block.split("\n")) {
        const j = line.indexOf(": ");
        m[line.slice(0, j)] = (m[line.slice(0, j)] ? m[line.slice(0, j)] + "\n" : "") + line.slice(j + 2);
      }
      msgs.push({ id: m.id!, event: m.event!, data: JSON.parse(m.data!) as Fact });
    }
  }
  return { msgs, reader };
}

/**
 * Every fact of the hub so far, as GET /v1/stream sends them to the owner: from the first up to the `seq` of
 * GET /v1/state taken just before (facts written meanwhile are left out).
 */
export async function streamFacts(f: Pick<Fixture, "url" | "keys" | "state">): Promise<Fact[]> {
  const { seq } = await f.state();
  if (seq === 0) return [];
  const res = await fetch(`${f.url}/v1/stream?after=0`, { headers: { authorization: `Bearer ${f.keys.owner}` } });
  if (res.status !== 200) throw new Error(`GET /v1/stream answered ${res.status}: ${await res.text()}`);
  const { msgs, reader } = await readSse(res, (m) => m.length > 0 && Number(m.at(-1)!.id) >= seq);
  await reader.cancel();
  return msgs.map((m) => m.data).filter((fact) => fact.seq <= seq);
}

/** What `until` hands back: a value of `T` that is not falsy. */
export type Truthy<T> = Exclude<T, false | null | undefined | 0 | "">;

/**
 * Waits until `f` returns a truthy value (polling every 25 ms, at most `ms`). `what` names it in the timeout's error;
 * a function is called only then, so it can show what happened meanwhile (a process's output).
 */
export async function until<T>(f: () => T | Promise<T>, ms = 10_000, what: string | (() => string) = "condition"): Promise<Truthy<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v as Truthy<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === "function" ? what() : what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The JSON values of the complete lines of a file another process appends to (each line ended by its newline), [] while
 * it is missing: a reader between the append's open (the file made, empty) and its write saw "" and failed to parse it.
 */
export function completeJsonLines(path: string): unknown[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").slice(0, -1).map((l) => JSON.parse(l) as unknown);
}

/** Waits until the newest run of the hub is in `state`; returns the whole owner state at that moment. */
export async function untilLatestRun(f: Fixture, state: string, ms = 20_000): Promise<State> {
  return until(async () => {
    const s = await f.state();
    return s.runs[0]?.state === state && s;
  }, ms, `the latest run to be ${state}`);
}

/** A real `agent-autoloop serve` child process on a home (the CLI is run from dist/: `npm run build` first). */
export interface ServeProcess { url: string; child: ChildProcess; output(): string; stop(): Promise<void> }

/**
 * Starts `serve --listen 127.0.0.1:0` (or `listen`) on `dir` and waits for its address.
 * @param descriptorsMax when given, the process runs under `ulimit -n` of this many open files.
 * @param baseEnv its environment (default: this process's, in English, without a display); the home is set on it.
 * @param extraArgs more arguments of `serve` (`--plugins <dir>`).
 */
export async function serveProcess(
  dir: string, descriptorsMax?: number,
  baseEnv: NodeJS.ProcessEnv = { ...process.env, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "" },
  listen = "127.0.0.1:0",
  extraArgs: string[] = [],
): Promise<ServeProcess> {
  const env = { ...baseEnv, AGENT_AUTOLOOP_HOME: dir };
  const argv = [process.execPath, join(engine, "bin", "agent-autoloop.js"), "serve", "--listen", listen, ...extraArgs];
  const child = descriptorsMax === undefined
    ? spawn(argv[0]!, argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] })
    : spawn("sh", ["-c", `ulimit -n ${descriptorsMax} && exec "$0" "$@"`, ...argv], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const url = (await until(() => /listening on (http:\/\/\S+)/.exec(out)?.[1], 60_000, () => `the hub to listen (output: ${out})`))!;
  return {
    url, child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** A port free now on 127.0.0.1, for a hub whose address must be known before it starts (a tool's URL, a restart). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

