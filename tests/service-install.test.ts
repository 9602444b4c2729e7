/**
 * `install` and `uninstall` where they must refuse or undo (issue 28), outside a systemd container: the real CLI where
 * no user systemd can be reached (this machine, or any with the session bus taken away), and the install steps around
 * a service manager that fails at the last step (a stand-in for systemctl: the real one runs in
 * tests/service-systemd.test.ts, where a refused registration cannot be provoked).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engine, tempDir } from "./helpers.js";
import { homePaths } from "../src/common/paths.js";
import { install, uninstall } from "../src/cli/service/install.js";
import type { ServiceFile, ServiceManager } from "../src/cli/service/managers.js";
import type { ServicePlan } from "../src/cli/service/files.js";

const cli = join(engine, "bin", "agent-autoloop.js");

/** The CLI with HOME and the home in `dir`, and no session bus: `systemctl --user` cannot reach a user manager. */
function run(dir: string, args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir, AGENT_AUTOLOOP_HOME: join(dir, "home"), AGENT_AUTOLOOP_LANG: "en", XDG_CONFIG_HOME: "" };
  delete env.XDG_RUNTIME_DIR;
  delete env.DBUS_SESSION_BUS_ADDRESS;
  return spawnSync(process.execPath, [cli, ...args], { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

test("install --yes where no service manager can be used says why and what to do instead, exits 1, and writes nothing", { skip: process.platform !== "linux" }, () => {
  const dir = tempDir();
  try {
    const r = run(dir, ["install", "--yes"]);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^agent-autoloop: cannot install as a service: (there is no systemd user manager for this user \(a container, WSL without systemd, or no login session\): .+|systemctl is not here \(this computer does not run systemd\))\. Nothing was written\. To keep it running another way: nohup "[^"]+" "[^"]+\/bin\/agent-autoloop\.js" serve >> "[^"]+\/home\/hub\.log" 2>&1 & \(or in tmux, screen, or a crontab @reboot line\); the home is .+\/home\n$/);
    assert.deepEqual(readdirSync(dir), [], "no home, no ~/.config, no ~/.local");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("uninstall without --yes and without a terminal refuses; with --yes it removes only its link and keeps the home", { skip: process.platform === "win32" }, () => {
  const dir = tempDir();
  try {
    const home = join(dir, "home");
    assert.equal(spawnSync(process.execPath, [cli, "init"], { env: { ...process.env, AGENT_AUTOLOOP_HOME: home } }).status, 0);
    const nothing = run(dir, ["uninstall"]);
    assert.equal(nothing.status, 0, nothing.stderr);
    assert.equal(nothing.stdout, `no service or command link is installed; the home ${home} is as it was\n`);
    const link = join(dir, ".local", "bin", "agent-autoloop");
    mkdirSync(join(dir, ".local", "bin"), { recursive: true });
    symlinkSync(join(engine, "bin", "agent-autoloop.js"), link);
    const before = readdirSync(home).sort();
    const refused = run(dir, ["uninstall"]);
    assert.equal(refused.status, 1);
    assert.equal(refused.stderr, "agent-autoloop: uninstall needs a confirmation: run it in a terminal, or add --yes\n");
    assert.equal(readlinkSync(link), join(engine, "bin", "agent-autoloop.js"));
    const done = run(dir, ["uninstall", "--yes"]);
    assert.equal(done.status, 0, done.stderr);
    assert.match(done.stdout, /^removed the service and the command's link\. Kept .+\/home: rules\.json, config\.json, master\.key, the database, plugins\/ and every other file\n$/);
    assert.equal(existsSync(link), false);
    assert.deepEqual(readdirSync(home).sort(), before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A service manager whose files are real files and whose registration fails with `failWith` (or succeeds). */
function standIn(dir: string, failWith: string | null): ServiceManager & { registered: number; unregistered: number } {
  const definition = join(dir, "config", "agent-autoloop.service");
  return {
    kind: "systemd", registered: 0, unregistered: 0,
    unusable: () => null,
    files: (p: ServicePlan): ServiceFile[] => [{ path: definition, content: `home=${p.home}\n`, mode: 0o644 }, { path: join(p.home, "service.env"), content: `PATH=${p.path}\n`, mode: 0o600 }],
    installedHome: () => (existsSync(definition) ? readFileSync(definition, "utf8").slice(5).trim() : null),
    state: () => ({ enabled: false, active: false }),
    register(this: { registered: number }) {
      this.registered++;
      if (failWith) throw new Error(failWith);
    },
    unregister(this: { unregistered: number }) {
      this.unregistered++;
    },
    restart: () => {},
    logs: () => "the log",
  };
}

test("install that fails at its last step puts back every file it changed, and says nothing was installed", { skip: process.platform === "win32" }, async () => {
  const dir = tempDir();
  try {
    const home = homePaths(join(dir, "home"));
    assert.equal(spawnSync(process.execPath, [cli, "init"], { env: { ...process.env, AGENT_AUTOLOOP_HOME: home.dir } }).status, 0);
    writeFileSync(join(home.dir, "service.env"), "PATH=/old\n");
    const manager = standIn(dir, "Failed to start agent-autoloop.service: Unit is masked.");
    const linkPath = join(dir, "bin", "agent-autoloop");
    const lines: string[] = [];
    await assert.rejects(
      install({ home, lang: "en", yes: true, say: (l) => lines.push(l), manager, loginPath: "/usr/bin:/bin", linkPath, platform: "linux" }),
      { message: "install failed and put everything back; nothing was installed: Failed to start agent-autoloop.service: Unit is masked." },
    );
    assert.equal(manager.registered, 1);
    assert.equal(manager.unregistered, 1);
    assert.equal(existsSync(join(dir, "config", "agent-autoloop.service")), false);
    assert.equal(readFileSync(join(home.dir, "service.env"), "utf8"), "PATH=/old\n");
    assert.equal(existsSync(linkPath), false);
    assert.equal(existsSync(join(dir, "bin")), false, "the link's folder it made is gone too");
    assert.deepEqual(lines, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("install refuses, writing nothing, when the service holds another home or a file of someone else's is where the link goes", { skip: process.platform === "win32" }, async () => {
  const dir = tempDir();
  try {
    const home = homePaths(join(dir, "home"));
    const other = standIn(dir, null);
    mkdirSync(join(dir, "config"), { recursive: true });
    writeFileSync(join(dir, "config", "agent-autoloop.service"), "home=/srv/other-home\n");
    await assert.rejects(install({ home, lang: "en", yes: true, say: () => {}, manager: other, loginPath: "/usr/bin", linkPath: join(dir, "bin", "agent-autoloop"), platform: "linux" }),
      { message: `the service agent-autoloop already runs the hub of another home, /srv/other-home; remove it first with AGENT_AUTOLOOP_HOME=/srv/other-home agent-autoloop uninstall, or use that home (this one is ${home.dir})` });
    rmSync(join(dir, "config"), { recursive: true });
    mkdirSync(join(dir, "bin"));
    writeFileSync(join(dir, "bin", "agent-autoloop"), "#!/bin/sh\necho mine\n");
    const manager = standIn(dir, null);
    await assert.rejects(install({ home, lang: "en", yes: true, say: () => {}, manager, loginPath: "/usr/bin", linkPath: join(dir, "bin", "agent-autoloop"), platform: "linux" }),
      { message: `${join(dir, "bin", "agent-autoloop")} is a file that is not agent-autoloop's link; move it away and run install again. Nothing was written` });
    assert.equal(manager.registered, 0);
    assert.equal(existsSync(home.dir), false);
    assert.equal(existsSync(join(dir, "config")), false);
    assert.equal(lstatSync(join(dir, "bin", "agent-autoloop")).isSymbolicLink(), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
