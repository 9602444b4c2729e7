/**
 * How a program is started on Windows (plugins.md Windows 原生运行, issue 28): found on PATH with PATHEXT, then run
 * so that every argument reaches it intact. `.exe`/`.com` run directly; a PowerShell `.ps1` runs through
 * `powershell.exe -NoProfile -ExecutionPolicy Bypass -File`; npm's JavaScript `.cmd` shims run as
 * `node <their JS entry>`; any other `.bat`/`.cmd` is refused, because cmd.exe would read its arguments again as
 * shell source (`&`, `|`, `%VAR%`, `^` and line breaks in a prompt would be commands or vanish). Node never starts a
 * `.cmd` itself without `shell: true` (EINVAL since Node 20.12.2), and the worker never uses a shell.
 *
 * Everything here is pure with `path.win32` semantics, given the environment and a view of the file system, so the
 * rules are tested on Linux; `launchArgv` applies them on win32 and leaves every other system's argv as it is.
 */
import { readFileSync, statSync } from "node:fs";
import { win32 } from "node:path";
import { langFromEnv, t, type Lang, render } from "../i18n/messages.js";

/**
 * The longest command line Windows starts (CreateProcessW's lpCommandLine): 32 767 UTF-16 code units with its
 * terminating null, so 32 766 of text. A longer one is refused with a clear text instead of the system's error.
 */
export const windowsCommandLineMaxChars = 32_766;

/** npm's shims are under 1 KiB; a `.cmd` larger than this is not read, and so is not taken for one. */
export const npmShimMaxBytes = 64 * 1024;

/** The extensions tried when PATHEXT is not set, as cmd.exe does. */
export const defaultPathExt = ".COM;.EXE;.BAT;.CMD";

/** What the Windows rules read of the file system: the real one is `windowsFiles`, tests give a map. */
export interface WindowsFiles {
  /** Whether `path` (a Windows path) is a regular file. */
  isFile(path: string): boolean;
  /** The text (UTF-8) of a file of at most `npmShimMaxBytes`, or null when it is larger or cannot be read. */
  read(path: string): string | null;
}

/** An environment whose names are matched without regard to case, as Windows does (`Path`, `PATH`, `SystemRoot`). */
export type WindowsEnv = Record<string, string | undefined>;

/** A program to spawn and its arguments (no shell; `file` is an absolute path to an `.exe` or `.com`). */
export interface Launch { file: string; args: string[] }

/** Why a program cannot be started on Windows. */
export type LaunchRefusal = "notFound" | "batch" | "unsupported" | "noNode" | "noEntry" | "noPowerShell" | "tooLong";

/** The outcome of the Windows launch rules: the launch, or why not in `lang` (`text`). */
export type LaunchRule = { launch: Launch } | { refused: LaunchRefusal; text: string };

/** The value of `name` in `env`, matching the name without regard to case (Windows environment names). */
export function envValue(env: WindowsEnv, name: string): string | undefined {
  const upper = name.toUpperCase();
  for (const [k, v] of Object.entries(env)) if (k.toUpperCase() === upper && v !== undefined) return v;
  return undefined;
}

/** PATHEXT as a list of lower-case extensions with their dot (`.com`, `.exe`, …), empty entries left out. */
export function pathExtensions(env: WindowsEnv): string[] {
  const raw = envValue(env, "PATHEXT") || defaultPathExt;
  return raw.split(";").map((e) => e.trim().toLowerCase()).filter((e) => e.startsWith(".") && e.length > 1);
}

/** The folders of PATH in order: empty entries skipped, surrounding quotes removed (as libuv and cmd.exe read it). */
export function pathFolders(env: WindowsEnv): string[] {
  return (envValue(env, "PATH") ?? "").split(";")
    .map((d) => d.trim().replace(/^"(.*)"$/, "$1"))
    .filter((d) => d.length > 0);
}

/** Whether a command names a folder as well (`C:\x\y`, `.\y`, `bin/y`, `C:y`), so PATH is not searched. */
function hasFolder(name: string): boolean {
  return /[\\/:]/.test(name);
}

/**
 * Finds `name` as cmd.exe would on PATH, without regard to case: a name with a folder is looked up there only
 * (relative to `cwd`); a bare name in each PATH folder in order. A name whose extension is one of `extensions` (or
 * `.ps1`) is taken as it is; otherwise each extension is appended in order (`claude` → `claude.com`, `claude.exe`,
 * `claude.bat`, `claude.cmd`). Unlike cmd.exe, the working folder is not searched first, so a repository cannot plant
 * a program the agent's name would find.
 * @param extensions lower-case extensions with their dot; PATHEXT's by default.
 * @returns the path found (as built from PATH, not normalised for case), or null.
 */
