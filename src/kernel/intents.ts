/**
 * Declarative intents as a rule's `when` (issue 18 "Intents"; spec declarative-plugins.md §3.3): an event hits an
 * intent when its summary or detail contains any of the intent's `includes_any` phrases, compared without case in
 * the Unicode sense. Pure: the shell hands the loaded intents to each event decision as data (`IntentTable`).
 */

/** The loaded intents an event is matched against: `<plugin>/<id>` → its `includes_any` phrases. */
export type IntentTable = Readonly<Record<string, readonly string[]>>;

/**
 * A text folded for comparison without case: compatibility forms joined (NFKC: `ﬁ` → `fi`, full-width letters →
 * ASCII), then lower-, upper- and lower-cased again, so that letters whose upper case is longer compare equal (`ß`,
 * `ẞ` and `SS` all become `ss`), and the final sigma, which lower-casing picks by position, made `σ` (`Σ`, `σ` and
 * `ς` compare equal wherever they stand).
 */
export function foldCase(text: string): string {
  return text.normalize("NFKC").toLowerCase().toUpperCase().toLowerCase().replace(/ς/g, "σ");
}

/** Whether `summary` or `detail` contains any of `phrases` (folded with `foldCase`); empty phrases match nothing. */
export function intentHit(phrases: readonly string[], summary: string | null, detail: string | null): boolean {
  const texts = [summary, detail].filter((x): x is string => typeof x === "string" && x !== "").map(foldCase);
  if (texts.length === 0) return false;
  return phrases.some((p) => {
    const f = foldCase(p);
    return f !== "" && texts.some((t) => t.includes(f));
  });
}
