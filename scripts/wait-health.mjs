#!/usr/bin/env node
// `node scripts/wait-health.mjs [URL] [--timeout-s N]`: waits until the hub at URL (default http://127.0.0.1:8787, a
// fresh home's `listen`) answers `GET /v1/health` with {"ok":true,…}, polling every half second, and prints that
// answer. Exit 0 when it did; 1 when it did not within N seconds (default 60), with the last thing seen. No
// dependencies, so it runs right after an install on any OS (the install smoke test of .github/workflows/ci.yml).
import { parseArgs } from "node:util";

const pollIntervalMs = 500;
const requestTimeoutMs = 5_000;

const { values, positionals } = parseArgs({ allowPositionals: true, options: { "timeout-s": { type: "string", default: "60" } } });
const url = `${(positionals[0] ?? "http://127.0.0.1:8787").replace(/\/+$/, "")}/v1/health`;
const timeoutS = Number(values["timeout-s"]);
if (!(timeoutS > 0)) {
  console.error(`wait-health: --timeout-s: not a positive number of seconds: ${JSON.stringify(values["timeout-s"])}`);
  process.exit(1);
}

const deadline = Date.now() + timeoutS * 1000;
let last = "no answer yet";
for (;;) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(requestTimeoutMs) });
    const text = await res.text();
    let body = null;
    try { body = JSON.parse(text); } catch { /* not JSON: said below */ }
    if (res.status === 200 && body?.ok === true) {
      console.log(text);
      process.exit(0);
    }
    last = `HTTP ${res.status}: ${text.slice(0, 200)}`;
  } catch (e) {
    last = e.cause?.code ?? e.message;
  }
  if (Date.now() >= deadline) break;
  await new Promise((r) => setTimeout(r, pollIntervalMs));
}
console.error(`wait-health: ${url} did not answer {"ok":true} within ${timeoutS} s (last: ${last})`);
process.exit(1);
