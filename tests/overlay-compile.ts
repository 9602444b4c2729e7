/**
 * The TypeScript compiler run on the engine's sources with some files laid over them, nothing written to the tree:
 * how tests/plugins-kind.test.ts and tests/ui-node-kind.test.ts show that adding a kind (a tool-plugin kind, a UI node
 * type) makes the compiler name every place that must handle it (issue 27, "Done when").
 */
import assert from "node:assert/strict";
import { readdirSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { engine } from "./helpers.js";

/** Every file under `dir` (under the engine) whose name ends with `ending`: a program's roots. */
export function sources(dir: string, ending = ".ts"): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p, ending) : p.endsWith(ending) ? [p] : [];
  });
}

/** Files (path under the engine → text) laid over the engine's sources. */
export type Overlay = Record<string, string>;

/** One TypeScript project of the engine (a tsconfig file) and the files it compiles. */
export class Project {
  private readonly options: ts.CompilerOptions;
  private previous: ts.Program | undefined;

  /** @param config the tsconfig file under the engine @param roots the program's root files (absolute paths) */
  constructor(config: string, private readonly roots: () => string[]) {
    const read = ts.getParsedCommandLineOfConfigFile(join(engine, config), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
    assert.ok(read, config);
    this.options = { ...read.options, noEmit: true, incremental: false };
  }

  /** The compiler's errors with `overlay` laid over the sources, each as `<file>:<line> TS<code> <message>`, in order. */
  compile(overlay: Overlay): string[] {
    const over = new Map(Object.entries(overlay).map(([p, text]) => [resolve(engine, p), text]));
    const host = ts.createCompilerHost(this.options, true);
    const { fileExists, readFile, getSourceFile } = host;
    host.fileExists = (f) => over.has(resolve(f)) || fileExists.call(host, f);
    host.readFile = (f) => over.get(resolve(f)) ?? readFile.call(host, f);
    host.getSourceFile = (f, lang, onError, fresh) => {
      const text = over.get(resolve(f));
      return text !== undefined ? ts.createSourceFile(f, text, lang, true) : getSourceFile.call(host, f, lang, onError, fresh);
    };
    const roots = [...new Set([...this.roots(), ...[...over.keys()].filter((f) => f.endsWith(".ts"))])];
    const program = ts.createProgram({ rootNames: roots, options: this.options, host, oldProgram: this.previous });
    this.previous = program;
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file ? `${relative(engine, d.file.fileName).split(sep).join("/")}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : "-";
      return `${where} TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
    });
  }
}

/** The line (1-based) of `text` holding `needle` (the first). */
export function lineOf(text: string, needle: string): number {
  const i = text.split("\n").findIndex((l) => l.includes(needle));
  assert.ok(i >= 0, needle);
  return i + 1;
}

/** `errors` as `<file>:<line> TS<code>` each (what a test pins; the messages it matches apart). */
export function places(errors: readonly string[]): string[] {
  return errors.map((e) => e.split(" ").slice(0, 2).join(" "));
}
