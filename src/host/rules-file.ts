/**
 * Reading rules.json so that no file can hurt the hub (issue 14): a FIFO, a directory, a device or a socket is refused
 * by its type without being read, a file over `rulesFileMaxBytes` by its size without being read whole, and opening
 * never waits (a FIFO opened for reading would wait for a writer and block the hub's event loop for good).
 * The hub, `check` and `doctor` read the file here, so they say the same about it; this module loads no database,
 * so `check` and `doctor` never reach one.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { rulesFileMaxBytes } from "../kernel/limits.js";
import { t, type Lang, type MessageId, render } from "../i18n/messages.js";
import { parseRules } from "../protocol/rules-file.js";
import { hashText } from "../kernel/credentials.js";
import type { Input } from "../kernel/types.js";

/** The file's text, or why it was refused: `unreadable` when it could not be read at all (as a missing file). */
export type RulesText = { ok: true; text: string } | { ok: false; error: string; unreadable: boolean };
/** The file's bytes, or why it was refused (as `RulesText`). */
export type FileBytes = { ok: true; bytes: Buffer } | { ok: false; error: string; unreadable: boolean };

/** Reads the rules file at `path` as UTF-8. Never throws and never blocks on the file's kind. */
export function readRulesText(path: string, lang: Lang): RulesText {
  const read = readFileBounded(path, rulesFileMaxBytes, lang);
  return read.ok ? { ok: true, text: read.bytes.toString("utf8") } : read;
}

/**
 * Reads a file a person writes (rules.json, and for `check` a config.json or manifest.toml) as the hub reads
 * rules.json: refused by its type unless a regular file, by its size over `maxBytes` without being read whole, and
 * never waiting on it. Never throws.
 */
export function readFileBounded(path: string, maxBytes: number, lang: Lang): FileBytes {
  let fd: number;
  try {
    // O_NONBLOCK makes opening a FIFO return at once; regular files ignore it. (Windows has neither.)
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (e) {
    return { ok: false, error: `${path}: ${errorText(e, lang)}`, unreadable: true };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, error: t(lang, "rules.notFile", { file: path, kind: render(lang, { id: kindOf(st) }) }), unreadable: true };
    if (st.size > maxBytes) return { ok: false, error: tooLarge(path, st.size, maxBytes, lang), unreadable: false };
    // The file may have grown since fstat: read one byte more than the limit at most, and refuse it if that byte came.
    const buffer = Buffer.allocUnsafe(maxBytes + 1);
    let length = 0;
    for (let got = -1; got !== 0 && length < buffer.length; length += got) got = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > maxBytes) return { ok: false, error: tooLarge(path, fstatSync(fd).size, maxBytes, lang), unreadable: false };
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch (e) {
    return { ok: false, error: `${path}: ${errorText(e, lang)}`, unreadable: true };
  } finally {
    closeSync(fd);
  }
}

/** The system time zone, the default of rules.json `timezone`. */
export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/**
 * Reads and parses the rules file into the input that loads it, or the input that reports what is wrong (with line and
 * column). Never throws: whatever goes wrong is a `rulesError`, so the old rules keep running and a card says why.
 */
export function readRulesInput(path: string, lang: Lang): Extract<Input, { kind: "rules" | "rulesError" }> {
  try {
    const read = readRulesText(path, lang);
    if (!read.ok) return { kind: "rulesError", error: read.error, missing: read.unreadable };
    // Asked only when the file names no time zone: the system's is ICU's first use, ~20-30 ms of a hub's start (issue 32).
    const parsed = parseRules(read.text, { get timezone() { return systemTimeZone(); } }, lang);
    if (!parsed.ok) return { kind: "rulesError", error: `${path}:${parsed.line}:${parsed.column}: ${parsed.error}`, missing: false };
    return { kind: "rules", rules: parsed.rules, hash: hashText(JSON.stringify(parsed.rules)) };
  } catch (e) {
    // A bug, not the file's fault; still no reason to stop the hub or keep it from starting on its stored rules.
    return { kind: "rulesError", error: t(lang, "rules.unexpected", { file: path, error: String(e) }), missing: false };
  }
}

/** Why a file could not be read: in words with the system's code for the common cases (`no such file (ENOENT)`), else the code. */
function errorText(e: unknown, lang: Lang): string {
  const code = (e as NodeJS.ErrnoException).code;
  const words = code === "ENOENT" ? t(lang, "rules.noSuchFile") : code === "EACCES" ? t(lang, "rules.noPermission") : null;
  return words ? `${words} (${code})` : code ?? (e as Error).message;
}

function tooLarge(path: string, size: number, limit: number, lang: Lang): string {
  return t(lang, "rules.tooLarge", { file: path, size, mib: Math.round(limit / 1024 / 1024 * 100) / 100, limit });
}

function kindOf(st: Stats): MessageId {
  if (st.isFIFO()) return "rules.kind.fifo";
  if (st.isDirectory()) return "rules.kind.directory";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "rules.kind.device";
  if (st.isSocket()) return "rules.kind.socket";
  return "rules.kind.other";
}