export function findWindowsProgram(name: string, env: WindowsEnv, files: WindowsFiles, cwd = "C:\\", extensions = pathExtensions(env)): string | null {
  if (!name || name === ".") return null;
  const ext = win32.extname(name).toLowerCase();
  const candidates = ext && (extensions.includes(ext) || ext === ".ps1") ? [name] : extensions.map((e) => name + e);
  const folders = hasFolder(name) ? [""] : pathFolders(env);
  for (const folder of folders) {
    for (const c of candidates) {
      const full = win32.resolve(cwd, folder, c);
      if (files.isFile(full)) return full;
    }
  }
  return null;
}

/** What an npm JavaScript shim runs: node's own arguments from the script's shebang, then the entry (relative). */
export interface NpmShim { nodeArgs: string[]; entry: string }

/** A line of a shim form: a literal line, or where the run line goes and which shape it has. */
type ShimLine = string | { run: "prog" | "progEnd" | "progEndPathext" | "progDp0" | "dp0NodeExe" | "dp0Node" };

const progIf = ['IF EXIST "%dp0%\\node.exe" (', 'SET "_prog=%dp0%\\node.exe"', ") ELSE (", 'SET "_prog=node"'];
const pathExtLine = "SET PATHEXT=%PATHEXT:;.JS;=;%";
const dp0Head = ["ECHO off", "GOTO start", ":find_dp0", "SET dp0=%~dp0", "EXIT /b", ":start", "SETLOCAL", "CALL :find_dp0"];
const oldIf = 'IF EXIST "%~dp0\\node.exe" (';

/**
 * The shims npm's cmd-shim (and yarn 1 and older pnpm, which copied it) writes for a JavaScript bin, newest first,
 * each line with its leading `@` and surrounding blanks removed and blank lines left out:
 * - cmd-shim 9.0.2 and later: the PATHEXT change on the run line, after `endLocal`;
 * - cmd-shim 4.1 to 9.0.1 (npm 7 to 10): the `:find_dp0` subroutine first, `endLocal & goto … & "%_prog%" …`;
 * - cmd-shim 3 and 4.0 (late npm 6): the subroutine last, `"%_prog%" …` then `ENDLOCAL` and `EXIT /b %errorlevel%`;
 * - cmd-shim 2.1: `SETLOCAL` first, `_prog` set from `%~dp0`, `"%_prog%" …` then `ENDLOCAL`;
 * - cmd-shim 1 to 2.0 (npm 5 and early 6, yarn 1): `"%~dp0\node.exe" …` or `node …`, with `SETLOCAL` and the
 *   PATHEXT change in the ELSE; the oldest without them (after a `:: Created by npm` comment); pnpm's old one with
 *   `SETLOCAL` first.
 */
const shimForms: readonly (readonly ShimLine[])[] = [
  [...dp0Head, ...progIf, ")", { run: "progEndPathext" }],
  [...dp0Head, ...progIf, pathExtLine, ")", { run: "progEnd" }],
  ["ECHO off", "SETLOCAL", "CALL :find_dp0", ...progIf, pathExtLine, ")", { run: "prog" }, "ENDLOCAL", "EXIT /b %errorlevel%", ":find_dp0", "SET dp0=%~dp0", "EXIT /b"],
  ["SETLOCAL", oldIf, 'SET "_prog=%~dp0\\node.exe"', ") ELSE (", 'SET "_prog=node"', pathExtLine, ")", { run: "progDp0" }, "ENDLOCAL"],
  [oldIf, { run: "dp0NodeExe" }, ") ELSE (", "SETLOCAL", pathExtLine, { run: "dp0Node" }, ")"],
  [oldIf, { run: "dp0NodeExe" }, ") ELSE (", { run: "dp0Node" }, ")"],
  ["SETLOCAL", oldIf, { run: "dp0NodeExe" }, ") ELSE (", pathExtLine, { run: "dp0Node" }, ")"],
];

