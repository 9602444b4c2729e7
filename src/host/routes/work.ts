/**
 * Work and runs (protocol.md Agent：领活、干活、交回执): a worker claims with `GET /v1/work` (a long poll that is also
 * its heartbeat), then the run's own token reports `POST /v1/runs/<id>/started` and `POST /v1/runs/<id>/result`.
 */
import { Hono } from "hono";
import type { Hub } from "../hub.js";
import { hashText } from "../../kernel/credentials.js";
import { answer, decide, held, queryNumber, refuse, reply, route } from "./endpoint.js";
import { artifactFileRe } from "./read.js";
import { t, refusal, said } from "../../i18n/messages.js";
import { runEndStates, runHeldStates, stateIn } from "../../kernel/states.js";
import { canonicalJson } from "./read.js";
import { declaredFor, intentTable } from "../../declarative/index.js";

/** The routes of work and runs. */
export function workRoutes(hub: Hub): Hono {
  const app = new Hono();

  route(app, hub, "work", async (c, req) => {
    const q = req.query;
    const running = (q.running ?? "").split(",").filter((p) => p !== "").map(Number);
    const d = await held(c, hub, { kind: "work", keyHash: req.keyHash, claim: q.claim, running, capacity: queryNumber(q.capacity, 1) }, queryNumber(q.wait, 0), q.seq === undefined ? undefined : Number(q.seq));
    if (d instanceof Response || d.status !== 200) return d instanceof Response ? d : answer(c, hub, "work", d);
    // A job whose rule names declarative assets gets their content as registered now (issue 18: Job.declared).
    const job = d.body.job;
    const declared = job ? declaredFor(hub.declarative, job.rule) : undefined;
    return reply(c, hub, "work", job && declared !== undefined ? { ...d.body, job: { ...job, declared } } : d.body);
  });

  // The middleware found the run of the path and checked its token (the kernel checks again when it decides).
  route(app, hub, "started", (c, req) =>
    decide(c, hub, "started", { kind: "started", run: req.run, token: req.token, session: req.body.session ?? null, link: req.body.link ?? null }));

  // A replay is recognised by the body's canonical JSON: the same body again gets the same answer.
  route(app, hub, "result", (c, req) =>
    decide(c, hub, "result", { kind: "result", run: req.run, token: req.token, result: req.body, hash: hashText(canonicalJson(req.body)), intents: intentTable(hub.declarative) }));

  // A workflow's file (issue 18): its name as the artifact step's own rule has it (no folder, no `..`, not hidden).
  route(app, hub, "artifactPut", (c, req) => {
    const file = c.req.param("file") ?? "";
    if (!artifactFileRe.test(file)) return refuse(c, 400, refusal(hub.env.lang, "artifact.file"));
    return decide(c, hub, "artifactPut", { kind: "artifact", run: req.run, token: req.token, file, text: req.body.text });
  });

  // A run's transcript (issue 30): kept in the home, outside the fact log, while the run's token is its current one.
  // Not once the run has ended (issue 26 round 8: entries were still appended to a finished run's record).
  // Only while a worker holds it, and only entries of its current attempt (round 9: the token of a failed attempt,
  // the run waiting for its retry, posted an entry of attempt 9 and a `cut` that silenced the next attempt).
  route(app, hub, "transcriptPost", (c, req) => {
    const row = hub.store.view.get("runs", req.run);
    const lang = hub.env.lang;
    if (row && stateIn(runEndStates, row.state)) return refuse(c, 409, refusal(lang, "transcript.runEnded", { run: req.run }));
    if (row && !stateIn(runHeldStates, row.state)) return refuse(c, 409, refusal(lang, "transcript.runNotHeld", { run: req.run, state: row.state }));
    for (const [index, e] of req.body.entries.entries()) {
      const why = e.kind === "cut" ? said("transcript.entry.cut")
        : row && e.attempt !== row.attempt ? said("transcript.entry.attempt", { got: e.attempt, run: req.run, attempt: row.attempt }) : null;
      if (why) return refuse(c, 400, refusal(lang, "transcript.entry", { index, why }));
    }
    return reply(c, hub, "transcriptPost", { run: req.run, ...hub.transcripts.append(req.run, req.body.entries) });
  });
  return app;
}
