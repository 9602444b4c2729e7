/**
 * A project's delivery settings, `ops/delivery.json` (protocol.md 交付插件, 读取设置): read from the fixed commit of
 * main a round reviews against — never from the pull request — and read again when a new round follows a main that
 * moved. Every field is checked; a wrong one is an error naming it (`ops/delivery.json: review.status: …`).
 *
 * ```json
 * { "checks": { "workflow": "CI", "jobs": ["check", "lint"] },
 *   "review": { "status": "agent-review", "command": ["my-reviewer", "--strict"], "guide": "docs/review.md" },
 *   "ship": { "workflow": "Ship" },
 *   "health": { "url": "https://app.example.com/health", "field": "version" },
 *   "trackMinutes": 30 }
 * ```
 * Only `checks` is required. `review.status` is the commit status the review writes (default `agent-review`),
 * `review.command` the reviewer (null: the plugin's default Codex reviewer, reviewer-codex.ts), `review.guide` a file of main with
 * the review's points; `ship.workflow` the workflow that releases (default `Ship`); `health` where the live version is
 * read (none: the project says plainly that only the merge was done); `trackMinutes` how long a merged delivery is
 * followed before the run ends for the hub's retry (default 30); `internalDocs` the paths that are ordinary internal
 * docs, which need no release and no model review (default `["**\/*.md", "docs/**"]`; project.ts).
 */
import { execFileSync } from "node:child_process";
import { parseJson, t, type Lang } from "agent-autoloop/sdk";
import { healthUrlAllowed, internalDocsDefault } from "./project.js";

/** The largest settings file read, in bytes. */
export const settingsBytesMax = 65_536;
/** The most job names `checks.jobs` may list. */
export const checkJobsMax = 50;
/** The most arguments `review.command` may have. */
export const reviewArgsMax = 64;
/** The most patterns `internalDocs` may list. */
export const internalDocsMax = 100;
/** The longest text of a name or argument. */
const textMax = 500;

/** The settings, with their defaults filled in. */
export interface DeliverySettings {
  checks: { workflow: string; jobs: string[] };
  review: { status: string; command: string[] | null; guide: string | null };
  ship: { workflow: string };
  health: { url: string; field: string } | null;
  trackMinutes: number;
  /** Patterns of the paths that are ordinary internal docs (project.ts: `**`, `*`, `?`). */
  internalDocs: readonly string[];
}

/** Options of reading: `testLocalHealth` allows exactly `http://127.0.0.1` health URLs (`--test-local-health`). */
export interface SettingsOptions { testLocalHealth?: boolean; lang: Lang }

/** A settings file that cannot be used; the message names the field. */
export class SettingsError extends Error {}

type Obj = Record<string, unknown>;

/** A reader of one file's fields that throws `SettingsError` naming the field. */
class Fields {
  constructor(readonly lang: Lang) {}
  private fail(message: string): never {
    throw new SettingsError(message);
  }
  name(path: string): string {
    return `ops/delivery.json: ${path}`;
  }
  object(v: unknown, path: string, keys: string[]): Obj {
    if (typeof v !== "object" || v === null || Array.isArray(v)) this.fail(t(this.lang, "field.type", { field: this.name(path), type: "object" }));
    for (const k of Object.keys(v)) if (!keys.includes(k)) this.fail(t(this.lang, "field.unknown", { field: this.name(path ? `${path}.${k}` : k) }));
    return v as Obj;
  }
  text(v: unknown, path: string, fallback?: string): string {
    if (v === undefined && fallback !== undefined) return fallback;
    if (v === undefined) this.fail(t(this.lang, "field.required", { field: this.name(path) }));
    if (typeof v !== "string") this.fail(t(this.lang, "field.type", { field: this.name(path), type: "string" }));
    if (v.trim() === "") this.fail(t(this.lang, "field.minLength", { field: this.name(path) }));
    if (v.length > textMax) this.fail(t(this.lang, "field.maxLength", { field: this.name(path), limit: textMax }));
    if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(v)) this.fail(t(this.lang, "field.pattern", { field: this.name(path), what: t(this.lang, "pattern.noControl") }));
    return v;
  }
  texts(v: unknown, path: string, min: number, max: number): string[] {
    if (!Array.isArray(v)) this.fail(t(this.lang, "field.type", { field: this.name(path), type: "array" }));
    if (v.length < min) this.fail(t(this.lang, "field.minItems", { field: this.name(path), limit: min }));
    if (v.length > max) this.fail(t(this.lang, "field.maxItems", { field: this.name(path), limit: max }));
    return v.map((x, i) => this.text(x, `${path}[${i}]`));
  }
}

