/**
 * The git objects a delivery round reads (protocol.md 交付插件, 审查: 裸 Git 对象转文字差异): fetched by SHA into a bare
 * repository of the round's own (its working folder's `delivery-objects/<owner>__<name>.git`), never checked out. Only
 * what git needs to read objects runs: no hooks (the cache has none, and `core.hooksPath` points nowhere), no config
 * of the machine or the user, and only the `https` and `file` transports (a clone URL from an answer can never name
 * `ext::` or another that runs a command).
 *
 * The token reaches git through `GIT_CONFIG_*` variables of its environment, as an `http.<origin>.extraHeader`, so it
 * is on no command line and in no file.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { isAbsolute, join } from "node:path";

/** How long one fetch may take, in ms. */
export const fetchTimeoutMs = 10 * 60_000;

/** The environment of git: none of the machine's or user's config, no prompt, only https and local transports. */
function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0", GIT_ALLOW_PROTOCOL: "https:file", GIT_ATTR_NOSYSTEM: "1", ...extra,
  };
}

/**
 * Where a clone URL may point: an `https` URL without credentials, or — only when `local` (a test's fake GitHub on
 * 127.0.0.1) — an absolute path of a bare repository on this machine.
 */
export function cloneUrlAllowed(url: string, local: boolean): boolean {
  if (local && isAbsolute(url) && !url.includes("\n")) return true;
  try {
    const u = new URL(url);
    return u.protocol === "https:" && !u.username && !u.password;
  } catch {
    return false;
  }
}

/**
 * Makes sure the bare repository `dir` holds commits `shas` (40 hex digits each), fetching the missing ones by SHA from
 * `cloneUrl` (see the module comment); `token` is sent to an https origin as GitHub's `x-access-token`.
 * @throws Error when a SHA is malformed, the URL is not allowed, or git cannot fetch (the message has git's last line,
 *   never the token).
 */
export function fetchObjects(dir: string, cloneUrl: string, shas: string[], token: string, local: boolean): void {
  for (const sha of shas) if (!/^[0-9a-f]{40}$/.test(sha)) throw new Error(`not a commit SHA: ${JSON.stringify(sha.slice(0, 80))}`);
  if (!cloneUrlAllowed(cloneUrl, local)) throw new Error(`the repository's clone URL is not an https address: ${JSON.stringify(cloneUrl.slice(0, 200))}`);
  if (!existsSync(join(dir, "HEAD"))) {
    mkdirSync(dir, { recursive: true });
    execFileSync("git", ["init", "--bare", "--quiet", "--template=", dir], { env: gitEnv(), stdio: "ignore" });
  }
  const have = (sha: string) => {
    try {
      execFileSync("git", ["-C", dir, "cat-file", "-e", `${sha}^{commit}`], { env: gitEnv(), stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  };
  const missing = shas.filter((s) => !have(s));
  if (missing.length === 0) return;
  const auth: Record<string, string> = {};
  if (cloneUrl.startsWith("https://")) {
    auth.GIT_CONFIG_COUNT = "1";
    auth.GIT_CONFIG_KEY_0 = `http.${new URL(cloneUrl).origin}/.extraHeader`;
    auth.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
  }
  try {
    execFileSync("git", ["-C", dir, "-c", "core.hooksPath=/dev/null", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", cloneUrl, ...missing], {
      env: gitEnv(auth), stdio: ["ignore", "ignore", "pipe"], timeout: fetchTimeoutMs, encoding: "utf8",
    });
  } catch (e) {
    const said = String((e as { stderr?: string }).stderr ?? (e as Error).message).split(token).join("***").trim().split("\n").at(-1) ?? "";
    throw new Error(`git fetch of ${missing.length} commits failed: ${said.slice(0, 300)}`);
  }
}

/**
 * The text of file `path` in commit `commit` of the bare repository `dir` (the review guide of main), or null when the
 * commit has no such file.
 * @throws Error when the file is larger than `bytesMax`.
 */
export function fileAt(dir: string, commit: string, path: string, bytesMax: number): string | null {
  const git = (args: string[]) => execFileSync("git", ["-C", dir, ...args], { env: gitEnv(), encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: bytesMax * 2 });
  try {
    if (git(["cat-file", "-t", `${commit}:${path}`]).trim() !== "blob") return null;
  } catch {
    return null;
  }
  if (Number(git(["cat-file", "-s", `${commit}:${path}`]).trim()) > bytesMax) throw new Error(`${path}: larger than ${bytesMax} bytes`);
  return git(["cat-file", "blob", `${commit}:${path}`]);
}
