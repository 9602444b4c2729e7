/**
 * The service definitions `install` writes (issue 28), checked without their OS: the systemd unit's quoting read back
 * (its real use is in tests/service-systemd.test.ts), the launchd plist against launchd.plist(5)'s documented keys and
 * parsed by libplist's `plistutil`, the Task Scheduler XML parsed by libxml2's `xmllint` (Debian packages
 * libplist-utils and libxml2-utils; .ci/run installs them), the Windows launcher's quoting. What cannot run here —
 * launchctl, schtasks, wscript — was not run; README "Run it as a service" says so.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import {
  launchdPlist, serviceEnvPath, systemdEnvironmentFile, systemdQuote, systemdUnit, vbsString, windowsLauncher, windowsTaskXml,
  type ServicePlan,
} from "../src/cli/service/files.js";
import { homeOfUnit, windowsCommandShim } from "../src/cli/service/managers.js";

const odd = "/home/李 雷/my \"agent\" 100%$HOME\\x";
const plan = (home: string): ServicePlan => ({ home, engine: "/opt/agent autoloop", node: "/usr/bin/node", path: "/home/u/.local/bin:/usr/bin:/bin" });

test("the systemd unit: every value quoted, the home read back exactly, the documented settings", () => {
  for (const home of ["/home/u/.agent-autoloop", odd, "/srv/a%b$c"]) {
    const unit = systemdUnit(plan(home));
    assert.equal(homeOfUnit(unit), home);
  }
  const unit = systemdUnit(plan("/home/u/.agent-autoloop"));
  const lines = unit.split("\n");
  for (const want of ["Restart=on-failure", "RestartSec=5", "KillMode=mixed", "TimeoutStopSec=30", "Type=simple", "WantedBy=default.target",
    'ExecStart="/usr/bin/node" "/opt/agent autoloop/bin/agent-autoloop.js" serve', "EnvironmentFile=-/home/u/.agent-autoloop/service.env"]) {
    assert.ok(lines.includes(want), `${want} in\n${unit}`);
  }
  assert.equal(systemdQuote("a%b$c\"d\\e"), '"a%%b$$c\\"d\\\\e"');
  assert.throws(() => systemdQuote("a\nb"), /line break/);
  assert.equal(serviceEnvPath("/h"), "/h/service.env");
  assert.equal(systemdEnvironmentFile({ ...plan("/h"), path: '/a b:/c"d' }).split("\n")[1], 'PATH="/a b:/c\\"d"');
});

/** A minimal reader of the XML plist `launchdPlist` writes: the top dict's keys with their value's type and value. */
function plistTop(xml: string): Map<string, { type: string; value: unknown }> {
  const body = /<plist version="1\.0">\s*<dict>([\s\S]*)<\/dict>\s*<\/plist>/.exec(xml)![1]!;
  const out = new Map<string, { type: string; value: unknown }>();
  const entry = /<key>([^<]+)<\/key>\s*(<string>([^<]*)<\/string>|<(true|false)\/>|<integer>(-?\d+)<\/integer>|<array>([\s\S]*?)<\/array>|<dict>([\s\S]*?)<\/dict>)/g;
  const unescape = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&");
  for (const m of body.matchAll(entry)) {
    if (m[3] !== undefined) out.set(m[1]!, { type: "string", value: unescape(m[3]) });
    else if (m[4]) out.set(m[1]!, { type: "boolean", value: m[4] === "true" });
    else if (m[5]) out.set(m[1]!, { type: "integer", value: Number(m[5]) });
    else if (m[6] !== undefined) out.set(m[1]!, { type: "array", value: [...m[6].matchAll(/<string>([^<]*)<\/string>/g)].map((x) => unescape(x[1]!)) });
    else out.set(m[1]!, { type: "dict", value: Object.fromEntries([...m[7]!.matchAll(/<key>([^<]+)<\/key>\s*<string>([^<]*)<\/string>/g)].map((x) => [x[1]!, unescape(x[2]!)])) });
  }
  return out;
}

/** launchd.plist(5): the keys the plist uses, with the type the manual gives each. */
const launchdKeys: Record<string, string[]> = {
  Label: ["string"], ProgramArguments: ["array"], EnvironmentVariables: ["dict"], WorkingDirectory: ["string"], RunAtLoad: ["boolean"],
  KeepAlive: ["boolean", "dict"], ThrottleInterval: ["integer"], ProcessType: ["string"], StandardOutPath: ["string"], StandardErrorPath: ["string"],
};

