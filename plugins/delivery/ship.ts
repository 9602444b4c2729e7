/**
 * The script of `plugins/delivery/action.yml` (protocol.md 交付插件, 发布): in a project's Ship workflow on a push to
 * main, decides for the pushed commit (`GITHUB_SHA`, the target) and writes two outputs to `GITHUB_OUTPUT`:
 *
 * - `superseded`: `true` when main has moved past the target already (main's head contains it): the run of the later
 *   commit releases both, so this one releases nothing;
 * - `release`: `true` when the target needs a release: the release scope (project.ts) of the whole diff from the
 *   version the health endpoint serves to the target. Only ordinary internal docs skip; an unknown live version (no
 *   health settings, no answer, a short SHA GitHub cannot expand, a version not in the target's history) releases.
 *
 * The project's own release steps run when `release` is `true`; the delivery round then sees the Ship run succeed and
 * the health version contain the merge (or differ by internal docs only). Settings come from `ops/delivery.json` of
 * the target commit (`health.url`, `health.field`, `internalDocs`); a health URL must be https, or exactly
 * `http://127.0.0.1` with `test-local-health: 'true'`. A settings file that cannot be read fails the step (exit 1);
 * GitHub or the health endpoint not answering never does — it means a release.
 *
 * Environment (set by the runner and action.yml): GITHUB_REPOSITORY, GITHUB_SHA, GITHUB_API_URL, GITHUB_WORKSPACE (a
 * checkout of the target; `fetch-depth: 0` lets the scope see the history), GITHUB_OUTPUT, GH_TOKEN,
 * TEST_LOCAL_HEALTH. Imports only Node (the action runs it with `npx tsx`, without this package's dependencies).
 */
import { execFileSync } from "node:child_process";
import { appendFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { GitHub } from "./github.js";
import { contains, fullSha, healthUrlAllowed, internalDocsDefault, readHealth, releaseScope } from "./project.js";

/** The settings the action reads of `ops/delivery.json`. */
export interface ShipSettings { health: { url: string; field: string } | null; internalDocs: readonly string[] }

/** What the action decided, and why (its log line). */
export interface ShipDecision { release: boolean; superseded: boolean; why: string }

/**
 * The action's part of `ops/delivery.json` (the delivery round checks the whole file before it merges).
 * @throws Error naming the field when it is wrong.
 */
export function shipSettings(text: string, testLocalHealth: boolean): ShipSettings {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Never V8's message: it quotes the file around the fault (issue 26 round 10); the delivery round, which checks
    // the whole file before it merges, says the line and column.
    throw new Error("ops/delivery.json: not JSON");
  }
  const obj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  if (!obj(raw)) throw new Error("ops/delivery.json: must be an object");
  let health: ShipSettings["health"] = null;
  if (raw.health !== undefined) {
    const h = raw.health;
    if (!obj(h) || typeof h.url !== "string") throw new Error("ops/delivery.json: health.url: must be a string");
    if (!healthUrlAllowed(h.url, testLocalHealth)) throw new Error("ops/delivery.json: health.url: must be an https address (http://127.0.0.1 only with test-local-health: 'true')");
    if (h.field !== undefined && typeof h.field !== "string") throw new Error("ops/delivery.json: health.field: must be a string");
    health = { url: h.url, field: (h.field as string | undefined) ?? "version" };
  }
  const docs = raw.internalDocs;
  if (docs !== undefined && (!Array.isArray(docs) || docs.some((d) => typeof d !== "string" || d === ""))) throw new Error("ops/delivery.json: internalDocs: must be a list of patterns");
  return { health, internalDocs: (docs as string[] | undefined) ?? internalDocsDefault };
}

/** What deciding needs. `workspace`: a checkout holding `target`. */
export interface ShipInput { gh: GitHub; repo: string; target: string; workspace: string; settings: ShipSettings; testLocalHealth: boolean }

/** git in the checkout; null when it fails (a commit it does not have, no network). */
function git(dir: string, args: string[]): string | null {
  try {
    return execFileSync("git", ["-C", dir, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 120_000 }).trim();
  } catch {
    return null;
  }
}

/** Decides for `input.target` (see the module comment). Never throws. */
export async function decideShip(input: ShipInput): Promise<ShipDecision> {
  const { gh, repo, target, workspace, settings } = input;
  try {
    const main = (await gh.request("GET", `/repos/${repo}/git/ref/heads/main`))?.object?.sha;
    if (typeof main === "string" && main !== target) {
      const c = await gh.request("GET", `/repos/${repo}/compare/${target}...${main}`);
      if (c?.status === "ahead") return { release: false, superseded: true, why: `main has moved on to ${main.slice(0, 12)}, which contains ${target.slice(0, 12)}: its Ship releases both` };
    }
  } catch {
    // GitHub unreadable: not known to be superseded, so the scope decides
  }
  if (settings.health === null) return { release: true, superseded: false, why: "ops/delivery.json has no health settings: the live version is unknown" };
  const read = await readHealth(settings.health.url, settings.health.field, input.testLocalHealth);
  if (read.kind === "unknown") return { release: true, superseded: false, why: read.why };
  const live = await fullSha(gh, repo, read.sha);
  if (live === null) return { release: true, superseded: false, why: `the live version ${read.sha} is not a commit GitHub knows` };
  if (git(workspace, ["cat-file", "-e", `${live}^{commit}`]) === null) git(workspace, ["fetch", "--quiet", "--no-tags", "origin", live]);
  if (contains(workspace, live, target)) return { release: false, superseded: false, why: `the live version ${live.slice(0, 12)} contains ${target.slice(0, 12)} already` };
  const scope = releaseScope(workspace, live, target, settings.internalDocs);
  return { release: scope.release, superseded: false, why: `${scope.why} (live ${live.slice(0, 12)}, target ${target.slice(0, 12)})` };
}

/** The action's step: reads the environment, decides, writes the outputs. @returns the exit code. */
async function main(env: NodeJS.ProcessEnv): Promise<number> {
  const [repo, target, workspace, output] = [env.GITHUB_REPOSITORY, env.GITHUB_SHA, env.GITHUB_WORKSPACE ?? process.cwd(), env.GITHUB_OUTPUT];
  if (!repo || !target || !/^[0-9a-f]{40}$/.test(target) || !output) {
    process.stderr.write("ship.ts: GITHUB_REPOSITORY, GITHUB_SHA and GITHUB_OUTPUT must be set (it runs as a step of a GitHub workflow)\n");
    return 1;
  }
  const testLocalHealth = env.TEST_LOCAL_HEALTH === "true";
  let settings: ShipSettings;
  try {
    const text = git(workspace, ["show", `${target}:ops/delivery.json`]);
    if (text === null) throw new Error(`ops/delivery.json: not in ${target.slice(0, 12)} of the checkout`);
    settings = shipSettings(text, testLocalHealth);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    return 1;
  }
  const gh = new GitHub((env.GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, ""), env.GH_TOKEN ?? "");
  const d = await decideShip({ gh, repo, target, workspace, settings, testLocalHealth });
  appendFileSync(output, `release=${d.release}\nsuperseded=${d.superseded}\n`);
  process.stdout.write(`release=${d.release} superseded=${d.superseded}: ${d.why.replace(/[\r\n]+/g, " ")}\n`);
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = await main(process.env);
