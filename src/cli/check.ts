/**
 * `agent-autoloop check [file]` (issue 27 "One way to check files"): rules.json of this home by default, or the file
 * given, which is a tool plugin's manifest when its name ends in `.toml`, a config.json when its name is
 * `config.json` or its top-level object has `listen` or `owner`, and a rules file otherwise. Each is read as the hub
 * reads it (never waiting on a FIFO, bounded in size) and checked by its published schema and its hand checks; a
 * problem is printed as `<file>:<line>:<column>: <text>` in the CLI's language (every problem of a manifest, the
 * first of a JSON file), and the command fails. Loads no database and no hub.
 */
import { basename } from "node:path";
import { existsSync } from "node:fs";
import { createScanner, SyntaxKind } from "jsonc-parser";
import { t, type Lang } from "../i18n/messages.js";
import { rulesFileMaxBytes } from "../kernel/limits.js";
import { CliError } from "./print.js";

/** What kind of file `check` takes `path` for (see the module's comment). */
export type CheckedKind = "rules" | "config" | "manifest";

/** The kind of a file by its name, then by its content (`text`, when it could be read). */
export function kindOf(path: string, text: string | null): CheckedKind {
  const name = basename(path).toLowerCase();
  if (name.endsWith(".toml")) return "manifest";
  if (name === "config.json") return "config";
  return text !== null && topKeys(text).some((k) => k === "listen" || k === "owner") ? "config" : "rules";
}

/** The keys of a JSON text's top-level object, read token by token (no tree: a file may nest thousands deep). */
function topKeys(text: string): string[] {
  const scanner = createScanner(text, true);
  const keys: string[] = [];
  let depth = 0;
  let last: { kind: SyntaxKind; value: string } | null = null;
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    if (token === SyntaxKind.OpenBraceToken || token === SyntaxKind.OpenBracketToken) depth++;
    else if (token === SyntaxKind.CloseBraceToken || token === SyntaxKind.CloseBracketToken) depth--;
    else if (token === SyntaxKind.ColonToken && depth === 1 && last?.kind === SyntaxKind.StringLiteral) keys.push(last.value);
    last = { kind: token, value: scanner.getTokenValue() };
  }
  return keys;
}

/**
 * Checks `file` (default: this home's rules.json, `defaultRules`). @returns the line saying it is valid.
 * @throws CliError with the problems, one per line.
 */
export async function checkFile(file: string | undefined, defaultRules: string, lang: Lang): Promise<string> {
  const { readFileBounded, readRulesInput } = await import("../host/rules-file.js");
  const f = file ?? defaultRules;
  const read = file === undefined ? null : readFileBounded(f, rulesFileMaxBytes, lang);
  const kind = read === null ? "rules" : kindOf(f, read.ok ? read.bytes.toString("utf8") : null);
  if (kind === "rules") {
    // What the hub would load, read the same way: check says what the hub would say.
    const r = readRulesInput(f, lang);
    if (r.kind === "rulesError") throw new CliError(file === undefined && !existsSync(f) ? t(lang, "cli.check.noFile", { error: r.error }) : r.error);
    return t(lang, "cli.check.ok", {
      file: f, rules: r.rules.rules.length, agents: Object.keys(r.rules.agents).length,
      sources: Object.keys(r.rules.sources).length, channels: Object.keys(r.rules.channels).length, elsewhere: r.rules.elsewhere.length,
    });
  }
  if (!read?.ok) throw new CliError(read?.error ?? f);
  if (kind === "config") {
    const { parseConfig } = await import("../protocol/config-file.js");
    const c = parseConfig(read.bytes.toString("utf8"), lang);
    if (!c.ok) throw new CliError(`${f}:${c.line}:${c.column}: ${c.error}`);
    return t(lang, "cli.check.configOk", {
      file: f, listen: c.config.listen, channels: Object.keys(c.config.channels ?? {}).length, worker: c.config.worker?.name ?? t(lang, "cli.check.noWorker"),
    });
  }
  const { readManifest } = await import("../tools/manifest.js");
  const m = readManifest(read.bytes, lang);
  if (!m.ok) throw new CliError(m.problems.map((p) => `${f}${p.line === null ? "" : `:${p.line}:${p.column ?? 1}`}: ${p.message}`).join("\n"));
  return t(lang, "cli.check.manifestOk", {
    file: f, name: m.manifest.name, version: m.manifest.version, type: m.manifest.plugin_type, tools: m.manifest.capabilities.tools.length,
  });
}
