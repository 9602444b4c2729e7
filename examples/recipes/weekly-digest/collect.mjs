#!/usr/bin/env node
// The collect step of recipe weekly-digest (issue 29): a `command` agent in the recipe's work folder. It reads the
// week's reports from the API in digest.json COMPLETELY (every page, `GET <api>?week=<YYYY-Www>[&page=<next>]` with
// `Authorization: Bearer $<tokenVariable>`), answering { members: [{ name, visible, submitted, summary? }], next }), and
// only then writes a private snapshot (snapshots/<week>-<sha>.json, mode 0600), marks it latest, and emits
// digest.snapshot naming it. A page that fails writes nothing: "Not run", and the hub retries the whole read.
// `visible: false` is a member whose report the token's owner may not see: kept apart, never counted as not submitted.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";

const config = readFileSync("digest.json", "utf8");
const { api, tokenVariable = "DIGEST_API_TOKEN" } = JSON.parse(config);
const token = process.env[tokenVariable] ?? "";
const pagesMax = 100;

/** ISO 8601 week of `d` (UTC), as 2026-W49. */
function isoWeek(d) {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const day = t.getUTCDay() || 7;
  t.setUTCDate(t.getUTCDate() + 4 - day);
  const first = new Date(Date.UTC(t.getUTCFullYear(), 0, 1));
  return `${t.getUTCFullYear()}-W${String(Math.ceil(((t - first) / 86400000 + 1) / 7)).padStart(2, "0")}`;
}

const week = isoWeek(new Date());
const members = [];
let next = null;
for (let page = 0; ; page++) {
  if (page === pagesMax) {
    process.stdout.write(`Not run: more than ${pagesMax} pages of reports; nothing written\n`);
    process.exit(0);
  }
  const url = `${api}?week=${week}${next ? `&page=${encodeURIComponent(next)}` : ""}`;
  let body;
  try {
    const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(30_000) });
    if (!res.ok) throw new Error(`answered ${res.status}`);
    body = await res.json();
  } catch (e) {
    process.stdout.write(`Not run: page ${page + 1} of the reports could not be read (${e.message}); nothing written\n`);
    process.exit(0);
  }
  members.push(...body.members.map((m) => ({ name: String(m.name), visible: m.visible !== false, submitted: m.visible !== false && m.submitted === true, summary: m.visible !== false && m.summary ? String(m.summary) : null })));
  next = body.next ?? null;
  if (!next) break;
}
const text = JSON.stringify({ week, members }, null, 1);
const id = `${week}-${createHash("sha256").update(text).digest("hex").slice(0, 12)}`;
mkdirSync("snapshots", { recursive: true, mode: 0o700 });
writeFileSync(`snapshots/${id}.json`, text, { mode: 0o600 });
writeFileSync("snapshots/latest.json", JSON.stringify({ id }), { mode: 0o600 });
process.stdout.write(`Collected ${members.length} members' reports for ${week}: snapshot ${id}\n\`\`\`agent-autoloop\n${JSON.stringify({
  events: [{ id: `snapshot:${id}`, type: "digest.snapshot", subject: week, summary: `snapshot ${id}` }],
})}\n\`\`\`\n`);
