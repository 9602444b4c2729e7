/**
 * Reading rules.json (protocol.md 规则; issue 27 "One way to check files"): JSONC parsed with positions, bounded
 * before it is walked (size, depth, the length of every list, a key given twice), checked against the published
 * schema (rules-schema.ts, compiled ahead of time), then what a schema cannot say checked by hand (rules-refs.ts), and
 * normalized into the kernel's `Rules`. Pure: text in, rules or one problem out, worded from the catalog with its line
 * and column. Used by the hub, `check` and the simulation.
 */
import type { ErrorObject } from "ajv";
import type { Node } from "jsonc-parser";
import { rulesFileApprovalsMax, rulesFileAgentsMax, rulesFileChannelsMax, rulesFileDepthMax, rulesFileElsewhereMax, rulesFileListItemsMax, rulesFileMaxBytes, rulesFileRulesMax, rulesFileSourcesMax } from "../kernel/limits.js";
import { t, type Lang, type MessageId, render } from "../i18n/messages.js";
import type { Rules } from "../kernel/rules.js";
import { fieldPath, fileProblems, lineColumn, type FilePath, type KeywordMessages } from "./file-problems.js";
import { firstInFile, keyGivenTwice, locateJson, readJson } from "./json-file.js";
import type { RulesFile } from "./rules-schema.js";
import { normalizeRules, RulesError } from "./rules-refs.js";
import { validate as validateRulesFile } from "./rules-validator.generated.js";

export { jsonSyntaxText } from "./json-file.js";
export { isCron, isTimeZone } from "./rules-refs.js";

/** How rules.json's keywords are worded where a node names no message of its own. */
const rulesMessages: KeywordMessages = {
  "type:string": "rulesJson.string", "type:object": "rulesJson.object", "type:array": "rulesJson.array", "type:boolean": "rulesJson.boolean",
  required: "rulesJson.required", additionalProperties: "rulesJson.unknownField", other: "rulesJson.invalid",
};

export type RulesParse = { ok: true; rules: Rules } | { ok: false; error: string; line: number; column: number };
type Validator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * Reads a rule file's text. Never throws: a bad file gives `{ok:false, error, line, column}`, the error worded in
 * `lang` (default English) from the message catalog — the first problem in the order of the file, its path first
 * (`rules[0].to: …`). The file's size, depth and lists are checked before anything walks it (limits.ts:
 * rulesFile…), so no file can exhaust the stack or stall a reader.
 */
export function parseRules(text: string, defaults: { timezone: string }, lang: Lang = "en"): RulesParse {
  if (Buffer.byteLength(text, "utf8") > rulesFileMaxBytes) {
    return { ok: false, error: t(lang, "rulesJson.tooLarge", { mib: rulesFileMaxBytes / 1024 / 1024, limit: rulesFileMaxBytes }), line: 1, column: 1 };
  }
  const read = readJson(text, { comments: true, depthMax: rulesFileDepthMax }, lang);
  if (!read.ok) return { ok: false, error: render(lang, read), ...lineColumn(text, read.offset) };
  const { root, value } = read;
  const at = (path: FilePath, id: MessageId, params?: Record<string, string | number>) => t(lang, "rulesJson.at", { path: fieldPath(path), message: render(lang, { id, params }) });
  const long = tooLong(root);
  if (long) return { ok: false, error: at(long.path, long.id, { max: long.max }), ...lineColumn(text, long.first.offset) };
  const twice = keyGivenTwice(root);
  if (twice) return { ok: false, error: at(twice.path, "rulesJson.twice"), ...lineColumn(text, twice.offset) };
  const validate = validateRulesFile as Validator;
  if (!validate(value)) {
    const first = firstInFile(fileProblems(validate.errors ?? [], value, rulesMessages), text, root);
    return { ok: false, error: at(first.path, first.id, first.params), ...first.place };
  }
  try {
    return { ok: true, rules: normalizeRules(value as RulesFile, defaults) };
  } catch (err) {
    if (!(err instanceof RulesError)) throw err;
    return { ok: false, error: at(err.path, err.problem.id, err.problem.params), ...locateJson(text, root, err.path) };
  }
}

/** The lists of the file that grow with it: where they are (`*`: any entry) and how many items each may hold. */
const listLimits: { path: string[]; max: number; id: MessageId }[] = [
  { path: ["askFirst"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["sources"], max: rulesFileSourcesMax, id: "rulesJson.tooMany.sources" },
  { path: ["agents"], max: rulesFileAgentsMax, id: "rulesJson.tooMany.agents" },
  { path: ["agents", "*", "command"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["channels"], max: rulesFileChannelsMax, id: "rulesJson.tooMany.channels" },
  { path: ["channels", "*", "answerers"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["rules"], max: rulesFileRulesMax, id: "rulesJson.tooMany.rules" },
  { path: ["rules", "*", "when", "types"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["rules", "*", "emits", "types"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["rules", "*", "channels"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["rules", "*", "tools"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["elsewhere"], max: rulesFileElsewhereMax, id: "rulesJson.tooMany.tasks" },
  { path: ["approvals"], max: rulesFileApprovalsMax, id: "rulesJson.tooMany.approvals" },
  { path: ["approvals", "*", "allow_session_keys"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
];

/** Whether `path` is `pattern` (`exact`) or leads into it. */
function along(path: FilePath, pattern: string[], exact: boolean): boolean {
  if (exact ? path.length !== pattern.length : path.length > pattern.length) return false;
  return path.every((p, i) => pattern[i] === "*" || pattern[i] === String(p));
}

/**
 * The first list over its limit in the order of the file (its path, the first item past the limit, the limit), or
 * null. Walks only the containers that lead to a limited list, with a stack of its own instead of recursion. The
 * schema says the same limits (for editors); this finds them before the file is validated.
 */
function tooLong(root: Node): { path: FilePath; first: Node; max: number; id: MessageId } | null {
  const stack: { node: Node; path: FilePath }[] = [{ node: root, path: [] }];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const children = top.node.children ?? [];
    const limit = listLimits.find((l) => along(top!.path, l.path, true));
    if (limit && children.length > limit.max) return { path: top.path, first: children[limit.max]!, max: limit.max, id: limit.id };
    const inside = top.node.type === "object"
      ? children.map((prop) => ({ node: prop.children![1]!, path: [...top!.path, String(prop.children![0]!.value)] }))
      : children.map((node, i) => ({ node, path: [...top!.path, i] }));
    stack.push(...inside.filter((c) => listLimits.some((l) => along(c.path, l.path, false))).reverse());
  }
  return null;
}
