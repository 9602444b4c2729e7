/**
 * A run's Job Object on Windows (protocol.md 结构与实测 and the Agent section's stop rule; plugins.md Windows 原生运行):
 * the supervisor starts the agent through the fixed PowerShell script `windows-job.ps1`, which creates the agent
 * suspended, puts it in a new Job Object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, lets it run, and on a stop request
 * (a `stop` file in the launch folder) or the agent's exit ends every process of the job, waits until none is left,
 * and exits with the agent's exit code. The launch reaches the script as data only: one line of base64 of UTF-8 JSON
 * (`JobPayload`) on its standard input; the script's text never changes.
 *
 * The pieces here are pure (paths with `path.win32`), so they are tested on Linux; supervisor-main.ts and
 * supervise.ts use them when `process.platform === "win32"`.
 */
import { join, win32 } from "node:path";
import { engineDir } from "../common/paths.js";
import { t, type Lang } from "../i18n/messages.js";
import { windowsCommandLine } from "../sdk/launch.js";

/** The script, as text in the repository (never generated or edited at run time). */
export const windowsJobScript = join(engineDir, "src", "worker", "windows-job.ps1");

/** The file the worker creates in a launch folder to stop that launch (the script polls for it). */
export const stopRequestFile = "stop";

/** The file the script writes in a launch folder: `{"pid":N}` once the agent runs, `{"error":"…"}` when it could not start. */
export const jobStatusFile = "job.json";

/** The exit code the script gives a stopped agent (the code TerminateJobObject leaves, as libuv's kill does). */
export const stoppedExitCode = 1;

/** The exit code of the script when it could not start the agent (its status file says why). */
export const jobHostFailedExitCode = 127;

/**
 * The variables libuv adds to a child's environment on Windows when its `env` lacks them (uv_spawn's
 * `required_vars`: Winsock fails without SYSTEMROOT). The script keeps them as a direct spawn would.
 */
export const windowsRequiredEnv: readonly string[] = [
  "HOMEDRIVE", "HOMEPATH", "LOGONSERVER", "PATH", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERDOMAIN", "USERNAME",
  "USERPROFILE", "WINDIR",
];

/** The launch the script reads (see windows-job.ps1 for each field). */
export interface JobPayload {
  application: string;
  commandLine: string;
  cwd: string;
  keep: string[];
  stop: string;
  status: string;
  stopGraceMs: number;
}

/**
 * The launch of `argv` in launch folder `dir` (a Windows path): `argv[0]` is the program as the Windows launch rules
 * resolved it (src/sdk/launch.ts `launchArgv`), the command line is built as Node's spawn builds one, and `keep`
 * names the agent's variables plus `windowsRequiredEnv` (once each, without regard to case, in order).
 */
export function jobPayload(argv: readonly string[], cwd: string, envNames: readonly string[], dir: string, stopGraceMs: number): JobPayload {
  if (argv.length === 0) throw new Error("jobPayload: argv is empty");
  const keep: string[] = [];
  const seen = new Set<string>();
  for (const name of [...envNames, ...windowsRequiredEnv]) {
    if (seen.has(name.toUpperCase())) continue;
    seen.add(name.toUpperCase());
    keep.push(name);
  }
  return {
    application: argv[0]!,
    commandLine: windowsCommandLine(argv),
    cwd,
    keep,
    stop: win32.join(dir, stopRequestFile),
    status: win32.join(dir, jobStatusFile),
    stopGraceMs,
  };
}

/** The payload as the script reads it: base64 of its UTF-8 JSON, one line. */
export function encodeJobPayload(payload: JobPayload): string {
  return Buffer.from(JSON.stringify(payload), "utf8").toString("base64") + "\n";
}

/**
 * The payload back from its line (what the script does with FromBase64String and ConvertFrom-Json); throws naming the
 * field when it is not a whole, well-formed payload.
 */
export function decodeJobPayload(line: string): JobPayload {
  const text = line.trim();
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new Error("job payload: not base64");
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(Buffer.from(text, "base64").toString("utf8")) as Record<string, unknown>;
  } catch {
    throw new Error("job payload: not JSON");
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("job payload: not an object");
  for (const field of ["application", "commandLine", "cwd", "stop", "status"] as const) {
    if (typeof value[field] !== "string" || value[field] === "") throw new Error(`job payload: ${field} must be a non-empty string`);
  }
  if (!Array.isArray(value.keep) || value.keep.some((n) => typeof n !== "string")) throw new Error("job payload: keep must be a list of names");
  if (typeof value.stopGraceMs !== "number" || !Number.isSafeInteger(value.stopGraceMs) || value.stopGraceMs < 0) throw new Error("job payload: stopGraceMs must be a whole number of milliseconds");
  return value as unknown as JobPayload;
}

/**
 * The argv that starts the script: Windows PowerShell without profile, prompts or a logo, with this one script
 * allowed whatever the execution policy, and nothing of the launch on its command line.
 */
export function jobHostArgv(powershell: string, script = windowsJobScript): string[] {
  return [powershell, "-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File", script];
}

/**
 * What the supervisor records when the script has exited with `code`, given its status file's text (null when it
 * wrote none): the agent's exit code when the agent ran; otherwise `jobHostFailedExitCode` and an error in `lang`
 * (the script's own reason, or that it ended before starting the agent).
 */
export function jobExit(code: number | null, status: string | null, lang: Lang): { code: number | null; error: string | null } {
  let parsed: { pid?: unknown; error?: unknown } | null = null;
  try {
    parsed = status === null ? null : (JSON.parse(status) as { pid?: unknown; error?: unknown });
  } catch {
    parsed = null;
  }
  if (parsed && typeof parsed.pid === "number") return { code, error: null };
  if (parsed && typeof parsed.error === "string") return { code: jobHostFailedExitCode, error: t(lang, "launch.jobFailed", { error: parsed.error }) };
  return { code: jobHostFailedExitCode, error: t(lang, "launch.jobEnded", { code: code === null ? "?" : code }) };
}
