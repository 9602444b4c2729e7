#!/usr/bin/env node
// The morning report of recipe morning-report (issue 29): a `command` agent run by the rule's cron in the recipe's work
// folder. It reads report.json there ({ repos: [folders], hours }), lists each repository's commits of the last `hours`
// with git (read only), writes reports/<YYYY-MM-DD>.md in the work folder (the one place it may write), and ends with a
// for-your-information notice (closed at once, still delivered). Running it twice on a day writes the same file again
// (at least once: the result is the same, nothing is sent twice for one run).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

const config = JSON.parse(readFileSync("report.json", "utf8"));
const hours = Number(config.hours ?? 24);
const repos = (config.repos ?? []).map((r) => resolve(String(r).replace(/^~(?=$|\/)/, homedir())));
// The day in the rules' time zone is the date of the run's start; the hub passes no clock, so the machine's zone is used
// unless TZ says otherwise.
const day = new Intl.DateTimeFormat("en-CA", { year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());

const sections = [];
let commits = 0;
const problems = [];
for (const repo of repos) {
  try {
    const log = execFileSync("git", ["-C", repo, "log", `--since=${hours} hours ago`, "--no-merges", "--pretty=format:- %h %s (%an)"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
    const lines = log === "" ? [] : log.split("\n");
    commits += lines.length;
    sections.push(`## ${repo}\n\n${lines.length ? lines.join("\n") : "No commits."}\n`);
  } catch (e) {
    problems.push(`${repo}: ${String(e.stderr ?? e.message).trim().split("\n")[0]}`);
    sections.push(`## ${repo}\n\nNot readable: ${problems[problems.length - 1]}\n`);
  }
}
const file = join("reports", `${day}.md`);
mkdirSync("reports", { recursive: true });
writeFileSync(file, `# Morning report ${day}\n\nThe last ${hours} hours, ${commits} commits in ${repos.length} repositories.\n\n${sections.join("\n")}`);

const summary = `${commits} commits in ${repos.length} repositories${problems.length ? `; ${problems.length} not readable` : ""}`;
const text = `${summary}. The report: ${resolve(file)}`;
process.stdout.write(`Morning report written: ${summary}\n\`\`\`agent-autoloop\n${JSON.stringify({ notice: [{ title: `Morning report ${day}`, text, key: `morning-report-${day}`, fyi: true }] })}\n\`\`\`\n`);
