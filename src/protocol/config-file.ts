/**
 * Reading config.json (README "Files"; issue 27 "One way to check files"): plain JSON parsed with positions, checked
 * against the published schema (config-schema.ts, compiled ahead of time), the first problem worded from the catalog
 * with its line and column. Pure: text in. The home reads the file (src/host/home.ts `readConfig`), `check` too.
 */
import type { ErrorObject } from "ajv";
import { t, type Lang, render } from "../i18n/messages.js";
import { rulesFileDepthMax } from "../kernel/limits.js";
import { fileProblems, lineColumn, type KeywordMessages } from "./file-problems.js";
import { firstInFile, readJson } from "./json-file.js";
import type { ConfigFile } from "./config-schema.js";
import { validate as validateConfigFile } from "./config-validator.generated.js";

/** How config.json's keywords are worded where a node names no message of its own. */
const configMessages: KeywordMessages = {
  type: "field.type", required: "field.required", additionalProperties: "field.unknown", other: "field.invalid",
};

export type ConfigParse = { ok: true; config: ConfigFile } | { ok: false; error: string; line: number; column: number };
type Validator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** Reads config.json's text. Never throws: a bad file gives its first problem in `lang`, with line and column. */
export function parseConfig(text: string, lang: Lang): ConfigParse {
  // Nesting as deep as rules.json may go: a channel's options are the only objects inside objects.
  const read = readJson(text, { comments: false, depthMax: rulesFileDepthMax }, lang);
  if (!read.ok) return { ok: false, error: render(lang, read), ...lineColumn(text, read.offset) };
  const validate = validateConfigFile as Validator;
  if (validate(read.value)) return { ok: true, config: read.value as ConfigFile };
  const first = firstInFile(fileProblems(validate.errors ?? [], read.value, configMessages), text, read.root);
  return { ok: false, error: render(lang, first), ...first.place };
}
