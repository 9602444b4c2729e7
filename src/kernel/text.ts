/**
 * What "no control characters" means everywhere (protocol.md 来源: text fields; issue 14): characters that could
 * drive a terminal, or make text read differently from what it says, are refused in every text field of every /v1
 * input, in rules.json names and in key names. Defined once here; the protocol schema builds its patterns from it.
 *
 * Refused: C0 controls and DEL, C1 controls (U+0080–U+009F, e.g. U+009B, a one-byte CSI on some terminals), the bidi
 * embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069) that reorder what a reader sees ("Trojan
 * Source"), the deprecated format controls after them (U+206A–U+206F), and lone surrogates (stored as U+FFFD, so two
 * different strings would become one). One-line text also refuses U+2028 and U+2029 (line and paragraph separators).
 * Kept: the marks LRM, RLM and ALM (U+200E, U+200F, U+061C) and joiners, which real Arabic, Hebrew and emoji need.
 */

/** The refused characters of free text (line breaks and tabs allowed), as the body of a RegExp class for the `u` flag. */
export const textForbiddenClass = "\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u206f\\ud800-\\udfff";
/** The refused characters of one-line text: the above, line breaks, tabs and the line and paragraph separators. */
export const lineForbiddenClass = "\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u206f\\ud800-\\udfff";

/** Matches a character one-line text may not hold. */
export const lineForbidden = new RegExp(`[${lineForbiddenClass}]`, "u");

/**
 * One-line text with every character one-line text may not hold (`lineForbiddenClass`: controls, line breaks,
 * bidirectional formatting) written as its `\u{hex}` escape: a name someone else chose (a file an agent or a plugin
 * made), shown as it is without adding lines or reordering what a reader sees (issue 26 rounds 12 and 30).
 */
export function escapedLine(text: string): string {
  return text.replace(new RegExp(`[${lineForbiddenClass}]`, "gu"), (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/**
 * Text relayed from elsewhere made acceptable instead of refused (a webhook's issue title, an agent's last words):
 * refused characters are removed; in one-line text, runs of line breaks, tabs and separators become one space first.
 */
export function neutralise(text: string, oneLine: boolean): string {
  const spaced = oneLine ? text.replace(/[\r\n\t\u0085\u2028\u2029]+/g, " ") : text;
  return spaced.replace(new RegExp(`[${oneLine ? lineForbiddenClass : textForbiddenClass}]`, "gu"), "");
}

/**
 * Text relayed from elsewhere made to fit a field of at most `maxCodepoints`: neutralised, then, when still longer,
 * cut with "…" as its last character (a reason too long for the field must not get the whole report refused).
 */
export function relayed(text: string, oneLine: boolean, maxCodepoints: number): string {
  const chars = [...neutralise(text, oneLine)];
  return chars.length <= maxCodepoints ? chars.join("") : chars.slice(0, maxCodepoints - 1).join("") + "…";
}

/** The length of `text` in UTF-8 bytes (a lone surrogate counts as U+FFFD, 3 bytes), without Node's Buffer. */
export function utf8Bytes(text: string): number {
  let n = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}

/** A workflow `artifact` file name (issue 18): no folder, no `..`, not hidden; so it needs no encoding in a URL. */
export const artifactFilePattern = "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$";

/** The route of a run's artifact (issue 18): `/v1/runs/<run>/artifacts/<file>` (a file name needs no encoding). */
export function artifactPath(run: number, file: string): string {
  return `/v1/runs/${run}/artifacts/${file}`;
}

const artifactDocId = new RegExp(`^run:([1-9]\\d{0,14})/(${artifactFilePattern.slice(1, -1)})$`);

/**
 * The route of the artifact a doc-ref names (issue 18): a `docId` of the form `run:<run id>/<file>` (what a workflow's
 * notice names) gives `/v1/runs/<run>/artifacts/<file>`; any other docId gives null (it is shown, not linked).
 */
export function artifactRoute(docId: string): string | null {
  const m = artifactDocId.exec(docId);
  return m ? artifactPath(Number(m[1]), m[2]!) : null;
}

/** What `redact` puts in place of a secret. */
export const redacted = "[redacted]";

/**
 * `text` with each of `secrets` (non-empty) replaced by `mark` (default `[redacted]`): an HTTP tool's credential in
 * what it returns (src/declarative/http.ts), a run's secrets in its transcript (issue 30, src/worker/transcript-lines.ts)
 * and in what its worker reports (src/worker/transcript.ts `redactedDeep`).
 */
export function redact(text: string, secrets: readonly string[], mark: string = redacted): string {
  return secrets.reduce((s, secret) => (secret ? s.split(secret).join(mark) : s), text);
}

/**
 * `relayed` with `secrets` redacted in between: neutralised first, then redacted, then cut (issue 26 round 8: redacted
 * first, a secret with a control character inside was joined again by the neutralising and kept whole; cut first, a
 * secret's first part could stay).
 */
export function relayedRedacted(text: string, secrets: readonly string[], oneLine: boolean, maxCodepoints: number): string {
  return relayed(redact(neutralise(text, oneLine), secrets), oneLine, maxCodepoints);
}
