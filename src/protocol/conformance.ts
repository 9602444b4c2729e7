/**
 * `agent-autoloop conformance <url> --config <file>` (protocol.md 一致性和复现): checks a hub over real HTTP with four
 * test keys. The hub's rules must hand `eventType` from the source to the worker with `parallel` ≥ 2, and the
 * channel must limit answerers to `answerer`. It writes events and cards, so run it only on a hub for testing; it
 * can run again and again against the same hub (every id is new, leftover work is finished first).
 */
import { randomUUID } from "node:crypto";
import { HubClient, HubError } from "./client.js";
import type { Job } from "./responses.js";
import type { Result } from "./schema.js";

export interface ConformanceConfig {
  keys: { source: string; worker: string; channel: string; owner: string };
  eventType: string;
  answerer: string;
}

export interface Check { name: string; ok: boolean; detail?: string }

class Failed extends Error {}

/** Runs every check in order, stopping at the first that fails (later ones build on it). */
export async function conformance(url: string, cfg: ConformanceConfig): Promise<Check[]> {
  const checks: Check[] = [];
  const source = new HubClient(url, cfg.keys.source);
  const worker = new HubClient(url, cfg.keys.worker);
  const channel = new HubClient(url, cfg.keys.channel);
  const owner = new HubClient(url, cfg.keys.owner);
  const tag = randomUUID().slice(0, 8);
  const check = async (name: string, f: () => Promise<string | void>) => {
    try {
      const detail = await f();
      checks.push({ name, ok: true, ...(detail ? { detail } : {}) });
    } catch (e) {
      checks.push({ name, ok: false, detail: (e as Error).message });
      throw new Failed(name);
    }
  };
  const expect = (cond: unknown, msg: string) => {
    if (!cond) throw new Error(msg);
  };
  const status = async (f: () => Promise<unknown>): Promise<number> => {
    try {
      await f();
      return 200;
    } catch (e) {
      if (e instanceof HubError) return e.status;
      throw e;
    }
  };
  let first: { event: number } = { event: 0 };
  let job: Job | null = null;
  let card: { id: number; version: number; ref: string | null } | null = null;
  const title = `conformance ${tag}: proceed?`;
  try {
    await check("owner key reads the state", async () => {
      const s = await owner.state();
      expect(typeof s.seq === "number" && Array.isArray(s.runs), "GET /v1/state lacks seq or runs");
    });
    await check("keys of the wrong kind are refused (401/403)", async () => {
      expect((await status(() => new HubClient(url, null).postEvent({ id: "x", type: cfg.eventType }))) === 401, "no key: not 401");
      expect((await status(() => worker.postEvent({ id: "x", type: cfg.eventType }))) === 403, "worker key posting an event: not 403");
      expect((await status(() => source.work({ claim: "x", wait: 0, running: [], capacity: 0 }))) === 403, "source key claiming work: not 403");
      expect((await status(() => channel.state())) === 403, "channel key reading the state: not 403");
    });
    await check("a bad event is refused with 400 and an error", async () => {
      try {
        await source.postEvent({ id: "x", type: cfg.eventType, subject: "not an identifier!" });
        throw new Error("accepted a subject with spaces");
      } catch (e) {
        expect(e instanceof HubError && e.status === 400 && typeof e.error === "string", `expected 400 {error}, got ${(e as Error).message}`);
      }
    });
    await check("leftover work of earlier checks is finished", async () => {
      let n = 0;
      for (let i = 0; i < 200; i++) {
        const w = await worker.work({ claim: `left-${tag}-${i}`, wait: 0, running: [], capacity: 1 });
        if (!w.job) break;
        await worker.result(w.job.run, w.job.token, { outcome: "nothing", summary: "conformance cleanup" });
        n++;
      }
      return `${n} runs`;
    });
    await check("an event is recorded once: the same id again is a duplicate", async () => {
      first = await source.postEvent({ id: `c-${tag}-1`, type: cfg.eventType, subject: `#c${tag}`, summary: "conformance" });
      const again = await source.postEvent({ id: `c-${tag}-1`, type: cfg.eventType, subject: `#c${tag}` });
      expect(again.duplicate === true && again.event === first.event, "the repeat was not a duplicate of the first");
    });
    await check("a claim gets the run; the same claim id gets it again with a new token, the old one stops working", async () => {
      const a = await worker.work({ claim: `claim-${tag}`, wait: 5, running: [], capacity: 1 });
      expect(a.job, "no job for the event");
      expect(a.job!.context.events.some((e) => e.id === `c-${tag}-1`), "the job's context lacks the event");
      const b = await worker.work({ claim: `claim-${tag}`, wait: 0, running: [], capacity: 1 });
      expect(b.job && b.job.run === a.job!.run && b.job.token !== a.job!.token, "the repeated claim did not return the same run with a new token");
      expect((await status(() => worker.started(a.job!.run, a.job!.token, {}))) === 403, "the old token still works");
      job = b.job;
    });
    await check("parallel lanes: another subject is claimable while the first runs", async () => {
      await source.postEvent({ id: `c-${tag}-2`, type: cfg.eventType, subject: `#d${tag}` });
      const w = await worker.work({ claim: `claim2-${tag}`, wait: 5, running: [job!.run], capacity: 1 });
      expect(w.job, "no second run in parallel (is parallel ≥ 2?)");
      await worker.result(w.job!.run, w.job!.token, { outcome: "nothing" });
    });
    await check("start, then a result with a question; a replay gives the same answer, another body 409", async () => {
      await worker.started(job!.run, job!.token, { session: `sess-${tag}` });
      const body: Result = { outcome: "done", summary: "asked", session: `sess-${tag}`, ask: [{ title, options: ["yes", "no"] }] };
      const r1 = await worker.result(job!.run, job!.token, body);
      const r2 = await worker.result(job!.run, job!.token, body);
      expect(JSON.stringify(r1) === JSON.stringify(r2), "the replay answered differently");
      expect((await status(() => worker.result(job!.run, job!.token, { ...body, summary: "changed" }))) === 409, "a different body was not 409");
    });
    await check("the channel gets the card and reports it delivered", async () => {
      for (let i = 0; i < 100 && !card; i++) {
        const next = await channel.nextCard(5);
        if (!next.card) break;
        const ref = next.card.ref ?? `conf-${tag}-${next.card.id}`;
        await channel.delivered(next.card.id, next.card.version, ref);
        if (next.card.title === title) card = { ...next.card, ref };
      }
      expect(card, "the question card did not arrive");
    });
    await check("answers: a stranger is refused; the answerer's first answer counts, a second is 409", async () => {
      expect((await status(() => channel.answer(card!.id, { choice: 1, by: `stranger-${tag}`, ref: card!.ref! }))) === 403, "a stranger's answer was not 403");
      await channel.answer(card!.id, { choice: 1, by: cfg.answerer, ref: card!.ref! });
      expect((await status(() => owner.answer(card!.id, { choice: 0 }))) === 409, "a second answer was not 409");
    });
    await check("the answer starts the next run on the asking run's session, with the answer in its context", async () => {
      const w = await worker.work({ claim: `claim3-${tag}`, wait: 5, running: [], capacity: 1 });
      expect(w.job, "no run after the answer");
      const answer = w.job!.context.answers.find((a) => a.card === card!.id);
      expect(answer && answer.choice === 1 && answer.by === cfg.answerer, "the job lacks the answer");
      expect(w.job!.session === `sess-${tag}`, `the job's session is ${w.job!.session}, not the asking run's`);
      await worker.result(w.job!.run, w.job!.token, { outcome: "done", summary: "continued" });
      const s = await owner.state();
      const run = s.runs.find((r) => r.id === w.job!.run);
      expect(run?.state === "done", "the state does not show the run done");
    });
  } catch (e) {
    if (!(e instanceof Failed)) checks.push({ name: "unexpected error", ok: false, detail: (e as Error).message });
  }
  return checks;
}
