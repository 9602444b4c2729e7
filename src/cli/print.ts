/**
 * What the CLI prints. Much of it comes from outside: card titles and texts, summaries and errors that agents and
 * sources wrote, a hub's answers, plugin and program output. A terminal obeys control characters (ESC and C1
 * sequences move the cursor, clear the screen or set the title) and bidirectional formatting characters reorder
 * what a person sees (U+202E shows "exe.pdf" as "fdp.exe"), so every line goes out with those characters replaced
 * by their `\uXXXX` escapes. In JSON output the escapes are JSON's own: the text still parses to the same value.
 */

/** A failure the CLI reports as one line (exit code 1 unless given). */
export class CliError extends Error {
  constructor(message: string, readonly code = 1) { super(message); }
}

/** C0 controls other than tab and line feed, DEL, C1 controls (U+0080–U+009F), and Unicode's Bidi_Control characters. */
const unprintable = /(?![\t\n])[\p{Cc}\p{Bidi_Control}]/gu;

/** `text` with every control and bidirectional formatting character (except tab and line feed) as a `\uXXXX` escape. */
export function printable(text: string): string {
  return text.replace(unprintable, (ch) => `\\u${ch.codePointAt(0)!.toString(16).padStart(4, "0")}`);
}

/** Prints a line on standard output, made printable. */
export function say(text: string): void {
  process.stdout.write(printable(text) + "\n");
}

/** Writes text on standard error, made printable. */
export function sayError(text: string): void {
  process.stderr.write(printable(text));
}
