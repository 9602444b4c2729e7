/**
 * The words of a git configuration value that may name a file, read as the owner's shell and git would read them
 * (issue 26 round 15, F15-2, F15-3): git runs most command values with `sh -c`, and takes path values as written with
 * `~` expanded. Every reading is kept (a superset: a word too many costs a look, a word too few is a way in).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Every word of the configuration value `raw` (as git gives it: its own quoting and escapes already undone) that may
 * name a file, expanded:
 * - the whole value (a path value: `core.excludesFile = my ignores`, git does not split it);
 * - the words as `sh` splits them (quotes and backslashes undone: `"bin/q x.sh"`, `bin/b\ y.sh` are one word each);
 * - the pieces between spaces, quotes, `=` and the shell's operators (`;|&()<>` and backquotes), as written — also what
 *   a single-quoted or nested command holds;
 * each with a leading `!` (an alias, `submodule.*.update`) dropped, `~` and `~user` at its start expanded from HOME and
 * /etc/passwd (as git and the shell do), and `$NAME`, `${NAME}`, `${NAME:-word}` expanded from `env` — the hub's
 * environment, the nearest known to the owner's shell (an unset variable is empty there, as in `sh`) — and also as
 * written. Empty words are left out.
 */
export function valueWords(raw: string, env: Readonly<Record<string, string | undefined>>): string[] {
  const home = env.HOME ?? "/";
  const written = [raw.trim(), ...shellWords(raw), ...raw.split(/[\s;|&()<>"'`=]+/)];
  const out = new Set<string>();
  for (const w of written) {
    const word = expandUserPath(w.replace(/^!/, ""), home);
    for (const v of [word, expandVariables(word, env)]) if (v) out.add(v);
  }
  return [...out];
}

/** `word` with `$NAME`, `${NAME}` and `${NAME:-word}` (`-`, `=`, with or without `:`) replaced as `sh` would from `env`. */
function expandVariables(word: string, env: Readonly<Record<string, string | undefined>>): string {
  return word.replace(/\$\{([A-Za-z_]\w*)(?::?[-=]([^}]*))?\}|\$([A-Za-z_]\w*)/g, (_m, braced: string | undefined, fallback: string | undefined, bare: string | undefined) => {
    const value = env[(braced ?? bare)!];
    return value !== undefined && value !== "" ? value : (fallback ?? "");
  });
}

/**
 * The words of `s` as `sh` splits them: blanks and the operators `;|&()<>` and backquotes end a word; single quotes
 * keep what they hold as it is, double quotes too but for `\` before `$`, `` ` ``, `"`, `\` and a line break; a
 * backslash outside quotes keeps the next character. An unclosed quote runs to the end (sh refuses it; a superset).
 */
export function shellWords(s: string): string[] {
  const words: string[] = [];
  let cur = "";
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "\\") {
      if (i + 1 < s.length) cur += s[++i];
      inWord = true;
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      const stop = end < 0 ? s.length : end;
      cur += s.slice(i + 1, stop);
      i = stop;
      inWord = true;
    } else if (c === '"') {
      for (i++; i < s.length && s[i] !== '"'; i++) {
        if (s[i] === "\\" && i + 1 < s.length && '$`"\\\n'.includes(s[i + 1]!)) i++;
        cur += s[i];
      }
      inWord = true;
    } else if (/[\s;|&()<>`]/.test(c)) {
      if (inWord) words.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) words.push(cur);
  return words;
}

/**
 * A configuration path as git expands it: `~/…` from HOME, `~user/…` from that user's home in /etc/passwd (F14-4:
 * `path = ~dd/p14/.gitconfig-id` was read as a relative path); anything else as written.
 */
export function expandUserPath(raw: string, home: string): string {
  if (raw === "~" || raw.startsWith("~/")) return join(home, raw.slice(1));
  const m = /^~([a-z_][a-z0-9_.-]*[$]?)(\/.*)?$/i.exec(raw);
  if (!m) return raw;
  const user = m[1]!;
  try {
    const entry = readFileSync("/etc/passwd", "utf8").split("\n").map((l) => l.split(":")).find((f) => f[0] === user);
    return entry?.[5] ? join(entry[5], m[2] ?? "") : raw;
  } catch {
    return raw;
  }
}