test("the launchd plist: only documented keys of the documented types, the home and PATH read back, and libplist parses it", () => {
  const xml = launchdPlist(plan(odd));
  const top = plistTop(xml);
  assert.deepEqual([...top.keys()].sort(), Object.keys(launchdKeys).sort());
  for (const [key, { type }] of top) assert.ok(launchdKeys[key]!.includes(type), `${key}: ${type}`);
  assert.equal(top.get("Label")!.value, "dev.agent-autoloop.hub");
  assert.deepEqual(top.get("ProgramArguments")!.value, ["/usr/bin/node", "/opt/agent autoloop/bin/agent-autoloop.js", "serve"]);
  assert.deepEqual(top.get("EnvironmentVariables")!.value, { AGENT_AUTOLOOP_HOME: odd, PATH: "/home/u/.local/bin:/usr/bin:/bin" });
  assert.equal(top.get("RunAtLoad")!.value, true);
  assert.equal(top.get("KeepAlive")!.value, true);
  assert.ok(["Background", "Standard", "Adaptive", "Interactive"].includes(top.get("ProcessType")!.value as string));
  assert.equal(top.get("StandardOutPath")!.value, `${odd}/logs/hub.log`);
  const dir = tempDir();
  try {
    writeFileSync(join(dir, "a.plist"), xml);
    const toBinary = spawnSync("plistutil", ["-i", join(dir, "a.plist"), "-o", join(dir, "a.bin")], { encoding: "utf8" });
    assert.equal(toBinary.error, undefined, "plistutil (Debian: libplist-utils) is needed");
    assert.equal(toBinary.status, 0, toBinary.stderr);
    const back = spawnSync("plistutil", ["-i", join(dir, "a.bin")], { encoding: "utf8" });
    assert.equal(back.status, 0, back.stderr);
    assert.deepEqual(plistTop(back.stdout).get("EnvironmentVariables")!.value, { AGENT_AUTOLOOP_HOME: odd, PATH: "/home/u/.local/bin:/usr/bin:/bin" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the Task Scheduler XML, written as UTF-16 as schtasks reads it, is well-formed XML with the logon trigger and the hidden launcher", () => {
  const home = "C:\\Users\\李雷\\.agent-autoloop & co";
  const xml = windowsTaskXml({ ...plan(home), engine: "C:\\agent-autoloop", node: "C:\\Program Files\\nodejs\\node.exe" }, "PC\\李雷");
  const dir = tempDir();
  try {
    const file = join(dir, "task.xml");
    writeFileSync(file, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, "utf16le")]));
    const lint = spawnSync("xmllint", ["--noout", file], { encoding: "utf8" });
    assert.equal(lint.error, undefined, "xmllint (Debian: libxml2-utils) is needed");
    assert.equal(lint.status, 0, lint.stderr);
    const q = (path: string) => spawnSync("xmllint", ["--xpath", `string(${path})`, file], { encoding: "utf8" }).stdout.replace(/\n$/, "");
    const ns = "/*[local-name()='Task']";
    assert.equal(q(`${ns}/*[local-name()='Triggers']/*[local-name()='LogonTrigger']/*[local-name()='UserId']`), "PC\\李雷");
    assert.equal(q(`${ns}/*[local-name()='Actions']/*[local-name()='Exec']/*[local-name()='Command']`), "wscript.exe");
    assert.equal(q(`${ns}/*[local-name()='Actions']/*[local-name()='Exec']/*[local-name()='Arguments']`), `//B //Nologo "${home}\\service\\agent-autoloop.vbs"`);
    assert.equal(q(`${ns}/*[local-name()='Settings']/*[local-name()='Hidden']`), "true");
    assert.equal(q(`${ns}/*[local-name()='Settings']/*[local-name()='ExecutionTimeLimit']`), "PT0S");
    assert.equal(q(`${ns}/*[local-name()='Principals']/*[local-name()='Principal']/*[local-name()='RunLevel']`), "LeastPrivilege");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the Windows launcher: quoted for VBScript and cmd.exe, restarts after 10 s, refuses what cmd.exe would read", () => {
  const p = { home: "C:\\Users\\Li Lei\\.agent-autoloop", engine: "C:\\src\\agent-autoloop", node: "C:\\Program Files\\nodejs\\node.exe", path: "" };
  const vbs = windowsLauncher(p);
  assert.ok(vbs.includes('shell.Environment("PROCESS")("AGENT_AUTOLOOP_HOME") = "C:\\Users\\Li Lei\\.agent-autoloop"'), vbs);
  assert.ok(vbs.includes('  shell.Run "cmd.exe /d /s /c """"C:\\Program Files\\nodejs\\node.exe"" ""C:\\src\\agent-autoloop\\bin\\agent-autoloop.js"" serve >> ""C:\\Users\\Li Lei\\.agent-autoloop\\logs\\hub.log"" 2>&1""", 0, True'), vbs);
  assert.ok(vbs.includes("  WScript.Sleep 10000"), vbs);
  assert.equal(vbs.split("\r\n").every((l) => !l.includes("\n")), true);
  assert.equal(vbsString('a"b'), '"a""b"');
  assert.throws(() => windowsLauncher({ ...p, home: "C:\\100%" }), /cannot hold/);
  assert.throws(() => windowsLauncher({ ...p, engine: 'C:\\a"b' }), /cannot hold/);
  assert.equal(windowsCommandShim(p), '@"C:\\Program Files\\nodejs\\node.exe" "C:\\src\\agent-autoloop\\bin\\agent-autoloop.js" %*\r\n');
});
