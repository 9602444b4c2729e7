/**
 * A fake GitHub REST server for the delivery plugin's tests (issue 31), on 127.0.0.1 port 0.
 *
 * - It answers only requests GitHub's OpenAPI description (`@octokit/openapi`, pinned) has: any other method and path
 *   gets 404 and is recorded in `faults`, and so is a request body the description refuses (422) and every response
 *   the fake gives that the description does not allow (sent anyway, so the client sees what a wrong GitHub would
 *   send). A test ends with `assert.deepEqual(fake.faults, [])`.
 * - Git objects live in bare repositories on disk, written with real git (tests/github-fake-git.ts); pulls, issues,
 *   labels and their events, commit statuses, workflow runs with their jobs and merges are held in memory.
 * - Hooks make the hard cases: `dropResponse` applies a request and then drops its answer (a lost response);
 *   `refuse` answers a documented error without applying it;
 *   `afterRequest` runs code between applying a request and answering it (a label edit by someone else, main moving
 *   mid-round); `runWorkflow` records a check suite with matrix legs and skipped jobs; `holdSyncs` keeps the commit an
 *   update-branch makes back until `releaseSyncs`.
 * - Every request needs `Authorization: Bearer <token>` (or `token <token>`); without it the answer is 401.
 * - `POST /graphql` answers the few GraphQL operations the plugin uses, held to GitHub's published GraphQL schema
 *   (github-fake-graphql.ts); hooks, drops and refusals name it by the template `/graphql`.
 * Routes: fake-routes.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { tempDir } from "./helpers.js";
import { findOperation, requestFault, responseFault, type Operation } from "./github-fake-shapes.js";
import { graphqlAnswer } from "./github-fake-graphql.js";
import { commit, initBare, resolve, setBranch, type FileChange } from "./github-fake-git.js";
import { route, type Answer } from "./github-fake-routes.js";

/** An issue or a pull request (they share numbers, as on GitHub). */
export interface Item {
  number: number; id: number; title: string; body: string; state: "open" | "closed"; labels: string[]; user: string;
  createdAt: string; updatedAt: string; closedAt: string | null;
  /** Set on a pull request. */
  pull?: {
    headRepo: string; headRef: string; baseRef: string; draft: boolean; merged: boolean; mergedAt: string | null; mergeSha: string | null;
    /** Auto-merge as someone enabled it (GraphQL `autoMergeRequest`, REST `auto_merge`), or null. */
    autoMerge: { enabledAt: string; method: "MERGE" | "SQUASH" | "REBASE" } | null;
  };
}

/** A labeled/unlabeled record of an item. */
export interface LabelEvent { id: number; event: "labeled" | "unlabeled"; label: string; actor: string; createdAt: string }

/** A commit status. */
export interface Status { id: number; sha: string; context: string; state: "error" | "failure" | "pending" | "success"; description: string | null; createdAt: string }

/** A job of a workflow run: `conclusion` null while it runs. */
export interface Job { id: number; name: string; conclusion: "success" | "failure" | "skipped" | "cancelled" | null }

/** A workflow run (one check suite of Actions). */
export interface WorkflowRun { id: number; name: string; path: string; event: string; headSha: string; headBranch: string; jobs: Job[]; createdAt: string }

/** A repository of the fake: its bare repository and what GitHub keeps beside the objects. */
export interface Repo {
  id: number; owner: string; name: string; full: string; dir: string; forkOf: string | null;
  items: Map<number, Item>; events: Map<number, LabelEvent[]>; statuses: Status[]; runs: WorkflowRun[];
  /** Items whose events cannot be read (the answer is 500): a label record that cannot be read. */
  brokenEvents: Set<number>;
}

/** A request as the fake saw it. */
export interface Seen { method: string; path: string; template: string | null; status: number; body: unknown }

type Hook = (seen: { method: string; template: string; params: Record<string, string>; body: unknown }) => void;

