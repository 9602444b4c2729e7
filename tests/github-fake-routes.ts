/**
 * The requests the fake GitHub (tests/github-fake.ts) answers, each as GitHub documents it: bodies are built with
 * `shape` from the description's own schemas, so each one is whole. A request the description has and the fake does
 * not is answered 501 and recorded as a fault.
 */
import type { FakeGitHub, Item, Repo } from "./github-fake.js";
import { shape } from "./github-fake-shapes.js";
import { commitTree, contains, git, mergeTree, resolve, setBranch } from "./github-fake-git.js";

/** An answer: status, JSON body (none for undefined), headers. */
export interface Answer { status: number; body?: unknown; headers?: Record<string, string> }

const docs = "https://docs.github.com/rest";
const error = (status: number, message: string): Answer => ({ status, body: { message, documentation_url: docs } });
const api = (f: FakeGitHub, path: string) => `${f.url}${path}`;

const user = (f: FakeGitHub, login: string) => shape("simple-user", {
  login, id: login.length * 7 + 1, node_id: `U_${login}`, type: "User", avatar_url: `https://avatars.example/${login}`,
  url: api(f, `/users/${login}`), html_url: `https://github.com/${login}`,
});

/** The `repository` shape of a repo (as in a pull request's head and base). */
function repository(f: FakeGitHub, r: Repo) {
  return shape("repository", {
    id: r.id, node_id: `R_${r.id}`, name: r.name, full_name: r.full, owner: user(f, r.owner), private: false, fork: r.forkOf !== null,
    html_url: `https://github.com/${r.full}`, url: api(f, `/repos/${r.full}`), clone_url: r.dir, default_branch: "main",
  });
}

const label = (name: string) => shape("label", { id: name.length, node_id: `L_${name}`, name, color: "ededed", default: false, url: `https://api.github.com/labels/${encodeURIComponent(name)}`, description: null });

/** An item as the issues API gives it (a pull request carries `pull_request`). */
function issue(f: FakeGitHub, r: Repo, i: Item) {
  return shape("issue", {
    id: i.id, node_id: `I_${i.id}`, number: i.number, title: i.title, body: i.body, state: i.state, user: user(f, i.user),
    labels: i.labels.map(label), url: api(f, `/repos/${r.full}/issues/${i.number}`), html_url: `https://github.com/${r.full}/issues/${i.number}`,
    created_at: i.createdAt, updated_at: i.updatedAt, closed_at: i.closedAt,
    ...(i.pull ? { pull_request: { url: api(f, `/repos/${r.full}/pulls/${i.number}`), html_url: `https://github.com/${r.full}/pull/${i.number}`, diff_url: null, patch_url: null, merged_at: i.pull.mergedAt } } : {}),
  });
}

/** A pull request as the pulls API gives it. */
function pull(f: FakeGitHub, r: Repo, i: Item) {
  const p = i.pull!;
  const head = f.repo(p.headRepo);
  const base = (ref: string, sha: string, repo: Repo) => ({ label: `${repo.owner}:${ref}`, ref, sha, user: user(f, repo.owner), repo: repository(f, repo) });
  return shape("pull-request", {
    id: i.id, node_id: `PR_${i.id}`, number: i.number, title: i.title, body: i.body, state: i.state, user: user(f, i.user),
    labels: i.labels.map((l) => ({ ...label(l) })), draft: p.draft, merged: p.merged, merged_at: p.mergedAt, merge_commit_sha: p.mergeSha,
    url: api(f, `/repos/${r.full}/pulls/${i.number}`), html_url: `https://github.com/${r.full}/pull/${i.number}`,
    created_at: i.createdAt, updated_at: i.updatedAt, closed_at: i.closedAt,
    auto_merge: p.autoMerge ? { enabled_by: user(f, "alice"), merge_method: p.autoMerge.method.toLowerCase(), commit_title: "", commit_message: "" } : null,
    head: base(p.headRef, f.headSha(r.full, i.number), head), base: base(p.baseRef, resolve(r.dir, `refs/heads/${p.baseRef}`) ?? "", r),
  });
}

/** `?per_page` and `?page` of a list (GitHub's defaults 30 and 1, at most 100 a page). */
function page<T>(all: T[], q: URLSearchParams): T[] {
  const per = Math.min(100, Math.max(1, Number(q.get("per_page") ?? 30)));
  const n = Math.max(1, Number(q.get("page") ?? 1));
  return all.slice((n - 1) * per, n * per);
}

