/**
 * The console's fixture generator (issue 30): fills a fresh hub home as its owner would see it after six days, for
 * `npm run console:screenshots` and the console's figures of `npm run benchmark` (scripts/console-benchmark.ts).
 *
 * What it makes, all through the hub's real HTTP API (`/v1`), the way its clients make it: sources post events (shop
 * alerts, CRM tickets, deploys; one that no rule takes, some while a rule is paused and so skipped); a worker claims,
 * starts and ends runs with the worker protocol (`GET /v1/work`, `POST /v1/runs/<id>/started`, `…/transcript`,
 * `…/tools/calls`, `…/result`), as the built-in worker does for a `command` agent; runs end done, nothing, failed and
 * then done on their retry, wait for a retry, run, queue behind a running run, or are stopped by the owner; cards
 * ask questions (answered and open, with URLs in their text), notices, FYI cards of a source; a tool call refused by
 * the tool host is audited; the cron rule `nightly` is paused; plugins: the example declarative plugin with a secret
 * setting, and one refused with its errors; a channel with links (`links: true`) gives a card link page.
 *
 * Six days: the hub runs in this process on a clock that starts six days back and is moved on between the steps
 * (`ServeOptions.clock`), so a retry's 5-minute wait, the cron times and the days of the Spending view really pass;
 * when the fill ends the clock has caught up with the real time, and the home can be served by any hub after it.
 *
 * Sizes: `small` (the default: about 20 runs, 8 cards), or `large` — 1,000 open question cards and 10,000 runs (the
 * figure of issue 30's "first load at size"). The large set goes through HTTP too: 10,000 events, claims and receipts,
 * 16 requests at a time over kept-alive connections, which took 16 minutes on this project's 2-core machine shared with
 * other engineers' tests (load average about 10);
 * writing facts beside the hub's own path would have been faster but would test a history no hub could have made.
 */
import { join } from "node:path";
import { copyExample, writeFiles } from "../tests/declarative-helpers.js";
import { makeHome, serveFixture, checkAnswer, type Fixture } from "../tests/helpers.js";
import { ruleStartsPerMinuteFieldMax } from "../src/kernel/limits.js";
import { call } from "./measure.js";

/** The two sets: the default small one, and the one of the console's figure. */
export const fixtureSizes = {
  small: { cards: 0, runs: 0 },
  large: { cards: 1000, runs: 10_000 },
} as const;
export type FixtureSize = keyof typeof fixtureSizes;

/** The rules of the filled hub: two sources' rules (one with a budget), a bulk rule, two cron rules, a channel with links. */
export const fixtureRules = {
  timezone: "UTC",
  sources: { shop: { name: "Shop" }, crm: { name: "CRM" } },
  agents: { bot: { worker: "w1", use: "command", command: ["echo", "hi"] } },
  channels: { ch1: { name: "Team chat", links: true, answerers: ["ou_alice"] } },
  rules: [
    { name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "bot", cwd: "/tmp", prompt: "Fix what the alert points at.", parallel: 3, budget: { cost: 20, per: "day" } },
    { name: "tickets", when: { source: "crm", types: ["ticket.*"] }, to: "bot", cwd: "/tmp", prompt: "Answer the ticket." },
    // The large set's 10,000 runs, as fast as the hub takes them: its own start limit (issue 26's default would pause it).
    { name: "deploys", when: { source: "shop", types: ["deploy.*"] }, to: "bot", cwd: "/tmp", prompt: "Deploy it.", parallel: 100_000, startsPerMinute: ruleStartsPerMinuteFieldMax },
    { name: "nightly", when: { cron: "0 3 * * *" }, to: "bot", cwd: "/tmp", prompt: "Tidy up." },
    { name: "month-end", when: { cron: "0 17 * * FRI#L" }, to: "bot", cwd: "/tmp", prompt: "Write the month's report." },
  ],
};

/** What the screenshots and the benchmark look at in the filled hub. */
export interface FilledHub {
  f: Fixture;
  /** A done run with a transcript; the running run; a run that failed then was done on its retry. */
  runs: { transcript: number; running: number; retried: number };
  /** The card link page of an open question (`links: true` channel). */
  cardLink: string;
}

const hour = 3_600_000;
const minute = 60_000;

/**
 * Fills a fresh home and leaves its hub running (in this process). Close with `f.close()` (removes the home) or
 * `f.running.close()` (keeps it, for another hub to serve).
 * @param size the set: `small`, or `large` (1,000 open cards, 10,000 runs).
 * @throws Error when the hub refuses a step (the message names it).
 */
