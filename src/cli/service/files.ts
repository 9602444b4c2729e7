/**
 * The files that make the hub a per-user service (issue 28; protocol.md 结构与实测): a systemd user unit on Linux, a
 * launchd agent on macOS, a scheduled task with a hidden launcher on Windows. Pure text generators: what `install`
 * writes, compared byte for byte with what is there so a second `install` changes nothing.
 *
 * Every service runs the same command: `<node> <engine>/bin/agent-autoloop.js serve` with `AGENT_AUTOLOOP_HOME` set,
 * so one service serves one home (the service name is one per user; `install` refuses when it holds another home).
 */
import { posix, win32 } from "node:path";
import { langFromEnv, t, type Lang } from "../../i18n/messages.js";

/** The name of the service: systemd unit `agent-autoloop.service`, Windows task `agent-autoloop`. */
export const serviceName = "agent-autoloop";
/** The launchd label (reverse-DNS, as launchd.plist(5) asks); the plist is `<label>.plist`. */
export const launchdLabel = "dev.agent-autoloop.hub";
/** How long systemd waits after the hub exited on a failure before it starts it again (s). */
export const systemdRestartSec = 5;
/** How long systemd waits for the hub to stop after SIGTERM before it kills what is left (s). */
export const systemdStopTimeoutSec = 30;
/** How long the Windows launcher waits after the hub exited before it starts it again (ms; protocol.md: 10 s). */
export const windowsRestartDelayMs = 10_000;
/** launchd's minimum time between two starts of the hub (s): a hub that exits at once is not started in a loop. */
export const launchdThrottleSec = 10;

/** What a service definition needs; every path absolute, in the conventions of the OS the service is for. */
export interface ServicePlan {
  /** The home the hub serves (`AGENT_AUTOLOOP_HOME`). */
  home: string;
  /** The engine's folder (a checkout or an unpacked release: bin/, dist/, node_modules/). */
  engine: string;
  /** The node executable. */
  node: string;
  /** PATH for the hub and the agents it starts: the user's login shell PATH (Unix) read at install. */
  path: string;
  /** The language of the errors for a value no service file can hold (the process's, from its environment, when absent). */
  lang?: Lang;
}

/** The language of a plan's errors. */
const langOf = (plan: ServicePlan): Lang => plan.lang ?? langFromEnv(process.env);

/**
 * A value for a systemd unit's command line or assignment: in double quotes, with `\` and `"` escaped, `%` doubled
 * (specifiers) and `$` doubled (variable expansion in ExecStart), per systemd.syntax(7) and systemd.service(5).
 * @throws Error for a value with a line break or a NUL, which no unit file line can hold.
 */
export function systemdQuote(value: string, lang: Lang = langFromEnv(process.env)): string {
  if (/[\n\r\0]/.test(value)) throw new Error(t(lang, "service.systemdLineBreak", { value: JSON.stringify(value) }));
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%").replace(/\$/g, "$$$$")}"`;
}

/** The environment file the unit reads (`EnvironmentFile=`): PATH, in systemd's quoting (no `%` or `$` expansion there). */
export function systemdEnvironmentFile(plan: ServicePlan): string {
  if (/[\n\r\0]/.test(plan.path)) throw new Error(t(langOf(plan), "service.pathLineBreak"));
  const quoted = `"${plan.path.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  return `# Written by agent-autoloop install and refreshed by agent-autoloop doctor: the PATH of your login shell.\nPATH=${quoted}\n`;
}

/** Where the unit reads its environment: `<home>/service.env`, hidden from agents with the rest of the home. */
export function serviceEnvPath(home: string): string {
  return posix.join(home, "service.env");
}

/**
 * The systemd user unit (systemd.service(5), systemd.kill(5)). `Restart=on-failure` starts the hub again after a
 * crash, a SIGKILL or an exit with a failure code (74: its log could not be written); a `systemctl --user stop`
 * ends it with SIGTERM. `KillMode=mixed`: the stop's SIGTERM goes to the hub alone, which stops its worker and
 * channels; what is left of the unit's processes afterwards (the runs' supervisors and agents) gets SIGKILL, so a
 * stop leaves nothing behind. Output goes to the journal (`journalctl --user -u agent-autoloop`).
 */
