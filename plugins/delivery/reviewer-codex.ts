/**
 * The default reviewer of a delivery round (protocol.md 交付插件, 审查进程: "默认 Codex 忽略用户配置和记忆，只读独立快照"):
 * the real Codex CLI (`codex exec`), used when the project's `ops/delivery.json` names no `review.command`.
 *
 * The isolated snapshot: a new folder holding only `changes.diff` (the branch's own changes, as review-diff.ts makes
 * them) and `review-guide.md` (main's guide, when the project has one). Codex starts there (`-C`), in its read-only
 * sandbox, and is told to run nothing; it never sees a checkout of the pull request. The diff also comes on its
 * standard input (Codex adds it to the prompt as a `<stdin>` block) and the guide in the prompt, so the review never
 * depends on Codex's shell working where the round runs (inside the hub's agent sandbox, Codex's own sandbox may not
 * start).
 * The user's config and memory are ignored: `CODEX_HOME` is a new folder inside the snapshot's room (no config.toml,
 * AGENTS.md, rules, skills, memories or sessions of the user's), holding only a copy of the user's `auth.json` when
 * one exists (the credential, nothing else); `--ignore-user-config`, `--ignore-rules`, `--ephemeral` and the
 * `memories`, `hooks` and `plugins` features off say the same to Codex itself. The environment is `PATH`, `LANG`,
 * `HOME` and `TMPDIR` (inside the room) and the API keys `OPENAI_API_KEY` and `CODEX_API_KEY` when the round has them.
 * The model and its provider come only from the rule's command (`round.ts --codex-config key=value`, each a Codex
 * `-c` override: the owner's rules.json, never the project or the pull request).
 *
 * The verdict is Codex's last message, held to `verdictSchema` (`--output-schema`): `{"verdict": "passed", "findings":
 * ""}` or `{"verdict": "findings", "findings": "…"}`. Anything else — no last message, not that JSON, an exit other than 0,
 * the time or output limit of reviewer.ts — is a reviewer that did not run (the round ends for the hub's retry).
 */
import { copyFileSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { findingsCharsMax, reviewTimeoutMs, runInRoom, type ReviewVerdict } from "./reviewer.js";

/** The most `--codex-config` overrides a rule's command may give. */
export const codexConfigMax = 32;

/** The JSON Schema of the reviewer's last message (Codex's `--output-schema`). */
export const verdictSchema = {
  type: "object",
  properties: {
    verdict: { type: "string", enum: ["passed", "findings"] },
    findings: { type: "string", description: "The problems found, one per line, each naming its file; empty when the verdict is passed." },
  },
  required: ["verdict", "findings"],
  additionalProperties: false,
} as const;

/**
 * What Codex is asked (it reads the files itself, in its read-only sandbox). For the model, not for people: no
 * catalog text.
 * @param guide the text of main's review guide, or null.
 */
export function codexReviewPrompt(guide: string | null): string {
  return [
    "You review a pull request's changes before they are merged into main.",
    "The changes are in the <stdin> block below: the branch's own commits as a text diff (clean merges of main are left out, conflict resolutions kept).",
    "This folder is a snapshot made for this review; it holds only changes.diff (the same diff)" + (guide === null ? "." : " and review-guide.md (the guide below)."),
    "Nothing else of the project is here: do not look for it, and do not run, build or change anything.",
    ...(guide === null ? [] : ["The project's points for reviews, to follow:", "<review-guide>", guide, "</review-guide>"]),
    "Look for bugs, security problems, missing error handling and anything the guide asks for.",
    'Answer only with the JSON the output schema describes: {"verdict": "passed", "findings": ""} when nothing must change',
    'before the merge; otherwise {"verdict": "findings", "findings": "<the problems, one per line, each with its file>"}.',
  ].join("\n");
}

/** Options of the Codex reviewer. */
export interface CodexReviewerOptions {
  /** `-c` overrides (`key=value`, TOML values) from the rule's command: the model and its provider. */
  config: readonly string[];
  /** The round's environment (API keys, `CODEX_HOME`, `PATH`, `LANG`, `HOME`). */
  env: NodeJS.ProcessEnv;
  /** The program (default `codex` on `PATH`). */
  program?: string;
  /** The time limit in ms (default reviewer.ts's 30 minutes; tests give a shorter one). */
  timeoutMs?: number;
}

/** The user's Codex credential file (`$CODEX_HOME/auth.json`, else `~/.codex/auth.json`) when it is a regular file. */
function userAuthFile(env: NodeJS.ProcessEnv): string | null {
  const file = join(env.CODEX_HOME || join(env.HOME || homedir(), ".codex"), "auth.json");
  try {
    return lstatSync(file).isFile() ? file : null;
  } catch {
    return null;
  }
}

/**
 * Reviews `diff` (with the guide's text `guide`, or null) with the Codex CLI in an isolated snapshot; see the module
 * comment.
 * @returns the verdict; never throws for Codex's own failure (that is `broken`, with the end of its standard error).
 */
export async function runCodexReviewer(diff: string, guide: string | null, options: CodexReviewerOptions): Promise<ReviewVerdict> {
  const room = mkdtempSync(join(tmpdir(), "delivery-codex-review-"));
  try {
    const snapshot = join(room, "snapshot");
    const codexHome = join(room, "codex-home");
    const tmp = join(room, "tmp");
    for (const d of [snapshot, codexHome, tmp]) mkdirSync(d, { mode: 0o700 });
    writeFileSync(join(snapshot, "changes.diff"), diff, { mode: 0o444 });
    if (guide !== null) writeFileSync(join(snapshot, "review-guide.md"), guide, { mode: 0o444 });
    const auth = userAuthFile(options.env);
    if (auth) copyFileSync(auth, join(codexHome, "auth.json"));
    const schema = join(room, "verdict.schema.json");
    const last = join(room, "last-message.json");
    writeFileSync(schema, JSON.stringify(verdictSchema));
    const env: NodeJS.ProcessEnv = { PATH: options.env.PATH ?? "/usr/bin:/bin", HOME: room, TMPDIR: tmp, CODEX_HOME: codexHome };
    for (const k of ["LANG", "OPENAI_API_KEY", "CODEX_API_KEY"]) if (options.env[k]) env[k] = options.env[k];
    const command = [
      options.program ?? "codex", "exec",
      "--ephemeral", "--ignore-user-config", "--ignore-rules", "--skip-git-repo-check",
      "--disable", "memories", "--disable", "hooks", "--disable", "plugins",
      "-s", "read-only", "-C", snapshot, "--output-schema", schema, "-o", last,
      ...options.config.flatMap((c) => ["-c", c]),
      "--", codexReviewPrompt(guide),
    ];
    const exit = await runInRoom(command, snapshot, env, diff, options.timeoutMs ?? reviewTimeoutMs);
    if (exit.kind !== "exited") return { kind: "broken", reason: exit.reason.replace("the reviewer", "the Codex reviewer") };
    if (exit.code !== 0) {
      const why = exit.stderrTail.trim().split("\n").slice(-3).join(" ").slice(-500);
      return { kind: "broken", reason: `the Codex reviewer ended with ${exit.signal ?? `exit code ${exit.code}`}${why ? `: ${why}` : ""}` };
    }
    return verdictOf(readLast(last));
  } finally {
    rmSync(room, { recursive: true, force: true });
  }
}

/** The last message Codex wrote (`-o`), or null when it wrote none. */
function readLast(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/**
 * The verdict in Codex's last message `text` (null: none written), held to `verdictSchema`; a message that is not
 * that JSON is a reviewer that did not run, never a pass.
 */
export function verdictOf(text: string | null): ReviewVerdict {
  if (text === null || text.trim() === "") return { kind: "broken", reason: "the Codex reviewer gave no last message" };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { kind: "broken", reason: "the Codex reviewer's last message is not the verdict's JSON" };
  }
  const o = typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const extra = Object.keys(o).filter((k) => k !== "verdict" && k !== "findings");
  if (extra.length > 0 || typeof o.findings !== "string") return { kind: "broken", reason: "the Codex reviewer's last message is not the verdict's JSON" };
  if (o.verdict === "passed") return { kind: "passed" };
  if (o.verdict === "findings") return { kind: "findings", text: (o.findings.trim() || "(the reviewer gave no text)").slice(0, findingsCharsMax) };
  return { kind: "broken", reason: "the Codex reviewer's last message is not the verdict's JSON" };
}