/** The fake GitHub; see the module comment. */
export class FakeGitHub {
  readonly repos = new Map<string, Repo>();
  /** Everything that broke the description: requests GitHub does not have, bodies and answers it refuses. */
  readonly faults: string[] = [];
  /** Every request in order. */
  readonly seen: Seen[] = [];
  /** The clock of the fake: each change moves it one second. */
  private seconds = 0;
  private nextId = 1000;
  private drops: { method: string; template: string; count: number; match?: (body: unknown) => boolean }[] = [];
  private refusals: { method: string; template: string; status: number; count: number; match?: (body: unknown) => boolean }[] = [];
  private hooks: { method: string; template: string; fn: Hook; once: boolean }[] = [];
  private held: (() => void)[] | null = null;
  private server: Server | null = null;
  /** The base URL clients use (as `https://api.github.com`). */
  url = "";

  constructor(readonly root: string, readonly token: string) {}

  /** Starts listening on 127.0.0.1, a free port. */
  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((ok) => this.server!.listen(0, "127.0.0.1", ok));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Stops the server and ends its connections. */
  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((ok) => (this.server ? this.server.close(() => ok()) : ok()));
  }

  /** The time now on the fake's clock, moved one second on. */
  now(): string {
    this.seconds += 1;
    return new Date(Date.UTC(2026, 0, 1) + this.seconds * 1000).toISOString().replace(/\.000Z$/, "Z");
  }

  /** A new id. */
  id(): number {
    return this.nextId++;
  }

  /** Makes repository `full` (`owner/name`) with a first commit on main holding `files`. @returns its main SHA. */
  createRepo(full: string, files: Record<string, FileChange>, forkOf: string | null = null): string {
    const [owner, name] = full.split("/") as [string, string];
    const dir = join(this.root, `${owner}__${name}.git`);
    initBare(dir);
    this.repos.set(full, { id: this.id(), owner, name, full, dir, forkOf, items: new Map(), events: new Map(), statuses: [], runs: [], brokenEvents: new Set() });
    const sha = commit(dir, [], files, "first commit");
    setBranch(dir, "main", sha);
    return sha;
  }

  /** The repository `full`. @throws when there is none. */
  repo(full: string): Repo {
    const r = this.repos.get(full);
    if (!r) throw new Error(`fake GitHub has no repository ${full}`);
    return r;
  }

  /** Commits `files` onto branch `branch` of `full` (made from main when missing). @returns the new SHA. */
  push(full: string, branch: string, files: Record<string, FileChange>, message = `change ${branch}`): string {
    const r = this.repo(full);
    const parent = resolve(r.dir, `refs/heads/${branch}`) ?? resolve(r.dir, "refs/heads/main")!;
    const sha = commit(r.dir, [parent], files, message);
    setBranch(r.dir, branch, sha);
    return sha;
  }

  /** Opens a pull request from `head` (`branch` or `owner/name:branch` for a fork) to `base`. @returns its number. */
  openPull(full: string, head: string, opts: { base?: string; title?: string; draft?: boolean; labels?: string[]; user?: string } = {}): number {
    const r = this.repo(full);
    const [headRepo, headRef] = head.includes(":") ? (head.split(":") as [string, string]) : [full, head];
    const number = r.items.size + 1;
    const at = this.now();
    r.items.set(number, {
      number, id: this.id(), title: opts.title ?? `change ${headRef}`, body: "", state: "open", labels: [], user: opts.user ?? "alice",
      createdAt: at, updatedAt: at, closedAt: null,
      pull: { headRepo, headRef, baseRef: opts.base ?? "main", draft: opts.draft ?? false, merged: false, mergedAt: null, mergeSha: null, autoMerge: null },
    });
    for (const l of opts.labels ?? []) this.label(full, number, l);
    return number;
  }

  /** Opens an issue. @returns its number. */
  openIssue(full: string, title: string, body = "", labels: string[] = []): number {
    const r = this.repo(full);
    const number = r.items.size + 1;
    const at = this.now();
    r.items.set(number, { number, id: this.id(), title, body, state: "open", labels: [], user: "alice", createdAt: at, updatedAt: at, closedAt: null });
    for (const l of labels) this.label(full, number, l);
    return number;
  }

  /** The item `number` of `full`. @throws when there is none. */
  item(full: string, number: number): Item {
    const i = this.repo(full).items.get(number);
    if (!i) throw new Error(`fake GitHub has no item ${full}#${number}`);
    return i;
  }

  /** Adds `label` to an item as `actor` would (a label edit by someone else), with its labeled record. No-op when on. */
  label(full: string, number: number, label: string, actor = "alice"): void {
    const i = this.item(full, number);
    if (i.labels.includes(label)) return;
    i.labels.push(label);
    this.record(full, number, "labeled", label, actor);
  }

  /** Removes `label` from an item, with its unlabeled record. @returns whether it was on. */
  unlabel(full: string, number: number, label: string, actor = "alice"): boolean {
    const i = this.item(full, number);
    if (!i.labels.includes(label)) return false;
    i.labels = i.labels.filter((l) => l !== label);
    this.record(full, number, "unlabeled", label, actor);
    return true;
  }

  private record(full: string, number: number, event: "labeled" | "unlabeled", label: string, actor: string): void {
    const r = this.repo(full);
    const at = this.now();
    this.item(full, number).updatedAt = at;
    r.events.set(number, [...(r.events.get(number) ?? []), { id: this.id(), event, label, actor, createdAt: at }]);
  }

  /** Closes an item without merging. */
  closeItem(full: string, number: number): void {
    const i = this.item(full, number);
    i.state = "closed";
    i.closedAt = i.updatedAt = this.now();
  }

  /** Enables auto-merge on a pull request as someone would in GitHub's page. */
  enableAutoMerge(full: string, number: number, method: "MERGE" | "SQUASH" | "REBASE" = "MERGE"): void {
    this.item(full, number).pull!.autoMerge = { enabledAt: this.now(), method };
  }

  /** The head SHA of a pull request, read from its head repository's branch. */
  headSha(full: string, number: number): string {
    const p = this.item(full, number).pull!;
    return resolve(this.repo(p.headRepo).dir, `refs/heads/${p.headRef}`)!;
  }

  /** Records a workflow run on `headSha` with `jobs` (matrix legs are jobs named `check (ubuntu-latest)`…). @returns its id. */
  runWorkflow(full: string, run: { name: string; event?: string; headSha: string; headBranch?: string; jobs: Omit<Job, "id">[] }): number {
    const r = this.repo(full);
    const id = this.id();
    r.runs.push({
      id, name: run.name, path: `.github/workflows/${run.name.toLowerCase()}.yml`, event: run.event ?? "pull_request", headSha: run.headSha,
      headBranch: run.headBranch ?? "main", jobs: run.jobs.map((j) => ({ ...j, id: this.id() })), createdAt: this.now(),
    });
    return id;
  }

  /**
   * The next `count` answers to `method template` (whose body `match` accepts, when given: one GraphQL operation) are
   * dropped after the request is applied (a lost response).
   */
  dropResponse(method: string, template: string, count = 1, match?: (body: unknown) => boolean): void {
    this.drops.push({ method, template, count, match });
  }

  /** The next `count` `method template` requests (whose body `match` accepts) are answered `status` without being applied. */
  refuse(method: string, template: string, status: number, count = 1, match?: (body: unknown) => boolean): void {
    this.refusals.push({ method, template, status, count, match });
  }

  /** Runs `fn` after each (or, with `once`, the next) `method template` request is applied, before it is answered. */
  afterRequest(method: string, template: string, fn: Hook, once = true): void {
    this.hooks.push({ method, template, fn, once });
  }

  /** From now on the commit an update-branch makes appears only at `releaseSyncs` (GitHub merging in the background). */
  holdSyncs(): void {
    this.held ??= [];
  }

  /** Applies the update-branch merges held back, in order, and stops holding. */
  releaseSyncs(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const f of held) f();
  }

  /** Runs `apply` now, or at `releaseSyncs` while syncs are held. */
  later(apply: () => void): void {
    if (this.held) this.held.push(apply);
    else apply();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const method = req.method ?? "GET";
    const seen: Seen = { method, path: url.pathname + url.search, template: null, status: 0, body: undefined };
    this.seen.push(seen);
    const send = (a: Answer) => {
      seen.status = a.status;
      const text = a.body === undefined ? "" : JSON.stringify(a.body);
      res.writeHead(a.status, { "content-type": "application/json; charset=utf-8", ...(a.headers ?? {}) });
      res.end(text);
    };
    // GitHub's GraphQL is not in the REST description: its own schema holds it (github-fake-graphql.ts)
    const graphql = method === "POST" && url.pathname === "/graphql";
    const found = graphql ? { operation: { template: "/graphql", method }, params: {} } : findOperation(method, url.pathname);
    if (!found) {
      this.faults.push(`not in GitHub's description: ${method} ${url.pathname}`);
      return send({ status: 404, body: { message: "Not Found", documentation_url: "https://docs.github.com/rest" } });
    }
    const { operation, params } = found;
    seen.template = operation.template;
    const auth = req.headers.authorization ?? "";
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > 1_000_000) return send({ status: 413, body: { message: "too large" } });
      chunks.push(c as Buffer);
    }
    let body: unknown;
    if (size > 0) {
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        this.faults.push(`${method} ${url.pathname}: the body is not JSON`);
        return send({ status: 400, body: { message: "Problems parsing JSON", documentation_url: "https://docs.github.com/rest" } });
      }
    }
    seen.body = body;
    if (auth !== `Bearer ${this.token}` && auth !== `token ${this.token}`) {
      return send({ status: 401, body: { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" } });
    }
    const bad = graphql ? null : requestFault(operation as Operation, body);
    if (bad) {
      this.faults.push(bad);
      return send({ status: 422, body: { message: "Validation Failed", documentation_url: "https://docs.github.com/rest" } });
    }
    let answer: Answer;
    const refusal = this.refusals.find((d) => d.method === method && d.template === operation.template && d.count > 0 && (d.match?.(body) ?? true));
    try {
      if (refusal) refusal.count -= 1;
      answer = refusal ? { status: refusal.status, body: { message: "refused by the test", documentation_url: "https://docs.github.com/rest" } } : graphql ? graphqlAnswer(this, body) : route(this, operation.method, operation.template, params, url.searchParams, body);
    } catch (e) {
      this.faults.push(`${method} ${url.pathname}: the fake failed: ${(e as Error).message}`);
      return send({ status: 500, body: { message: (e as Error).message } });
    }
    if (answer.status === 501) {
      this.faults.push(`${method} ${operation.template}: in GitHub's description, not in the fake`);
      return send(answer);
    }
    const fault = graphql ? null : responseFault(operation as Operation, answer.status, answer.body);
    if (fault) this.faults.push(fault);
    for (const h of [...this.hooks]) {
      if (h.method !== method || h.template !== operation.template) continue;
      if (h.once) this.hooks.splice(this.hooks.indexOf(h), 1);
      h.fn({ method, template: operation.template, params, body });
    }
    const drop = this.drops.find((d) => d.method === method && d.template === operation.template && d.count > 0 && (d.match?.(body) ?? true));
    if (drop) {
      drop.count -= 1;
      seen.status = -1;
      res.socket?.destroy();
      return;
    }
    send(answer);
  }
}

/** Starts a fake GitHub whose repositories live under `root`; requests must carry `token`. */
export async function startFakeGitHub(root: string, token = "fake-token"): Promise<FakeGitHub> {
  return new FakeGitHub(root, token).start();
}

/**
 * The fake GitHubs of one test file: each call starts one under a fresh folder of one temporary root (requests must
 * carry `token`); after the file they are all stopped and the root removed.
 */
export function fakeGitHubs(prefix: string, token: string): () => Promise<FakeGitHub> {
  const root = tempDir(prefix);
  const started: FakeGitHub[] = [];
  // Every test of the file holds the fake to GitHub's description: a request or answer outside it fails the test that
  // made it, whether or not the test looked (a test that makes faults on purpose asserts them, then takes them out).
  afterEach(() => {
    for (const f of started) assert.deepEqual(f.faults.splice(0), [], "requests or answers outside GitHub's description");
  });
  after(async () => {
    for (const f of started) await f.stop();
    rmSync(root, { recursive: true, force: true });
  });
  return async () => {
    const f = await startFakeGitHub(join(root, String(started.length + 1)), token);
    started.push(f);
    return f;
  };
}