export function systemdUnit(plan: ServicePlan): string {
  const bin = posix.join(plan.engine, "bin", "agent-autoloop.js");
  return [
    `# Written by agent-autoloop install for the home ${plan.home}; agent-autoloop uninstall removes it.`,
    "[Unit]",
    `Description=agent-autoloop hub, local worker and channels (${plan.home.replace(/%/g, "%%")})`,
    `Documentation=${`file://${encodeURI(posix.join(plan.engine, "README.md"))}`.replace(/%/g, "%%")}`,
    "",
    "[Service]",
    "Type=simple",
    `Environment=${systemdQuote(`AGENT_AUTOLOOP_HOME=${plan.home}`, langOf(plan))}`,
    `EnvironmentFile=-${serviceEnvPath(plan.home).replace(/%/g, "%%")}`,
    `ExecStart=${systemdQuote(plan.node, langOf(plan))} ${systemdQuote(bin, langOf(plan))} serve`,
    "Restart=on-failure",
    `RestartSec=${systemdRestartSec}`,
    "KillMode=mixed",
    `TimeoutStopSec=${systemdStopTimeoutSec}`,
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ].join("\n");
}

/** Text for an XML document: `&`, `<`, `>`, `"` and `'` as entities. @throws Error for characters XML 1.0 cannot hold. */
export function xmlText(value: string, lang: Lang = langFromEnv(process.env)): string {
  if (/[\0-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/.test(value)) throw new Error(t(lang, "service.xmlControl", { value: JSON.stringify(value) }));
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

/** Where launchd writes the hub's output on macOS: `<home>/logs/hub.log` (the home is 0700). */
export function launchdLogPath(home: string): string {
  return posix.join(home, "logs", "hub.log");
}

/**
 * The launchd agent (launchd.plist(5)): started at login (`RunAtLoad`), started again whenever it exits
 * (`KeepAlive`), at most every `launchdThrottleSec`; output appended to `launchdLogPath`.
 */
export function launchdPlist(plan: ServicePlan): string {
  const string = (s: string) => `<string>${xmlText(s, langOf(plan))}</string>`;
  const log = launchdLogPath(plan.home);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    "<dict>",
    `  <key>Label</key>${string(launchdLabel)}`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    `    ${string(plan.node)}`,
    `    ${string(posix.join(plan.engine, "bin", "agent-autoloop.js"))}`,
    `    ${string("serve")}`,
    "  </array>",
    "  <key>EnvironmentVariables</key>",
    "  <dict>",
    `    <key>AGENT_AUTOLOOP_HOME</key>${string(plan.home)}`,
    `    <key>PATH</key>${string(plan.path)}`,
    "  </dict>",
    `  <key>WorkingDirectory</key>${string(plan.home)}`,
    "  <key>RunAtLoad</key><true/>",
    "  <key>KeepAlive</key><true/>",
    `  <key>ThrottleInterval</key><integer>${launchdThrottleSec}</integer>`,
    "  <key>ProcessType</key><string>Background</string>",
    `  <key>StandardOutPath</key>${string(log)}`,
    `  <key>StandardErrorPath</key>${string(log)}`,
    "</dict>",
    "</plist>",
    "",
  ].join("\n");
}

/** A string literal of VBScript: in double quotes, each `"` doubled. @throws Error for a line break (a VBS literal cannot hold one). */
export function vbsString(value: string, lang: Lang = langFromEnv(process.env)): string {
  if (/[\n\r\0]/.test(value)) throw new Error(t(lang, "service.vbsLineBreak", { value: JSON.stringify(value) }));
  return `"${value.replace(/"/g, '""')}"`;
}

/** Where the Windows launcher and the hub's log live: `<home>\service\agent-autoloop.vbs`, `<home>\logs\hub.log`. */
export function windowsPaths(home: string): { launcher: string; log: string } {
  return { launcher: win32.join(home, "service", "agent-autoloop.vbs"), log: win32.join(home, "logs", "hub.log") };
}

/**
 * The hidden launcher the scheduled task starts with `wscript.exe` (protocol.md 结构与实测): it runs the hub with no
 * window, its output appended to the log, and starts it again `windowsRestartDelayMs` after every exit. Paths reach
 * cmd.exe only inside double quotes; a path holding `"` or `%` (which cmd would read) is refused.
 * @throws Error for a path cmd.exe cannot take safely.
 */
export function windowsLauncher(plan: ServicePlan): string {
  const { log } = windowsPaths(plan.home);
  const bin = win32.join(plan.engine, "bin", "agent-autoloop.js");
  for (const p of [plan.node, bin, log, plan.home]) {
    if (/["%\n\r\0]/.test(p)) throw new Error(t(langOf(plan), "service.cmdPath", { path: p }));
  }
  // cmd /d /s /c "…": /s takes the outer quotes off and keeps the rest as written.
  const command = `cmd.exe /d /s /c ""${plan.node}" "${bin}" serve >> "${log}" 2>&1"`;
  return [
    "' Written by agent-autoloop install: runs the hub hidden and starts it again 10 s after it exits.",
    "Option Explicit",
    "Dim shell",
    'Set shell = CreateObject("WScript.Shell")',
    `shell.Environment("PROCESS")("AGENT_AUTOLOOP_HOME") = ${vbsString(plan.home, langOf(plan))}`,
    "Do",
    `  shell.Run ${vbsString(command, langOf(plan))}, 0, True`,
    `  WScript.Sleep ${windowsRestartDelayMs}`,
    "Loop",
    "",
  ].join("\r\n");
}

/**
 * The scheduled task (Task Scheduler schema 1.2): at the user's logon, as that user without elevation, runs the hidden
 * launcher with `wscript.exe`; one instance at a time, no time limit, on battery too.
 * @param user the account as `DOMAIN\name` (or `name`).
 */
export function windowsTaskXml(plan: ServicePlan, user: string): string {
  const { launcher } = windowsPaths(plan.home);
  return [
    '<?xml version="1.0" encoding="UTF-16"?>',
    '<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">',
    "  <RegistrationInfo>",
    `    <Description>${xmlText(`agent-autoloop hub, local worker and channels (${plan.home})`, langOf(plan))}</Description>`,
    "  </RegistrationInfo>",
    "  <Triggers>",
    "    <LogonTrigger>",
    "      <Enabled>true</Enabled>",
    `      <UserId>${xmlText(user, langOf(plan))}</UserId>`,
    "    </LogonTrigger>",
    "  </Triggers>",
    "  <Principals>",
    '    <Principal id="Author">',
    `      <UserId>${xmlText(user, langOf(plan))}</UserId>`,
    "      <LogonType>InteractiveToken</LogonType>",
    "      <RunLevel>LeastPrivilege</RunLevel>",
    "    </Principal>",
    "  </Principals>",
    "  <Settings>",
    "    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>",
    "    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>",
    "    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>",
    "    <AllowHardTerminate>true</AllowHardTerminate>",
    "    <StartWhenAvailable>true</StartWhenAvailable>",
    "    <AllowStartOnDemand>true</AllowStartOnDemand>",
    "    <Enabled>true</Enabled>",
    "    <Hidden>true</Hidden>",
    "    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>",
    "    <Priority>7</Priority>",
    "  </Settings>",
    '  <Actions Context="Author">',
    "    <Exec>",
    "      <Command>wscript.exe</Command>",
    `      <Arguments>${xmlText(`//B //Nologo "${launcher}"`, langOf(plan))}</Arguments>`,
    "    </Exec>",
    "  </Actions>",
    "</Task>",
    "",
  ].join("\r\n");
}
