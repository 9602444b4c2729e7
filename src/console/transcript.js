// @ts-check
/**
 * A run's transcript on its page (issue 30): what the agent did, from `GET /v1/runs/<id>/transcript`, read a page at a
 * time from where the last look ended, and followed while the run goes on. Its steps are grouped by attempt, each with
 * its time and how long it took (until the next step; a tool call until its result), the tools each attempt called
 * listed above its steps; a transcript cut at the hub's limit says so where it stops, one removed after its retention
 * says so in its place.
 */
import { api, seg } from "./api.js";
import { fill, h, said } from "./dom.js";
import { num, t, when } from "./i18n.js";

/** How often a live run's transcript is asked for what is new, in ms. */
const followMs = 1000;

/**
 * A duration in words: milliseconds under a second, seconds (one decimal) under a minute, then minutes and seconds.
 * @param {number} ms
 */
export function duration(ms) {
  if (ms < 1000) return t("console.transcript.ms", { n: num(Math.max(0, Math.round(ms))) });
  if (ms < 60_000) return t("console.transcript.seconds", { n: num(Math.round(ms / 100) / 10) });
  return t("console.transcript.minutes", { m: num(Math.floor(ms / 60_000)), s: num(Math.round((ms % 60_000) / 1000)) });
}

/** @typedef {{ at: number, attempt: number, launch?: number, kind: string, text?: string, tool?: string, id?: string, input?: string, error?: boolean }} Entry */

/**
 * What one step says, as its elements.
 * @param {Entry} e
 */
function stepBody(e) {
  switch (e.kind) {
    // A try starts its agent once; a later start in the same try (a receipt rewritten) is counted.
    case "start": return [h("span", { class: "step-kind" }, (e.launch ?? 1) > 1 ? t("console.transcript.launch", { n: e.launch ?? 1 }) : t("console.transcript.started"))];
    case "tool": return [
      h("span", { class: "step-kind" }, t("console.transcript.tool")), " ", said(e.tool ?? "", "code", { class: "tool-name" }),
      e.input ? said(e.input, "pre", { class: "tool-input" }) : null,
    ];
    case "toolResult": return [h("span", { class: "step-kind" }, t(e.error ? "console.transcript.toolFailed" : "console.transcript.toolResult")), said(e.text ?? "", "pre")];
    case "final": return [h("span", { class: "step-kind" }, t(e.error ? "console.transcript.finalError" : "console.transcript.final")), said(e.text ?? "", "pre")];
    case "cut": return [h("span", { class: "step-kind" }, t("console.transcript.cut"))];
    default: return [h("span", { class: "step-kind" }, t(`console.transcript.${e.kind === "thinking" ? "thinking" : e.kind === "stdout" ? "stdout" : e.kind === "stderr" ? "stderr" : "message"}`)), said(e.text ?? "", "pre")];
  }
}

/**
 * The steps of one attempt, with durations.
 * @param {number} attempt @param {Entry[]} entries
 */
function attemptSection(attempt, entries) {
  /** @type {Map<string, number>} when each tool call's result came */
  const results = new Map();
  for (const e of entries) if (e.kind === "toolResult" && e.id && !results.has(e.id)) results.set(e.id, e.at);
  const tools = [...new Set(entries.filter((e) => e.kind === "tool").map((e) => e.tool ?? ""))];
  const items = entries.map((e, i) => {
    const end = e.kind === "tool" && e.id && results.has(e.id) ? results.get(e.id) : entries[i + 1]?.at;
    return h("li", { class: `step step-${e.kind}${e.error ? " step-error" : ""}`, "data-kind": e.kind },
      h("div", { class: "step-head" },
        h("time", { datetime: new Date(e.at).toISOString() }, when(e.at)),
        end !== undefined && e.kind !== "cut" ? h("span", { class: "meta step-took" }, t("console.transcript.took", { d: duration(end - e.at) })) : null),
      ...stepBody(e));
  });
  return h("section", { class: "attempt", "data-attempt": attempt },
    h("h3", {}, t("console.transcript.attempt", { n: attempt })),
    tools.length ? h("p", { class: "meta tools-called" }, t("console.transcript.tools", { tools: tools.join(", ") })) : null,
    h("ol", { class: "transcript-steps" }, ...items));
}

/** The newest steps a run's page shows at most; earlier ones are counted, not shown (GET …/transcript has them all). */
const shownMax = 2000;

/**
 * The transcript part of run `id`'s page: `el` to place, `update(live)` on every state change (`live`: whether the
 * run is in progress), `stop()` when the page goes.
 * @param {number} id
 */
export function transcriptPart(id) {
  const body = h("div", { class: "transcript", id: "transcript", "aria-live": "polite" });
  const el = h("section", { class: "transcript-part" }, h("h2", {}, t("console.transcript.title")), body);
  /** @type {Entry[]} */
  let entries = [];
  let next = 0;
  let removed = false;
  let busy = false;
  let live = true;
  /** @type {ReturnType<typeof setTimeout> | null} */
  let timer = null;
  let stopped = false;

  /** Steps read but not shown: the page keeps the newest `shownMax` (issue 26 round 8: 60k steps took 18 s to show). */
  let hidden = 0;

  const render = () => {
    if (removed) return fill(body, h("p", { class: "empty", id: "transcript-removed" }, t("console.transcript.removed")));
    if (entries.length === 0) return fill(body, h("p", { class: "empty" }, t(live ? "console.transcript.empty" : "console.transcript.none")));
    /** @type {Map<number, Entry[]>} */
    const byAttempt = new Map();
    for (const e of entries) {
      const list = byAttempt.get(e.attempt);
      if (list) list.push(e);
      else byAttempt.set(e.attempt, [e]);
    }
    fill(body, hidden > 0 ? h("p", { class: "meta", id: "transcript-hidden" }, t("console.transcript.hidden", { n: hidden })) : null,
      ...[...byAttempt.entries()].sort((a, b) => a[0] - b[0]).map(([n, es]) => attemptSection(n, es)));
  };

  /** Reads what is new (page after page), then looks again in a second while the run is live. */
  const look = async () => {
    if (busy || stopped) return;
    busy = true;
    try {
      for (let i = 0; i < 50; i++) {
        const page = await api("GET", `/v1/runs/${seg(id)}/transcript?after=${seg(next)}`);
        for (const e of page.entries) entries.push(e);
        if (entries.length > shownMax) {
          hidden += entries.length - shownMax;
          entries = entries.slice(-shownMax);
        }
        next = page.next;
        removed = page.removed;
        live = !page.ended;
        if (!page.more) break;
      }
      render();
    } catch (e) {
      fill(body, h("p", { class: "message error" }, /** @type {Error} */ (e).message));
    } finally {
      busy = false;
    }
    if (timer) clearTimeout(timer);
    timer = live && !stopped ? setTimeout(() => void look(), followMs) : null;
  };
  void look();
  return {
    el,
    /** @param {boolean} running */
    update(running) {
      // A run that starts again (an answer, a retry) is followed again.
      if (running && !timer && !busy) void look();
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