/** Node's own arguments from a shebang (`--expose-gc`): plain words only, nothing cmd.exe would read. */
const nodeArgs = String.raw`((?:\s+[A-Za-z0-9_\-=.,:+/]+)*)`;
const endLocal = String.raw`endLocal\s+&\s+goto\s+#_undefined_#\s+2>NUL\s+\|\|\s+title\s+%COMSPEC%\s+&\s+`;
const target = (dp0: string) => String.raw`\s+"${dp0}\\([^"%\r\n]+)"\s+%\*`;
const runLines: Record<Exclude<ShimLine, string>["run"], RegExp> = {
  prog: new RegExp(String.raw`^"%_prog%"${nodeArgs}${target("%dp0%")}$`, "i"),
  progEnd: new RegExp(String.raw`^${endLocal}"%_prog%"${nodeArgs}${target("%dp0%")}$`, "i"),
  progDp0: new RegExp(String.raw`^"%_prog%"${nodeArgs}${target("%~dp0")}$`, "i"),
  progEndPathext: new RegExp(String.raw`^${endLocal}set\s+PATHEXT=%PATHEXT:;\.JS;=;%\s+&\s+"%_prog%"${nodeArgs}${target("%dp0%")}$`, "i"),
  dp0NodeExe: new RegExp(String.raw`^"%~dp0\\node\.exe"${nodeArgs}${target("%~dp0")}$`, "i"),
  dp0Node: new RegExp(String.raw`^node${nodeArgs}${target("%~dp0")}$`, "i"),
};

/** A literal line as compared: blanks collapsed, case ignored. */
const literal = (line: string) => line.replace(/\s+/g, " ").toLowerCase();

/**
 * Reads an npm JavaScript shim: every line must be a line of one of the forms npm has written (`shimForms`), in
 * order, and every run line must run node with the same arguments and entry. Anything else (another program than
 * node, variables set from the shebang, a hand-written batch file, an absolute or drive-relative entry) is null: it
 * is not a shim, and cmd.exe alone could say what it does.
 * @returns node's arguments and the entry relative to the shim's folder, or null.
 */
export function parseNpmShim(text: string): NpmShim | null {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/).map((l) => l.trim().replace(/^@/, "").trim())
    .filter((l) => l.length > 0 && !l.startsWith("::"));
  for (const form of shimForms) {
    if (form.length !== lines.length) continue;
    let found: NpmShim | null = null;
    let ok = true;
    for (let i = 0; i < form.length && ok; i++) {
      const want = form[i]!;
      const line = lines[i]!;
      if (typeof want === "string") {
        ok = literal(want) === literal(line);
        continue;
      }
      const m = runLines[want.run].exec(line);
      if (!m) {
        ok = false;
        continue;
      }
      const run: NpmShim = { nodeArgs: m[1]!.trim().split(/\s+/).filter(Boolean), entry: m[2]! };
      if (found && (found.entry !== run.entry || found.nodeArgs.join(" ") !== run.nodeArgs.join(" "))) ok = false;
      found = run;
    }
    if (!ok || !found) continue;
    if (win32.isAbsolute(found.entry) || found.entry.includes(":")) return null;
    return found;
  }
  return null;
}

/** Windows PowerShell: `%SystemRoot%\System32\WindowsPowerShell\v1.0\powershell.exe`, else `powershell.exe` on PATH. */
export function findPowerShell(env: WindowsEnv, files: WindowsFiles): string | null {
  const root = envValue(env, "SystemRoot") ?? envValue(env, "windir");
  if (root) {
    const system = win32.join(root, "System32", "WindowsPowerShell", "v1.0", "powershell.exe");
    if (files.isFile(system)) return system;
  }
  return findWindowsProgram("powershell.exe", env, files, undefined, [".exe"]);
}

/**
 * The Windows launch rules: finds `name` (`findWindowsProgram`) and says how to start it with `args`, or why not.
 * - `.exe`, `.com`: the file itself.
 * - `.ps1`: `powershell.exe -NoProfile -ExecutionPolicy Bypass -File <script> args…` (`findPowerShell`).
 * - `.cmd`, `.bat` that is an npm JavaScript shim (`parseNpmShim`): node (the `node.exe` beside the shim when there is
 *   one, as the shim does, else `node.exe`/`node.com` on PATH) with the shebang's arguments, the entry resolved against
 *   the shim's folder, then `args`. Refused when there is no node or the entry is missing.
 * - any other `.cmd`, `.bat`: refused (`batch`); any other extension (`.js`, `.vbs`, …): refused (`unsupported`).
 * @param cwd the folder relative names with a folder part (`.\bin\x`) are resolved against.
 */
