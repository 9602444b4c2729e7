/**
 * Commander's own errors in the user's language. Commander words them in English only and gives no id with the text
 * (`error: unknown command 'stats'`, `(Did you mean status?)`), so each of its few forms is matched, line by line,
 * against the English of the catalog's `cli.cmd.*` messages and said anew in `lang`; any other line stays as it is.
 * This is the one place a text is read back from prose: it comes from a library, never from the hub (issue 27 #2).
 */
import { render, type Lang, type MessageId } from "../i18n/messages.js";

/** The catalog messages of commander's errors, with the names of their placeholders. */
const forms = [
  ["cli.cmd.unknownCommand", ["name"]], ["cli.cmd.unknownOption", ["name"]], ["cli.cmd.missingArgument", ["name"]],
  ["cli.cmd.optionArgument", ["flags"]], ["cli.cmd.requiredOption", ["flags"]], ["cli.cmd.tooManyOne", ["name", "got"]],
  ["cli.cmd.tooMany", ["name", "expected", "got"]], ["cli.cmd.didYouMean", ["name"]], ["cli.cmd.didYouMeanOne", ["names"]],
] as const satisfies readonly (readonly [MessageId, readonly string[]])[];

/** Each form's English as an anchored pattern with one named group per placeholder; made on first use. */
let patterns: { id: MessageId; re: RegExp }[] | null = null;

function formPatterns(): { id: MessageId; re: RegExp }[] {
  patterns ??= forms.map(([id, names]) => {
    // The English text with a marker per placeholder, then escaped, then each marker a lazy group.
    const marked = render("en", { id, params: Object.fromEntries(names.map((n) => [n, `\u0000${n}\u0000`])) });
    const source = marked.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\u0000(\w+)\u0000/g, "(?<$1>.*?)");
    return { id, re: new RegExp(`^${source}$`, "s") };
  });
  return patterns;
}

/** `text` (what commander wrote) in `lang`: each line that is one of commander's forms said from the catalog. */
export function commanderText(text: string, lang: Lang): string {
  if (lang === "en") return text;
  return text.split("\n").map((line) => {
    for (const { id, re } of formPatterns()) {
      const m = re.exec(line);
      if (m) return render(lang, { id, params: { ...m.groups } });
    }
    return line;
  }).join("\n");
}

