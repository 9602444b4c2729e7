/**
 * The delivery plugin's GitHub REST client (protocol.md 交付插件): plain `fetch`, a base URL (GitHub's, or a test's
 * fake), a token, a time limit per request and a size limit per answer. Nothing else of the plugin speaks HTTP. It imports
 * only Node: the project's Ship action (ship.ts) runs it without this package's dependencies.
 */
/** How long one request may take before it counts as failed, in ms. */
export const requestTimeoutMs = 30_000;
/** The largest answer body read, in bytes; a larger one is a failed request. */
export const responseBytesMax = 10_000_000;
/** GitHub's largest page. */
export const perPage = 100;

/** A request that failed: `status` is GitHub's answer, or null when none came (network, time limit, lost answer). */
export class GitHubError extends Error {
  constructor(readonly status: number | null, message: string) {
    super(message);
  }
}

/** A REST client of one GitHub (see the module comment). */
export class GitHub {
  constructor(readonly baseUrl: string, private readonly token: string) {}

  /**
   * Sends `method path` (path from the API root, with its query) with an optional JSON body.
   * @returns the parsed JSON body (undefined when empty).
   * @throws GitHubError on an answer other than 2xx, no answer, a body over `responseBytesMax` or not JSON.
   */
  async request(method: string, path: string, body?: unknown): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
    let res: Response;
    try {
      res = await fetch(this.baseUrl + path, {
        method,
        headers: {
          accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28", authorization: `Bearer ${this.token}`,
          "user-agent": "agent-autoloop-delivery", ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(requestTimeoutMs),
      });
    } catch (e) {
      throw new GitHubError(null, `${method} ${path}: no answer (${(e as Error).name === "TimeoutError" ? `${requestTimeoutMs / 1000} s` : ((e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message)})`);
    }
    const text = await readLimited(res, `${method} ${path}`);
    if (!res.ok) {
      let message = "";
      try {
        message = String(JSON.parse(text).message ?? "");
      } catch { /* not JSON: the status says enough */ }
      throw new GitHubError(res.status, `${method} ${path}: ${res.status}${message ? ` ${message.slice(0, 200)}` : ""}`);
    }
    if (text === "") return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new GitHubError(res.status, `${method} ${path}: the answer is not JSON`);
    }
  }

  /**
   * Sends a GraphQL `query` with `variables` to GitHub's GraphQL endpoint (`<base>/graphql`): the few operations REST
   * has not (turning a draft ready, turning auto-merge off; ready.ts).
   * @returns the answer's `data`.
   * @throws GitHubError as `request`, and (status 200) when the answer carries `errors` or no `data`.
   */
  async graphql(query: string, variables: Record<string, unknown>): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const got = await this.request("POST", "/graphql", { query, variables });
    const errors = Array.isArray(got?.errors) ? got.errors.map((e: { message?: unknown }) => String(e?.message ?? "")).join("; ") : "";
    if (errors || got?.data == null) throw new GitHubError(200, `POST /graphql: ${errors.slice(0, 300) || "no data in the answer"}`);
    return got.data;
  }

  /**
   * The items of a list request, page after page of `perPage`, at most `pagesMax` pages. `key` names the list in an
   * answer that wraps it (`jobs` of `{ total_count, jobs }`); without it the answer is the list.
   * @returns the items and whether more may be left.
   */
  async list(path: string, pagesMax: number, key?: string): Promise<{ items: any[]; more: boolean }> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const items: unknown[] = [];
    const sep = path.includes("?") ? "&" : "?";
    for (let page = 1; page <= pagesMax; page++) {
      const answer = await this.request("GET", `${path}${sep}per_page=${perPage}&page=${page}`);
      const got = key === undefined ? answer : answer?.[key];
      if (!Array.isArray(got)) throw new GitHubError(200, `GET ${path}: the answer is not a list`);
      items.push(...got);
      if (got.length < perPage) return { items, more: false };
    }
    return { items, more: true };
  }
}

/** The body of `res` as text, at most `responseBytesMax` bytes. @throws GitHubError when larger. */
async function readLimited(res: Response, what: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const c of res.body ?? []) {
      size += c.length;
      if (size > responseBytesMax) throw new GitHubError(res.status, `${what}: the answer is larger than ${responseBytesMax} bytes`);
      chunks.push(c);
    }
  } catch (e) {
    if (e instanceof GitHubError) throw e;
    throw new GitHubError(null, `${what}: the answer broke off (${(e as Error).message})`);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** `owner/name` as GitHub allows it. */
const repoPattern = /^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/;

/**
 * The repository a plugin command is given, `--repo owner/name` (fixed by the hub's rule, never by an event).
 * @returns it, or null when missing or not a name GitHub allows (`.` and `..` refused).
 */
export function repoArg(argv: string[]): string | null {
  const at = argv.indexOf("--repo");
  const repo = at >= 0 ? argv[at + 1] ?? "" : "";
  const name = repo.split("/")[1];
  return repoPattern.test(repo) && name !== "." && name !== ".." ? repo : null;
}
