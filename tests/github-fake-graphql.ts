/**
 * The fake GitHub's GraphQL endpoint (`POST /graphql`, issue 31): the part of GitHub's GraphQL the delivery plugin
 * needs and nothing else — turning a draft ready (`markPullRequestReadyForReview`), turning auto-merge off
 * (`disablePullRequestAutoMerge`), and reading a pull request's `id`, `number`, `isDraft`, `headRefOid`, `state` and
 * `autoMergeRequest` back (`repository { pullRequest }`).
 *
 * Every document is parsed and validated against GitHub's published GraphQL schema (`@octokit/graphql-schema`, pinned
 * in package.json; its introspection JSON, as its SDL repeats two fields) and executed against it by graphql-js, so an
 * answer is always of the schema's types (a null where the schema says non-null is an execution error). A document the
 * schema refuses, a field the fake does not have, or an execution error is recorded in the fake's `faults`.
 */
import { buildClientSchema, execute, GraphQLError, parse, validate, type GraphQLFieldResolver, type GraphQLSchema } from "graphql";
import { schema as published } from "@octokit/graphql-schema";
import type { FakeGitHub, Item } from "./github-fake.js";
import type { Answer } from "./github-fake-routes.js";

let loaded: GraphQLSchema | null = null;
/** GitHub's schema, built once from the published introspection. */
function schema(): GraphQLSchema {
  return (loaded ??= buildClientSchema(published.json as never));
}

/** A pull request with the fake's repository name, as the resolvers pass it down. */
interface PullRef { full: string; item: Item }

/** The pull request whose node id is `id` (`PR_<id>`, as the REST answers give it), or null. */
function pullByNode(f: FakeGitHub, id: unknown): PullRef | null {
  for (const r of f.repos.values()) for (const item of r.items.values()) if (item.pull && `PR_${item.id}` === id) return { full: r.full, item };
  return null;
}

/** The value of field `field` of a pull request. @throws GraphQLError for a field the fake does not have. */
function pullField(f: FakeGitHub, p: PullRef, field: string): unknown {
  const pr = p.item.pull!;
  switch (field) {
    case "id": return `PR_${p.item.id}`;
    case "number": return p.item.number;
    case "isDraft": return pr.draft;
    case "headRefOid": return f.headSha(p.full, p.item.number);
    case "state": return pr.merged ? "MERGED" : p.item.state === "open" ? "OPEN" : "CLOSED";
    case "autoMergeRequest": return pr.autoMerge ? { __auto: pr.autoMerge, pull: p } : null;
    default: throw new GraphQLError(`PullRequest.${field} is not in the fake`);
  }
}

/**
 * Answers one GraphQL request `body` (`{ query, variables?, operationName? }`): 200 with `data` (and `errors`), as GitHub.
 * Faults (see the module comment) go to `f.faults`.
 */
export function graphqlAnswer(f: FakeGitHub, body: unknown): Answer {
  const b = body as { query?: unknown; variables?: unknown; operationName?: unknown } | undefined;
  const fail = (message: string, status = 200): Answer => {
    f.faults.push(`POST /graphql: ${message}`);
    return { status, body: { errors: [{ message }] } };
  };
  if (typeof b?.query !== "string") return fail("no query", 400);
  let document;
  try {
    document = parse(b.query);
  } catch (e) {
    return fail(`not GraphQL: ${(e as Error).message}`);
  }
  const invalid = validate(schema(), document);
  if (invalid.length > 0) return fail(`refused by GitHub's schema: ${invalid.map((e) => e.message).join("; ")}`);
  const resolver: GraphQLFieldResolver<unknown, unknown> = (source, args, _ctx, info) => {
    const at = `${info.parentType.name}.${info.fieldName}`;
    const input = (args as { input?: { pullRequestId?: unknown; clientMutationId?: string } }).input;
    switch (at) {
      case "Query.repository": {
        const a = args as { owner: string; name: string };
        return f.repos.has(`${a.owner}/${a.name}`) ? { repo: `${a.owner}/${a.name}` } : null;
      }
      case "Repository.pullRequest": {
        const full = (source as { repo: string }).repo;
        const item = f.repos.get(full)!.items.get((args as { number: number }).number);
        return item?.pull ? { full, item } : null;
      }
      case "Mutation.markPullRequestReadyForReview":
      case "Mutation.disablePullRequestAutoMerge": {
        const p = pullByNode(f, input?.pullRequestId);
        if (!p) throw new GraphQLError(`Could not resolve to a node with the global id of '${String(input?.pullRequestId)}'`);
        if (at === "Mutation.markPullRequestReadyForReview") {
          if (p.item.state !== "open") throw new GraphQLError("Pull request is closed");
          p.item.pull!.draft = false;
        } else {
          if (!p.item.pull!.autoMerge) throw new GraphQLError("Pull request is not in auto-merge state");
          p.item.pull!.autoMerge = null;
        }
        p.item.updatedAt = f.now();
        return { payload: p, clientMutationId: input?.clientMutationId ?? null };
      }
      case "MarkPullRequestReadyForReviewPayload.pullRequest":
      case "DisablePullRequestAutoMergePayload.pullRequest":
        return (source as { payload: PullRef }).payload;
      case "MarkPullRequestReadyForReviewPayload.clientMutationId":
      case "DisablePullRequestAutoMergePayload.clientMutationId":
        return (source as { clientMutationId: string | null }).clientMutationId;
      case "AutoMergeRequest.enabledAt": return (source as { __auto: { enabledAt: string } }).__auto.enabledAt;
      case "AutoMergeRequest.mergeMethod": return (source as { __auto: { method: string } }).__auto.method;
      case "AutoMergeRequest.pullRequest": return (source as { pull: PullRef }).pull;
      default:
        if (info.parentType.name === "PullRequest") return pullField(f, source as PullRef, info.fieldName);
        if (info.fieldName === "__typename") return info.parentType.name;
        throw new GraphQLError(`${at} is not in the fake`);
    }
  };
  const result = execute({ schema: schema(), document, variableValues: b.variables as Record<string, unknown> | undefined, operationName: typeof b.operationName === "string" ? b.operationName : undefined, fieldResolver: resolver }) as { data?: unknown; errors?: readonly GraphQLError[] };
  if ("then" in result) return fail("an asynchronous resolver");
  const errors = (result.errors ?? []).map((e) => ({ message: e.message, path: e.path }));
  // errors GitHub itself would give (a missing node, a state that refuses the mutation) are answers, not faults
  for (const e of errors) if (/not in the fake|Cannot return null/.test(e.message)) f.faults.push(`POST /graphql: ${e.message}`);
  return { status: 200, body: errors.length > 0 ? { data: result.data ?? null, errors } : { data: result.data } };
}