/**
 * Reads settings from the text of `ops/delivery.json`.
 * @throws SettingsError naming the field (in `opts.lang`) when the text is not JSON or a field is wrong.
 */
export function parseSettings(text: string, opts: SettingsOptions): DeliverySettings {
  const { lang } = opts;
  if (Buffer.byteLength(text) > settingsBytesMax) throw new SettingsError(t(lang, "delivery.settingsTooLarge", { limit: settingsBytesMax }));
  // Where it is not JSON, never V8's message: that quotes the file around the fault (issue 26 round 10), and an agent
  // may write this file.
  const read = parseJson(text);
  if (!read.ok) throw new SettingsError(t(lang, "delivery.settingsNotJson", { error: t(lang, "json.at", { ...read.at }) }));
  const raw = read.value;
  const f = new Fields(lang);
  const top = f.object(raw, "", ["$schema", "checks", "review", "ship", "health", "trackMinutes", "internalDocs"]);
  if (top.checks === undefined) throw new SettingsError(t(lang, "field.required", { field: f.name("checks") }));
  const checks = f.object(top.checks, "checks", ["workflow", "jobs"]);
  const review = top.review === undefined ? {} : f.object(top.review, "review", ["status", "command", "guide"]);
  const ship = top.ship === undefined ? {} : f.object(top.ship, "ship", ["workflow"]);
  let health: DeliverySettings["health"] = null;
  if (top.health !== undefined) {
    const h = f.object(top.health, "health", ["url", "field"]);
    const url = f.text(h.url, "health.url");
    if (!healthUrlAllowed(url, opts.testLocalHealth === true)) throw new SettingsError(t(lang, "field.pattern", { field: f.name("health.url"), what: t(lang, "delivery.healthHttps") }));
    health = { url, field: f.text(h.field, "health.field", "version") };
  }
  let trackMinutes = 30;
  if (top.trackMinutes !== undefined) {
    if (typeof top.trackMinutes !== "number" || !Number.isInteger(top.trackMinutes)) throw new SettingsError(t(lang, "field.type", { field: f.name("trackMinutes"), type: "integer" }));
    if (top.trackMinutes < 1 || top.trackMinutes > 1440) throw new SettingsError(t(lang, "field.range", { field: f.name("trackMinutes") }));
    trackMinutes = top.trackMinutes;
  }
  return {
    checks: { workflow: f.text(checks.workflow, "checks.workflow"), jobs: f.texts(checks.jobs, "checks.jobs", 1, checkJobsMax) },
    review: {
      status: f.text(review.status, "review.status", "agent-review"),
      command: review.command === undefined ? null : f.texts(review.command, "review.command", 1, reviewArgsMax),
      guide: review.guide === undefined ? null : repoPath(f, review.guide, "review.guide"),
    },
    ship: { workflow: f.text(ship.workflow, "ship.workflow", "Ship") },
    health,
    trackMinutes,
    internalDocs: top.internalDocs === undefined ? internalDocsDefault : f.texts(top.internalDocs, "internalDocs", 0, internalDocsMax),
  };
}

/** A path inside the repository: relative, no `.` or `..` parts. */
function repoPath(f: Fields, v: unknown, path: string): string {
  const s = f.text(v, path);
  if (s.startsWith("/") || s.split("/").some((p) => p === "" || p === "." || p === "..")) {
    throw new SettingsError(t(f.lang, "field.invalid", { field: f.name(path) }));
  }
  return s;
}

/**
 * Reads the settings of commit `commit` (40 hex digits: the main commit the round reviews against) from the bare
 * repository `gitDir` with real git, never from a checkout.
 * @throws SettingsError when the file is missing there or wrong (see `parseSettings`); Error when `commit` is no SHA.
 */
export function settingsAt(gitDir: string, commit: string, opts: SettingsOptions): DeliverySettings {
  if (!/^[0-9a-f]{40}$/.test(commit)) throw new Error(`not a commit SHA: ${JSON.stringify(commit.slice(0, 80))}`);
  const git = (args: string[]) => execFileSync("git", ["-C", gitDir, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: settingsBytesMax * 2, env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" } });
  let size: number;
  try {
    if (git(["cat-file", "-t", `${commit}:ops/delivery.json`]).trim() !== "blob") throw new Error("not a file");
    size = Number(git(["cat-file", "-s", `${commit}:ops/delivery.json`]).trim());
  } catch {
    throw new SettingsError(t(opts.lang, "delivery.settingsMissing", { commit }));
  }
  if (size > settingsBytesMax) throw new SettingsError(t(opts.lang, "delivery.settingsTooLarge", { limit: settingsBytesMax }));
  return parseSettings(git(["cat-file", "blob", `${commit}:ops/delivery.json`]), opts);
}