/** Merges `theirs` into branch `ref` of `dir` as a merge commit. @returns its SHA, or null on a conflict. */
function mergeInto(dir: string, ours: string, theirs: string, message: string): string | null {
  const tree = mergeTree(dir, ours, theirs);
  return tree === null ? null : commitTree(dir, tree, [ours, theirs], message);
}

/**
 * Answers one request the description has: `template` and `params` as matched, `q` its query, `body` its JSON.
 * @throws Error on a fake's own bug (answered 500 and recorded).
 */
export function route(f: FakeGitHub, method: string, template: string, params: Record<string, string>, q: URLSearchParams, body: any): Answer { // eslint-disable-line @typescript-eslint/no-explicit-any
  const full = `${params.owner}/${params.repo}`;
  const r = f.repos.get(full);
  if (!r) return error(404, "Not Found");
  const n = Number(params.issue_number ?? params.pull_number);
  const it = Number.isSafeInteger(n) ? r.items.get(n) : undefined;
  const key = `${method} ${template.replace(/^\/repos\/\{owner\}\/\{repo\}/, "")}`;
  switch (key) {
    case "GET /issues": {
      const state = q.get("state") ?? "open";
      const wanted = (q.get("labels") ?? "").split(",").filter(Boolean);
      const all = [...r.items.values()].filter((i) => (state === "all" || i.state === state) && wanted.every((l) => i.labels.includes(l)));
      // GitHub's defaults: sort=created, direction=desc
      const by = q.get("sort") === "updated" ? (i: Item) => i.updatedAt : (i: Item) => i.createdAt;
      const sign = q.get("direction") === "asc" ? 1 : -1;
      all.sort((a, b) => sign * (by(a) < by(b) ? -1 : by(a) > by(b) ? 1 : a.number - b.number));
      return { status: 200, body: page(all, q).map((i) => issue(f, r, i)) };
    }
    case "GET /issues/{issue_number}":
      return it ? { status: 200, body: issue(f, r, it) } : error(404, "Not Found");
    case "GET /pulls/{pull_number}":
      return it?.pull ? { status: 200, body: pull(f, r, it) } : error(404, "Not Found");
    case "GET /issues/{issue_number}/events": {
      if (!it) return error(410, "Gone");
      if (r.brokenEvents.has(n)) return error(410, "This issue's events are not available");
      const events = (r.events.get(n) ?? []).map((e) => shape(`${e.event}-issue-event`, {
        id: e.id, node_id: `LE_${e.id}`, url: api(f, `/repos/${full}/issues/events/${e.id}`), actor: user(f, e.actor), event: e.event,
        commit_id: null, commit_url: null, created_at: e.createdAt, performed_via_github_app: null, label: { name: e.label, color: "ededed" },
      }));
      return { status: 200, body: page(events, q) };
    }
    case "POST /issues/{issue_number}/labels": {
      if (!it) return error(404, "Not Found");
      const names: string[] = (Array.isArray(body) ? body : body?.labels ?? []).map((l: string | { name: string }) => (typeof l === "string" ? l : l.name));
      for (const l of names) f.label(full, n, l, "delivery-bot");
      return { status: 200, body: it.labels.map(label) };
    }
    case "DELETE /issues/{issue_number}/labels/{name}": {
      if (!it || !f.unlabel(full, n, params.name!, "delivery-bot")) return error(404, "Label does not exist");
      return { status: 200, body: it.labels.map(label) };
    }
    case "PUT /pulls/{pull_number}/update-branch": {
      if (!it?.pull || it.state !== "open") return error(422, "Validation Failed");
      const head = f.repo(it.pull.headRepo);
      const headSha = f.headSha(full, n);
      if (body?.expected_head_sha && body.expected_head_sha !== headSha) return error(422, "expected head sha didn't match current head ref.");
      const main = resolve(r.dir, `refs/heads/${it.pull.baseRef}`)!;
      if (head.dir !== r.dir) git(head.dir, ["fetch", "--quiet", r.dir, `+refs/heads/${it.pull.baseRef}:refs/fake/base`]);
      if (contains(head.dir, headSha, main)) return error(422, "There are no new commits on the base branch.");
      if (mergeTree(head.dir, headSha, main) === null) return error(422, "merge conflict between base and head");
      f.later(() => {
        const now = resolve(head.dir, `refs/heads/${it.pull!.headRef}`)!;
        const merged = mergeInto(head.dir, now, main, `Merge branch '${it.pull!.baseRef}' into ${it.pull!.headRef}`);
        if (merged) setBranch(head.dir, it.pull!.headRef, merged);
      });
      return { status: 202, body: { message: "Updating pull request branch.", url: `https://github.com/${full}/pull/${n}` } };
    }
    case "PUT /pulls/{pull_number}/merge": {
      if (!it?.pull) return error(404, "Not Found");
      if (it.state !== "open" || it.pull.draft) return { status: 405, body: { message: "Pull Request is not mergeable", documentation_url: docs } };
      const headSha = f.headSha(full, n);
      if (body?.sha && body.sha !== headSha) return { status: 409, body: { message: "Head branch was modified. Review and try the merge again.", documentation_url: docs } };
      const head = f.repo(it.pull.headRepo);
      if (head.dir !== r.dir) git(r.dir, ["fetch", "--quiet", head.dir, `+refs/heads/${it.pull.headRef}:refs/pull/${n}/head`]);
      const main = resolve(r.dir, `refs/heads/${it.pull.baseRef}`)!;
      const merged = mergeInto(r.dir, main, headSha, `Merge pull request #${n} from ${it.pull.headRepo.split("/")[0]}/${it.pull.headRef}`);
      if (!merged) return { status: 405, body: { message: "Pull Request is not mergeable", documentation_url: docs } };
      setBranch(r.dir, it.pull.baseRef, merged);
      it.state = "closed";
      it.pull.merged = true;
      it.closedAt = it.updatedAt = it.pull.mergedAt = f.now();
      it.pull.mergeSha = merged;
      return { status: 200, body: shape("pull-request-merge-result", { sha: merged, merged: true, message: "Pull Request successfully merged" }) };
    }
    case "POST /statuses/{sha}": {
      if (!resolve(r.dir, params.sha!)) return error(422, "No commit found for SHA");
      const s = { id: f.id(), sha: params.sha!, context: body.context ?? "default", state: body.state, description: body.description ?? null, createdAt: f.now() };
      r.statuses.push(s);
      return { status: 201, body: status(f, r, s) };
    }
    case "GET /commits/{ref}/statuses": {
      const sha = resolve(r.dir, params.ref!);
      const all = r.statuses.filter((s) => s.sha === sha).reverse();
      return { status: 200, body: page(all, q).map((s) => status(f, r, s)) };
    }
    case "GET /git/ref/{ref}": {
      const sha = resolve(r.dir, `refs/${params.ref}`);
      if (!sha) return error(404, "Not Found");
      return { status: 200, body: shape("git-ref", { ref: `refs/${params.ref}`, node_id: `REF_${params.ref}`, url: api(f, `/repos/${full}/git/refs/${params.ref}`), object: { type: "commit", sha, url: api(f, `/repos/${full}/git/commits/${sha}`) } }) };
    }
    case "GET /compare/{basehead}": {
      const m = /^([^.]+)\.\.\.([^.]+)$/.exec(params.basehead!);
      const base = m && resolve(r.dir, m[1]!);
      const headSha = m && resolve(r.dir, m[2]!);
      if (!base || !headSha) return error(404, "Not Found");
      const [behind, ahead] = git(r.dir, ["rev-list", "--left-right", "--count", `${base}...${headSha}`]).split(/\s+/).map(Number) as [number, number];
      const mergeBase = git(r.dir, ["merge-base", base, headSha]);
      const commitOf = (sha: string) => shape("commit", { sha, node_id: `C_${sha}`, url: api(f, `/repos/${full}/commits/${sha}`), html_url: `https://github.com/${full}/commit/${sha}`, comments_url: api(f, `/repos/${full}/commits/${sha}/comments`), parents: [] });
      return { status: 200, body: shape("commit-comparison", {
        url: api(f, `/repos/${full}/compare/${params.basehead}`), html_url: `https://github.com/${full}/compare/${params.basehead}`,
        permalink_url: `https://github.com/${full}/compare/${base}...${headSha}`, diff_url: `https://github.com/${full}/compare/${params.basehead}.diff`,
        patch_url: `https://github.com/${full}/compare/${params.basehead}.patch`, base_commit: commitOf(base), merge_base_commit: commitOf(mergeBase),
        status: ahead === 0 && behind === 0 ? "identical" : behind === 0 ? "ahead" : ahead === 0 ? "behind" : "diverged", ahead_by: ahead, behind_by: behind, total_commits: ahead, commits: [],
      }) };
    }
    case "GET /commits/{ref}": {
      // a short SHA is expanded when it names one commit, as GitHub does
      const sha = /^[0-9a-f]{4,40}$/.test(params.ref!) ? resolve(r.dir, params.ref!) : null;
      if (!sha) return error(422, `No commit found for SHA: ${params.ref}`);
      return { status: 200, body: shape("commit", { sha, node_id: `C_${sha}`, url: api(f, `/repos/${full}/commits/${sha}`), html_url: `https://github.com/${full}/commit/${sha}`, comments_url: api(f, `/repos/${full}/commits/${sha}/comments`), parents: [] }) };
    }
    case "GET /actions/runs": {
      const all = r.runs.filter((w) => (!q.get("head_sha") || w.headSha === q.get("head_sha")) && (!q.get("event") || w.event === q.get("event")) && (!q.get("branch") || w.headBranch === q.get("branch"))).reverse();
      return { status: 200, body: { total_count: all.length, workflow_runs: page(all, q).map((w) => workflowRun(f, r, w)) } };
    }
    case "GET /actions/runs/{run_id}/jobs": {
      const w = r.runs.find((x) => x.id === Number(params.run_id));
      if (!w) return error(404, "Not Found");
      const jobs = w.jobs.map((j) => shape("job", {
        id: j.id, run_id: w.id, node_id: `J_${j.id}`, head_sha: w.headSha, name: j.name, workflow_name: w.name, head_branch: w.headBranch,
        status: j.conclusion === null ? "in_progress" : "completed", conclusion: j.conclusion, started_at: w.createdAt, completed_at: j.conclusion === null ? null : w.createdAt,
        created_at: w.createdAt, url: api(f, `/repos/${full}/actions/jobs/${j.id}`), html_url: `https://github.com/${full}/actions/runs/${w.id}/job/${j.id}`,
        run_url: api(f, `/repos/${full}/actions/runs/${w.id}`), check_run_url: api(f, `/repos/${full}/check-runs/${j.id}`), labels: [], steps: [], run_attempt: 1,
      }));
      return { status: 200, body: { total_count: jobs.length, jobs: page(jobs, q) } };
    }
    default:
      return { status: 501, body: { message: "not in the fake" } };
  }
}

