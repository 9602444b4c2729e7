/**
 * The words of a hook's or hook manager's command line that it runs as files (issue 26, the round-35 review's W3 and
 * the round-37 review): a script a hook runs that is missing at launch (an optional local hook,
 * `[ -x tools/local-hook.sh ] && sh tools/local-hook.sh`) must not be made by the run, while a path the line merely
 * mentions (`git diff -- src/generated/api.ts`, `mint run owner/plugin`) is the project's own business.
 */
import { normalize, sep } from "node:path";
import { lstatOr, within } from "../common/file-checks.js";

/** Words before a command that are not the command (shell keywords, `exec`, `command`, `env`, `time`, `!`). */
const prefixWords = new Set(["if", "then", "else", "elif", "do", "while", "until", "!", "exec", "command", "env", "time", "nohup", "{"]);
/** Programs whose first operand is a script they run. */
const interpreters = new Set(["sh", "bash", "zsh", "dash", "ksh", "source", ".", "node", "deno", "bun", "tsx", "python", "python3", "ruby", "perl", "php", "lua"]);
/** A shell variable assignment before a command (`CI=1 ./x.sh`). */
const assignment = /^[A-Za-z_][A-Za-z0-9_]*=/;

/**
 * The words of one command line that name what it runs: each simple command's first word (after keywords and
 * assignments), an interpreter's first operand (`sh x.sh`, `node dist/x.js`, `. ./.local-env`), and the operand of a
 * `[ -x | -f | -e | -s | -r … ]` or `test` that guards one. Quotes taken off; a word with `$` or a backquote is left out.
 */
export function executedWords(line: string): string[] {
  const out: string[] = [];
  for (const segment of line.replace(/(^|\s)#.*$/, "").split(/&&|\|\||[;|()`]/)) {
    const words = segment.trim().split(/\s+/).filter(Boolean).map((w) => w.replace(/^(["'])(.*)\1$/, "$2"));
    let i = 0;
    while (i < words.length && (prefixWords.has(words[i]!) || assignment.test(words[i]!))) i++;
    const first = words[i];
    if (first === undefined) continue;
    if (first === "[" || first === "[[" || first === "test") {
      for (let j = i + 1; j + 1 < words.length; j++) if (/^-[xfesr]$/.test(words[j]!)) out.push(words[j + 1]!);
      continue;
    }
    out.push(first);
    if (interpreters.has(first)) {
      const operand = words.slice(i + 1).find((w) => !w.startsWith("-"));
      if (operand !== undefined) out.push(operand);
    }
  }
  return out.filter((w) => !/[$`]/.test(w));
}

/**
 * A word that names a file by its path (`tools/local-hook.sh`, `./check`, `.hooks/local.sh`, `lint.py`): path parts
 * of letters, digits and `._+-` (a leading dot too: a hidden file or folder), none `.` or `..` but leading ones.
 */
const scriptPath = /^(?:\.{1,2}\/)*(?!\.{1,2}(?:\/|$))[A-Za-z0-9_.+-]+(?:\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9_.+-]+)*$/;

/** `scriptPath` with a folder in it or a script's extension: a name a hook runs as a file, not a command looked up on PATH. */
export function scriptLike(word: string): boolean {
  return scriptPath.test(word) && (word.includes("/") || /\.(?:sh|bash|zsh|js|mjs|cjs|ts|py|rb|pl|php)$/.test(word));
}

/**
 * The `paths` (absolute) that lie inside `folder` and are missing now, normalized; not one in a `node_modules`, which
 * the agent's `npm install` makes as the owner's would.
 */
export function missingIn(paths: readonly string[], folder: string): string[] {
  return paths.map((p) => normalize(p)).filter((p) => p !== folder && within(p, folder) && !p.split(sep).includes("node_modules") && lstatOr(p) === null);
}