export async function fillConsoleHub(size: FixtureSize = "small", say: (line: string) => void = () => {}): Promise<FilledHub> {
  let behind = 6 * 24 * hour;
  const made = makeHome(fixtureRules);
  // The bulk set skips the check of every answer (10,000 of them): the small set keeps it, as every test hub does.
  const f = await serveFixture(made, { clock: () => Date.now() - behind, checkAnswer: size === "small" ? checkAnswer : undefined });
  /** Moves the hub's clock on (never past the real time) and lets its timer see what came due. */
  const later = (ms: number) => {
    behind = Math.max(0, behind - ms);
    f.running.hub.arm();
  };
  const ok = async (what: string, method: string, path: string, key: string, body?: unknown) => {
    const r = await f.call(method, path, key, body);
    if (r.status !== 200) throw new Error(`${what}: ${method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const event = (id: string, type: string, subject: string, summary: string, key = f.keys.source) =>
    ok(`event ${id}`, "POST", "/v1/events", key, { id, type, subject, summary });
  /** Claims work until the run of event `id` comes (runs of cron times before it end with nothing), and starts it. */
  const claim = async (id: string): Promise<{ run: number; token: string; attempt: number }> => {
    for (let i = 0; i < 40; i++) {
      // No long poll: a retry comes due on the hub's timer just after the clock moved, so ask again a moment later.
      const job = (await ok(`claim ${id}`, "GET", `/v1/work?claim=${id}-${i}&wait=0`, f.keys.worker)).job;
      if (!job) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      if (job.context.events.some((e: { id: string }) => e.id === id)) {
        await ok(`start ${id}`, "POST", `/v1/runs/${job.run}/started`, job.token, { session: `sess-${id}` });
        return { run: job.run, token: job.token, attempt: job.attempt ?? 1 };
      }
      await ok(`end ${job.run}`, "POST", `/v1/runs/${job.run}/started`, job.token, {});
      // A cron time's run, or the run an answer continues.
      // (an answer's run has it in its context's answers, the card's event beside)
      const answered = job.context.answers.length > 0 || job.context.events.some((e: { type: string }) => e.type === "card.answer");
      const summary = answered ? "Did as answered." : "Tidied the build caches (2.1 GB freed).";
      await ok(`end ${job.run}`, "POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", summary, usage: { input: 30_000, output: 900, cost: 0.08 } });
    }
    throw new Error(`no job for ${id}`);
  };
  /** What a `command` agent's run sends of its output, then what Claude-like agents send: words, a tool call, its result. */
  const transcript = (job: { run: number; token: string }, attempt: number, steps: [string, string][]) => {
    let at = Date.now() - behind;
    const entries = [{ at, attempt, launch: 1, kind: "start" }, ...steps.map(([kind, text], i) => {
      at += 4_000 + 7_000 * i;
      if (kind === "tool") return { at, attempt, launch: 1, kind, tool: "Bash", id: `call-${i}`, input: JSON.stringify({ command: text }) };
      if (kind === "toolResult") return { at, attempt, launch: 1, kind, id: `call-${i - 1}`, text };
      return { at, attempt, launch: 1, kind, text };
    })];
    return ok(`transcript ${job.run}`, "POST", `/v1/runs/${job.run}/transcript`, job.token, { entries });
  };
  const result = (job: { run: number; token: string }, body: Record<string, unknown>) => ok(`result ${job.run}`, "POST", `/v1/runs/${job.run}/result`, job.token, body);

  // Day 1: a Sentry alert fixed with a PR; a CRM ticket answered; an event no rule takes.
  say("day 1");
  await event("sentry-4120", "alert.error", "SHOP-4120", "TypeError in checkout: cannot read 'total' of null");
  const fixed = await claim("sentry-4120");
  await transcript(fixed, 1, [
    ["message", "I'll look at the checkout handler where the stack trace points."],
    ["tool", "rg -n \"order.total\" src/checkout"],
    ["toolResult", "src/checkout/handler.ts:88:  const total = order.total.amount;"],
    ["tool", "npm test -- checkout"],
    ["toolResult", "Tests: 42 passed, 42 total"],
    ["final", "Fixed the null check in the checkout handler; PR #481 opened: https://github.com/acme/shop/pull/481"],
  ]);
  await result(fixed, { outcome: "done", summary: "Fixed the null check in the checkout handler; PR #481 opened.", usage: { input: 182_000, output: 9_400, cost: 1.42 } });
  later(3 * hour);
  await event("ticket-883", "ticket.new", "TICKET-883", "Customer asks why invoice #2291 was charged twice", f.keys.source2);
  const ticket = await claim("ticket-883");
  await result(ticket, { outcome: "done", summary: "Refund of the duplicate charge drafted; replied to the customer.", usage: { input: 22_000, output: 1_300, cost: 0.21 } });
  await event("note-12", "note.weekly", "weekly-report", "The weekly report is ready");
  later(20 * hour);

  // Day 2: a flaky alert fails, waits its 5 minutes, and is done on the retry; a tool call the tool host refused.
  say("day 2");
  await event("sentry-4121", "alert.error", "SHOP-4121", "Timeout calling the payment provider");
  const flaky = await claim("sentry-4121");
  await transcript(flaky, 1, [["tool", "npm test"], ["toolResult", "3 failing (checkout.spec.ts)"], ["stderr", "Error: connect ETIMEDOUT 10.0.4.12:443"]]);
  await ok("tool call", "POST", `/v1/runs/${flaky.run}/tools/calls`, flaky.token, { tool: "deploy.rollback", argsDigest: `sha256:${"0".repeat(64)}`, preview: "{\"release\":\"v2.2.9\"}", refused: { code: "tools.unknown_plugin", reason: "no such tool plugin: deploy" } });
  await result(flaky, { outcome: "failed", error: "npm test: 3 failing (checkout.spec.ts)" });
  later(6 * minute);
  const retry = await claim("sentry-4121");
  await transcript(retry, 2, [["tool", "npm test"], ["toolResult", "Tests: 45 passed, 45 total"], ["final", "The provider's sandbox was down; passes now, nothing to change."]]);
  await result(retry, { outcome: "done", summary: "Passed on retry: the payment sandbox was down for 4 minutes.", usage: { input: 40_000, output: 1_200, cost: 0.3 } });
  later(22 * hour);

  // Day 3: the tickets rule is paused for a migration (a ticket is skipped meanwhile), then resumed; the bulk set.
  say("day 3");
  await ok("pause tickets", "POST", "/v1/rules/tickets/pause", f.keys.owner, { reason: "CRM migration" });
  await event("ticket-884", "ticket.new", "TICKET-884", "Password reset mail never arrives", f.keys.source2);
  later(2 * hour);
  await ok("resume tickets", "POST", "/v1/rules/tickets/resume", f.keys.owner);
  const bulk = fixtureSizes[size];
  if (bulk.runs > 0) await bulkRuns(f, bulk.runs, bulk.cards, say);
  later(20 * hour);

  // Day 4: questions, one answered; a notice; an FYI card of a source.
  say("day 4");
  const ask = async (id: string, subject: string, q: Record<string, unknown>) => {
    await event(id, "alert.deploy", subject, `deploy ${subject}`);
    const job = await claim(id);
    await result(job, { outcome: "done", summary: `Asked about ${subject}.`, usage: { input: 1200, output: 300, cost: 0.0123 }, ask: [q] });
  };
  await ask("issue-311", "#311", { title: "Close issue #311 as a duplicate of #288?", text: "Both report the same crash: https://github.com/acme/shop/issues/288", options: ["Close it", "Keep it open"] });
  const answered = (await f.state()).cards.at(-1)!.id;
  await ok("answer", "POST", `/v1/cards/${answered}/answer`, f.keys.owner, { choice: 0 });
  later(3 * hour);
  await event("disk-2", "alert.disk", "build-2", "Disk on build-2 above 90 %");
  const disk = await claim("disk-2");
  await result(disk, { outcome: "done", summary: "Checked the build machines.", notice: [{ title: "Disk on build-2 is 91 % full", text: "Old artifacts in /var/cache/ci can go; see https://ci.example.com/machines/build-2 for the graph." }] });
  await ok("tell", "POST", "/v1/tell", f.keys.source, { key: "release-notes", title: "Release notes for v2.3.0 were drafted", text: "docs/releases/2.3.0.md" });
  later(20 * hour);

  // Day 5: a run stopped by the owner; the nightly cron rule paused.
  say("day 5");
  await event("ci-9001", "alert.ci", "CI-9001", "main is red: lint step");
  const stopped = await claim("ci-9001");
  await transcript(stopped, 1, [["message", "Running the linter across the monorepo."]]);
  await ok("cancel", "POST", `/v1/runs/${stopped.run}/cancel`, f.keys.owner);
  await ok("stopped", "POST", `/v1/runs/${stopped.run}/result`, stopped.token, { outcome: "cancelled" }).catch(() => null);
  later(2 * hour);
  await ok("pause nightly", "POST", "/v1/rules/nightly/pause", f.keys.owner, { reason: "holiday freeze", until: "2099-01-02T09:00:00Z" });
  later(20 * hour);

  // Day 6 (today): an open question with a long URL, a run running with a second alert of its subject queued behind
  // it, a failure waiting for its retry, and the worker's slots.
  say("day 6");
  await ask("deploy-7", "v2.3.0", {
    title: "Deploy v2.3.0 to production?",
    text: "The canary has been green for 2 hours (error rate 0.02 %, p95 210 ms).\nThe migration adds one nullable column: https://github.com/acme/shop/pull/483/files#diff-7c1e0a6b5d2f4e9a8b3c1d0e7f6a5b4c3d2e1f0a",
    options: ["Deploy now", "Wait until Monday", "Cancel the release"], recommend: 0,
  });
  behind = 0;
  await event("sentry-4122", "alert.error", "SHOP-4122", "Cart total off by one cent with 3+ coupons");
  const running = await claim("sentry-4122");
  await transcript(running, 1, [["message", "Reproducing with three coupons in a unit test."], ["tool", "npm test -- cart.coupons"]]);
  // A failure waiting for its retry (5 minutes from now: nothing claims it before then).
  await event("sentry-4125", "alert.error", "SHOP-4125", "Search returns 500 for queries with emoji");
  const waiting = await claim("sentry-4125");
  await result(waiting, { outcome: "failed", error: "Could not reproduce: the staging search index is rebuilding" });
  await event("sentry-4122-again", "alert.error", "SHOP-4122", "Cart total off by one cent (again)");
  await ok("slots", "GET", `/v1/work?claim=slots&capacity=1&running=${running.run}`, f.keys.worker);
  // The channel takes the newest open question, which gives its link page.
  let cardLink = "";
  for (let i = 0; i < 2000 && !cardLink; i++) {
    const next = (await ok("channel", "GET", "/v1/cards/next", f.keys.channel)).card;
    if (!next) break;
    if (next.link && next.title.startsWith("Deploy v2.3.0")) cardLink = next.link;
    else await ok("delivered", "POST", `/v1/cards/${next.id}/delivered`, f.keys.channel, { version: next.version, ref: `m${next.id}` });
  }
  // Plugins: the example declarative plugin with its secret setting, and one refused with its errors.
  copyExample(f.home.plugins);
  writeFiles(join(f.home.plugins, "weather"), {
    "plugin.json": { id: "weather", name: "Weather", version: "0.2.0", apiVersion: "1.0", provides: { panels: ["today"] } },
    "panels/today.json": { id: "today", title: "Today", body: [{ type: "gauge", value: 3 }, { type: "list", items: [], extra: 1 }] },
  });
  await ok("reload", "POST", "/v1/plugins/reload", f.keys.owner);
  await ok("setting", "POST", "/v1/plugins/example/settings/token", f.keys.owner, { value: "ghp_screenshot_secret" });
  return { f, runs: { transcript: fixed.run, running: running.run, retried: retry.run }, cardLink };
}

/**
 * `runs` runs of rule `deploys`, 16 at a time over kept-alive connections: an event each, claimed and ended by the
 * worker with a summary and usage; the receipts of the first `cards` ask the owner a question (an open card each).
 */
async function bulkRuns(f: Fixture, runs: number, cards: number, say: (line: string) => void): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < runs) {
      const i = next++;
      if (i % 1000 === 0) say(`bulk run ${i}`);
      await call(f.url, f.keys.source, "POST", "/v1/events", { id: `d${i}`, type: "deploy.build", subject: `build-${i}`, summary: `deploy build ${i}` });
      const { job } = await call(f.url, f.keys.worker, "GET", `/v1/work?claim=d${i}&wait=0`);
      if (!job) continue;
      const ask = i < cards ? { ask: [{ title: `Question ${i}: deploy build ${i}?`, text: "The canary is green.", options: ["Deploy", "Wait", "Cancel"], recommend: 0 }] } : {};
      await call(f.url, job.token, "POST", `/v1/runs/${job.run}/result`, { outcome: "done", summary: `build ${i} deployed`, usage: { input: 1000, output: 200, cost: 0.01 }, ...ask });
    }
  }));
}

// `npx tsx scripts/console-fixture.ts [small|large]`: fills a home, stops its hub and prints the home's folder and
// the owner key (`AGENT_AUTOLOOP_HOME=<folder> agent-autoloop serve` serves it).
if (import.meta.url === `file://${process.argv[1]}`) {
  const size = (process.argv[2] ?? "small") as FixtureSize;
  if (!(size in fixtureSizes)) throw new Error(`size: small or large, not ${size}`);
  const { f } = await fillConsoleHub(size, (line) => process.stderr.write(`${line}\n`));
  await f.running.close();
  process.stdout.write(`${JSON.stringify({ home: f.home.dir, keys: f.keys })}\n`);
}