function status(f: FakeGitHub, r: Repo, s: Repo["statuses"][number]) {
  return shape("status", {
    id: s.id, node_id: `S_${s.id}`, url: api(f, `/repos/${r.full}/statuses/${s.sha}`), state: s.state, context: s.context, description: s.description,
    target_url: null, avatar_url: null, created_at: s.createdAt, updated_at: s.createdAt, creator: user(f, "delivery-bot"),
  });
}

function workflowRun(f: FakeGitHub, r: Repo, w: Repo["runs"][number]) {
  const done = w.jobs.every((j) => j.conclusion !== null);
  const failed = w.jobs.some((j) => j.conclusion === "failure" || j.conclusion === "cancelled");
  return shape("workflow-run", {
    id: w.id, name: w.name, node_id: `WR_${w.id}`, head_branch: w.headBranch, head_sha: w.headSha, path: w.path, run_number: w.id, run_attempt: 1,
    event: w.event, status: done ? "completed" : "in_progress", conclusion: done ? (failed ? "failure" : "success") : null, workflow_id: 1,
    url: api(f, `/repos/${r.full}/actions/runs/${w.id}`), html_url: `https://github.com/${r.full}/actions/runs/${w.id}`, pull_requests: [],
    created_at: w.createdAt, updated_at: w.createdAt, jobs_url: api(f, `/repos/${r.full}/actions/runs/${w.id}/jobs`),
    repository: shape("minimal-repository", { id: r.id, node_id: `R_${r.id}`, name: r.name, full_name: r.full, owner: user(f, r.owner), private: false, fork: r.forkOf !== null, html_url: `https://github.com/${r.full}`, url: api(f, `/repos/${r.full}`) }),
    head_repository: shape("minimal-repository", { id: r.id, node_id: `R_${r.id}`, name: r.name, full_name: r.full, owner: user(f, r.owner), private: false, fork: r.forkOf !== null, html_url: `https://github.com/${r.full}`, url: api(f, `/repos/${r.full}`) }),
  });
}
