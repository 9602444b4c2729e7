/**
 * `key new` works for any name, but a key is of use only for a name rules.json gives work to: a source its rules take
 * events from, a worker its agents run on, a channel its cards go to. For another name it says so on stderr (the key
 * is made all the same: rules.json may be edited next).
 */
import { readRulesInput } from "../host/rules-file.js";
import type { KeyKind } from "../kernel/types.js";
import { t, type Lang } from "../i18n/messages.js";

/**
 * The note `key new <kind> <name>` prints when rules.json does not name `name`, or null (an owner key, a name rules.json
 * names, or a rules file that cannot be read: `check` says what is wrong with it).
 */
export function keyNameNote(rulesFile: string, kind: KeyKind, name: string, lang: Lang): string | null {
  const read = readRulesInput(rulesFile, lang);
  if (read.kind !== "rules") return null;
  const { sources, channels, agents } = read.rules;
  const names = kind === "source" ? Object.keys(sources)
    : kind === "channel" ? Object.keys(channels)
    : kind === "worker" ? [...new Set(Object.values(agents).map((a) => a.worker))]
    : null;
  if (names === null || names.includes(name)) return null;
  const known = names.length > 0 ? names.sort().join(", ") : t(lang, "key.note.none");
  return t(lang, kind === "source" ? "key.note.source" : kind === "channel" ? "key.note.channel" : "key.note.worker", { name, known });
}
