/**
 * Fixtures of the declarative plugin tests: copies of examples/declarative-plugins/example in temporary roots, edited
 * per case, and a local HTTP server on 127.0.0.1 port 0 that records what reaches it.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { engine, type Fixture } from "./helpers.js";

/** The example declarative plugin of the repository. */
export const examplePlugin = join(engine, "examples", "declarative-plugins", "example");

/** Copies the example plugin into `root` as folder `id` (its plugin.json's id set to match). @returns the folder. */
export function copyExample(root: string, id = "example"): string {
  const dir = join(root, id);
  mkdirSync(root, { recursive: true });
  cpSync(examplePlugin, dir, { recursive: true });
  if (id !== "example") editJson(dir, "plugin.json", (m) => ({ ...m, id }));
  return dir;
}

/** Reads, edits and writes back a JSON file of a plugin folder. */
export function editJson(dir: string, file: string, edit: (value: any) => unknown): void {
  const path = join(dir, file);
  writeFileSync(path, JSON.stringify(edit(JSON.parse(readFileSync(path, "utf8"))), null, 2));
}

/** Writes files into a plugin folder (objects as JSON), making folders as needed. */
export function writeFiles(dir: string, files: Record<string, unknown>): void {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), typeof content === "string" ? content : JSON.stringify(content, null, 2));
  }
}

/** A minimal valid plugin (no assets) with `extra` fields of the manifest. */
export function minimalManifest(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, name: id, version: "1.0.0", apiVersion: "1.0", ...extra };
}

/** One request the local server saw. */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A local HTTP server: `handle` answers each request; every request is recorded in `seen`. */
export interface LocalServer {
  url: string;
  port: number;
  seen: Seen[];
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 port 0. */
export async function localServer(handle: (req: Seen, res: ServerResponse) => void): Promise<LocalServer> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const s: Seen = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      seen.push(s);
      handle(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`, port, seen,
    close: () => new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    }),
  };
}

/** Answers JSON with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

let claims = 0;
/**
 * Claims every queued run as worker w1 and ends it with `nothing`, checking each is of rule `rule`.
 * @returns the events the runs held, each `[source, type, subject, summary, detail or null]`, sorted.
 */
export async function routedEvents(f: Fixture, rule: string): Promise<unknown[]> {
  const seen: [string, string, string, string, string | null][] = [];
  for (;;) {
    // A claim id is the claim's idempotency key: each claim a new one.
    const job = (await f.call("GET", `/v1/work?claim=routed-${++claims}&wait=0`, f.keys.worker)).body.job;
    if (!job) break;
    if (job.rule.name !== rule) throw new Error(`a run of rule ${job.rule.name}, not ${rule}`);
    for (const e of job.context.events) seen.push([e.source, e.type, e.subject, e.summary, e.detail ?? null]);
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "nothing" });
  }
  return seen.sort();
}

/** A template with every node type of the vocabulary, a section holding some. */
export const everyNode = {
  title: "Release",
  data: [
    { type: "markdown", markdown: "# Notes\n\nShip **today**, see [the plan](https://example.com/plan) or [this](javascript:alert(1)).\n- one\n* two\n```\ncode `x`\n```\n<b>raw</b>" },
    { type: "section", title: "Status", children: [
      { type: "kv", title: "Build", kv: [["version", "1.2"], ["green", true], ["tests", 412]] },
      { type: "list", title: "Left", items: ["docs", "tag"] },
    ] },
    { type: "doc-ref", docId: "art_1", title: "Changelog" },
    { type: "doc-ref", docId: "art_2" },
    { type: "chart-lite", title: "Runs", chart: { kind: "bar", labels: ["a", "b", "c", "d", "e", "f", "g"], series: [1, 2, 3, 4, 5, 6, 7] } },
    { type: "form", id: "why", title: "Why not", fields: [{ name: "reason", label: "Reason" }, { name: "n", label: "Count", type: "number" }] },
    { type: "actions", actions: [{ id: "ok", label: "Ship it" }, { id: "no", label: "Hold", style: "danger" }] },
  ],
};