export function windowsLaunch(name: string, args: readonly string[], env: WindowsEnv, files: WindowsFiles, options: { cwd?: string; lang?: Lang } = {}): LaunchRule {
  const lang = options.lang ?? "en";
  const found = findWindowsProgram(name, env, files, options.cwd);
  if (!found) return refuse(lang, "notFound", { program: name });
  const ext = win32.extname(found).toLowerCase();
  if (ext === ".exe" || ext === ".com") return { launch: { file: found, args: [...args] } };
  if (ext === ".ps1") {
    const ps = findPowerShell(env, files);
    if (!ps) return refuse(lang, "noPowerShell", { program: found });
    return { launch: { file: ps, args: ["-NoProfile", "-ExecutionPolicy", "Bypass", "-File", found, ...args] } };
  }
  if (ext === ".cmd" || ext === ".bat") {
    const text = files.read(found);
    const shim = text === null ? null : parseNpmShim(text);
    if (!shim) return refuse(lang, "batch", { program: found });
    const folder = win32.dirname(found);
    const entry = win32.resolve(folder, shim.entry);
    if (!files.isFile(entry)) return refuse(lang, "noEntry", { program: found, entry });
    const beside = win32.join(folder, "node.exe");
    const node = files.isFile(beside) ? beside : findWindowsProgram("node", env, files, options.cwd, [".com", ".exe"]);
    if (!node) return refuse(lang, "noNode", { program: found });
    return { launch: { file: node, args: [...shim.nodeArgs, entry, ...args] } };
  }
  return refuse(lang, "unsupported", { program: found, ext });
}

function refuse(lang: Lang, refused: LaunchRefusal, params: Record<string, string | number>): LaunchRule {
  return { refused, text: render(lang, { id: `launch.${refused}`, params }) };
}

/**
 * One argument as libuv quotes it for CreateProcessW (`quote_cmd_arg`, the MSVCRT / CommandLineToArgvW rules): as it
 * is when it has no space, tab or double quote (and is not empty); in double quotes when it has no quote or
 * backslash; otherwise in double quotes with each `"` preceded by a backslash and the backslashes that precede a
 * quote or the closing quote doubled. Line breaks and other characters (Chinese) are left as they are.
 */
export function quoteWindowsArg(arg: string): string {
  if (arg.length === 0) return '""';
  if (!/[ \t"]/.test(arg)) return arg;
  if (!/["\\]/.test(arg)) return `"${arg}"`;
  let out = "";
  let slashes = 0;
  for (const ch of arg) {
    if (ch === "\\") {
      slashes++;
      continue;
    }
    out += ch === '"' ? "\\".repeat(slashes * 2 + 1) + '"' : "\\".repeat(slashes) + ch;
    slashes = 0;
  }
  return `"${out}${"\\".repeat(slashes * 2)}"`;
}

/** The command line libuv builds from an argv on Windows (Node's spawn without a shell): each argument quoted, spaced. */
export function windowsCommandLine(argv: readonly string[]): string {
  return argv.map(quoteWindowsArg).join(" ");
}

/** The real file system for the Windows rules (used on win32; on Linux only in tests with temporary files). */
export const windowsFiles: WindowsFiles = {
  isFile(path) {
    try {
      return statSync(path).isFile();
    } catch {
      return false;
    }
  },
  read(path) {
    try {
      if (statSync(path).size > npmShimMaxBytes) return null;
      return readFileSync(path, "utf8");
    } catch {
      return null;
    }
  },
};

/**
 * The argv to spawn (without a shell) for `argv` on this system. On win32 the first word goes through the Windows
 * launch rules (`windowsLaunch`) and the command line must fit `windowsCommandLineMaxChars`; elsewhere `argv` is
 * returned as it is (Unix finds programs through PATH itself).
 * @param options.env the environment the program will get (PATH, PATHEXT, SystemRoot); the process's by default.
 * @param options.cwd the folder the program will run in (relative names with a folder part resolve against it).
 * @returns `{ argv }`, or `{ error }` saying in `lang` why it cannot be started.
 */
export function launchArgv(argv: readonly string[], options: {
  platform?: NodeJS.Platform; env?: WindowsEnv; cwd?: string; lang?: Lang; files?: WindowsFiles;
} = {}): { argv: string[] } | { error: string } {
  const platform = options.platform ?? process.platform;
  if (platform !== "win32" || argv.length === 0) return { argv: [...argv] };
  const env = options.env ?? process.env;
  const lang = options.lang ?? langFromEnv(process.env);
  const rule = windowsLaunch(argv[0]!, argv.slice(1), env, options.files ?? windowsFiles, { cwd: options.cwd ?? process.cwd(), lang });
  if ("refused" in rule) return { error: rule.text };
  const out = [rule.launch.file, ...rule.launch.args];
  const length = windowsCommandLine(out).length;
  if (length > windowsCommandLineMaxChars) return { error: t(lang, "launch.tooLong", { program: argv[0]!, length, limit: windowsCommandLineMaxChars }) };
  return { argv: out };
}
