#!/usr/bin/env node
// The browser handoff of recipe browser-handoff (issue 29; protocol.md 回执, plugins.md 浏览器接入): a `command` agent in
// the recipe's work folder. browser.json there (trusted: the owner wrote it) names the installed browser entry
// (`entry`, a fixed command), the `target` and the `steps` (the only operations it may ask for). The entry is called
// once per step as `<entry…> --target <url> --operation <step> [--session <id>]` and prints one JSON line:
// { "session": "<id>", "status": "ok" } or { "session": "<id>", "status": "blocked", "reason": "<login, captcha…>" }.
// progress.json keeps the entry's session and the steps done, so a run continues where the last one stopped.
//   a step blocked        → "Needs you" + one ask (about: the steps left), the run ends done (never "failed": a retry
//                           cannot log in)
//   the block's card open → the first line says so, no second ask, no timer
//   the owner answered    → the same session, only the steps left
// It never makes HTTP requests itself: a web step is done by the browser entry or not at all.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";

const config = JSON.parse(readFileSync("browser.json", "utf8"));
const context = JSON.parse(readFileSync(process.env.AGENT_AUTOLOOP_CONTEXT, "utf8"));
const steps = config.steps.map(String);
const progress = existsSync("progress.json") ? JSON.parse(readFileSync("progress.json", "utf8")) : { session: null, done: [] };
const title = `Browser step blocked: ${config.target}`.slice(0, 200);

/** Prints the last message: a first line and, when there is something for the hub to do, the receipt block. */
function finish(line, receipt) {
  const block = receipt ? `\n\`\`\`agent-autoloop\n${JSON.stringify(receipt)}\n\`\`\`` : "";
  process.stdout.write(`${line}${block}\n`);
  process.exit(0);
}

const open = context.open.find((c) => c.title === title);
const answer = [...context.answers].reverse().find((a) => a.title === title);
if (answer && answer.choice === 1) {
  rmSync("progress.json", { force: true });
  finish("Nothing to do: the owner chose to skip the remaining steps this time");
}
if (open && !answer) finish(`Still waiting on card ${open.card}: ${config.target} needs you before the steps left (${steps.filter((s) => !progress.done.includes(s)).join(", ")})`);

for (const step of steps) {
  if (progress.done.includes(step)) continue;
  const args = [...config.entry.slice(1), "--target", config.target, "--operation", step, ...(progress.session ? ["--session", progress.session] : [])];
  let out;
  try {
    out = JSON.parse(execFileSync(config.entry[0], args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 10 * 60_000 }).trim().split("\n").pop());
  } catch (e) {
    // The entry itself failed (not a block): a temporary failure, worth the hub's retry.
    finish(`Not run: the browser entry failed at ${step} (${String(e.stderr ?? e.message).trim().split("\n")[0]})`);
  }
  progress.session = out.session ?? progress.session;
  if (out.status === "blocked") {
    writeFileSync("progress.json", JSON.stringify(progress));
    const left = steps.filter((s) => !progress.done.includes(s));
    finish(`Needs you: ${config.target} is blocked at ${step} (${out.reason})`, {
      ask: [{
        title, text: `The browser entry stopped at "${step}": ${out.reason}. Clear it in the browser (same session), then answer.`,
        options: ["Cleared it: go on", "Skip this time"], recommend: 0, key: "browser-blocked", about: `left: ${left.join(", ")} (session ${progress.session})`,
      }],
    });
  }
  progress.done.push(step);
  writeFileSync("progress.json", JSON.stringify(progress));
}
rmSync("progress.json", { force: true });
finish(`Done: ${steps.length} browser steps on ${config.target} (session ${progress.session})`);
