/**
 * `install`, `uninstall` and `update` under a real systemd (issue 28): a Debian booted with systemd-nspawn
 * (tests/systemd-container.ts), the hub installed as the user `tester` from a git clone of this checkout with release
 * tags made for the test. It checks, in order: install → the hub answers after a login; `systemd-analyze verify` of
 * the unit; a second install changes nothing; an agent CLI found only through the PATH of the login shell's profile
 * runs under the service; SIGKILL of the hub → back within the restart delay, no fact lost; a reboot → back (linger);
 * uninstall → no service, the home intact; install again → the same facts; update v0.1.0 → v0.2.0 with the service
 * restarted; a failed update (v0.3.0 does not build) rolled back with the old version running.
 *
 * Where no systemd container can be made (not root, no systemd-nspawn) the test FAILS, unless
 * AGENT_AUTOLOOP_SKIP_SYSTEMD=1 says to skip it (a machine that cannot run it, said on purpose): CI installs what it needs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { appendFileSync, chmodSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engine, tempDir, until } from "./helpers.js";
import { SystemdContainer, copyRoot, ensureSystemdRoot, systemdContainerUnavailable, tester } from "./systemd-container.js";
import { systemdRestartSec } from "../src/cli/service/files.js";

const unavailable = systemdContainerUnavailable();
const skip = unavailable !== null && process.env.AGENT_AUTOLOOP_SKIP_SYSTEMD === "1" ? `no systemd container here: ${unavailable}` : false;

const gitGlobal = join(tempDir("aa-gitconfig-"), "gitconfig");
writeFileSync(gitGlobal, "[safe]\n\tdirectory = *\n");

/** Runs git in `cwd` as the test's user. @throws Error with git's words. */
function git(cwd: string, ...args: string[]): string {
  // The tester's files are safe to this root-run test: git takes safe.directory only from a global config file.
  const env = { ...process.env, GIT_CONFIG_GLOBAL: gitGlobal };
  const r = spawnSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", ...args], { cwd, encoding: "utf8", env });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

/** chown -R to the container's user. */
function chownTree(path: string): void {
  const r = spawnSync("chown", ["-R", `${tester.uid}:${tester.uid}`, path]);
  if (r.status !== 0) throw new Error(`chown ${path}: ${r.stderr}`);
}

test("install, restart after SIGKILL, reboot, uninstall, install again, update and a failed update, under systemd", { skip, timeout: 20 * 60_000 }, async () => {
  assert.equal(unavailable, null, `this test needs a systemd container: ${unavailable} (AGENT_AUTOLOOP_SKIP_SYSTEMD=1 skips it on purpose)`);
  ensureSystemdRoot();
  const dir = tempDir("aa-systemd-");
  const root = join(dir, "root");
  copyRoot(root);
  const c = new SystemdContainer(root, [`${process.execPath}:/usr/bin/node`, `${join(engine, "node_modules")}:/opt/aa/node_modules`, "/usr/lib/node_modules/npm:/usr/lib/node_modules/npm"]);
  try {
    // The engine: a clone of this checkout's HEAD with releases v0.1.0 and v0.2.0 on an origin inside the container.
    const work = join(dir, "work");
    git(dir, "clone", "--quiet", "--no-local", engine, work);
    git(work, "tag", "-a", "v0.1.0", "-m", "First release: the hub as a service.");
    writeFileSync(join(work, "NOTES.txt"), "second release\n");
    git(work, "add", "NOTES.txt");
    git(work, "commit", "--quiet", "-m", "Second release");
    git(work, "tag", "-a", "v0.2.0", "-m", "Second release: a note.");
    const origin = join(root, "srv", "origin.git");
    git(dir, "clone", "--quiet", "--bare", work, origin);
    chownTree(origin);
    const clone = join(root, "home", tester.name, "engine");
    git(dir, "clone", "--quiet", origin, clone);
    git(clone, "checkout", "--quiet", "--detach", "v0.1.0");
    git(clone, "remote", "set-url", "origin", "/srv/origin.git");
    // Built files and packages from this checkout (the same sources as v0.1.0): no compiler run needed to start.
    cpSync(join(engine, "dist"), join(clone, "dist"), { recursive: true });
    symlinkSync("/opt/aa/node_modules", join(clone, "node_modules"));
    symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", join(root, "usr", "bin", "npm"));
    // An agent CLI that only the login shell's PATH finds (~/.profile), and the home: a command agent using it.
    const tools = join(root, "home", tester.name, "tools", "bin");
    mkdirSync(tools, { recursive: true });
    writeFileSync(join(tools, "myagent"), "#!/bin/sh\necho \"done by myagent\"\n");
    chmodSync(join(tools, "myagent"), 0o755);
    writeFileSync(join(root, "home", tester.name, ".profile"), `${readFileSync(join(root, "etc", "skel", ".profile"), "utf8")}\nPATH="$HOME/tools/bin:$PATH"\n`);
    chownTree(join(root, "home", tester.name));
    await c.boot();

    const cli = `node ${tester.home}/engine/bin/agent-autoloop.js`;
    const home = join(root, "home", tester.name, ".agent-autoloop");
    const init = c.login(`${cli} init && ${cli} key new source demo > ~/demo.key`);
    assert.equal(init.code, 0, init.out + init.err);
    const config = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
    writeFileSync(join(home, "config.json"), JSON.stringify({ ...config, listen: "127.0.0.1:0" }, null, 2));
    writeFileSync(join(home, "rules.json"), JSON.stringify({
      timezone: "UTC", sources: { demo: {} }, channels: {},
      agents: { mine: { worker: config.worker.name, use: "command", command: ["myagent"] } },
      rules: [{ name: "try", when: { source: "demo", types: ["try.*"] }, to: "mine", cwd: "~" }],
    }, null, 2));
    chownTree(home);
    const key = readFileSync(join(root, "home", tester.name, "demo.key"), "utf8").trim();

    /** The hub's URL from its hub.json once it answers /v1/health as `version`; null when it does not. */
    const hubUrl = async (version?: string): Promise<string | null> => {
      try {
        const { url } = JSON.parse(readFileSync(join(home, "hub.json"), "utf8")) as { url: string };
        const health = (await (await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(2000) })).json()) as { version: string };
        return version === undefined || health.version === version ? url : null;
      } catch {
        return null;
      }
    };
    const post = async (url: string, id: string) => (await fetch(`${url}/v1/events`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ id, type: "try.it", subject: id }),
    })).json() as Promise<{ event: number; duplicate: boolean }>;
    const owner = () => JSON.parse(readFileSync(join(home, "config.json"), "utf8")).owner as string;
    const state = async (url: string) => (await (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner()}` } })).json()) as { seq: number; runs: { state: string; error: string | null }[] };

    // install, in a login session (as a person at a terminal); --yes answers the linger question, which this user
    // may not change without an administrator here (no polkit): the administrator turns it on, as the hint says.
    const installed = c.login(`${cli} install --yes`);
    assert.equal(installed.code, 0, installed.out + installed.err);
    assert.match(installed.out, /installed the systemd service: \/home\/tester\/\.config\/systemd\/user\/agent-autoloop\.service, \/home\/tester\/\.agent-autoloop\/service\.env/);
    assert.match(installed.out, /the hub runs as a service at http:\/\/127\.0\.0\.1:\d+/);
    const linger = c.run(`loginctl enable-linger ${tester.name}`);
    assert.equal(linger.code, 0, linger.err);
    const verify = c.login("systemd-analyze --user verify ~/.config/systemd/user/agent-autoloop.service");
    assert.equal(verify.code, 0, verify.out + verify.err);
    assert.equal(verify.err.trim(), "");
    const again = c.login(`${cli} install --yes`);
    assert.equal(again.code, 0, again.err);
    assert.match(again.out, /^already installed for the home \/home\/tester\/\.agent-autoloop; nothing changed$/m);
    // doctor reads the login shell's PATH again: a folder added to ~/.profile reaches the service's settings.
    appendFileSync(join(root, "home", tester.name, ".profile"), 'PATH="$HOME/more/bin:$PATH"\n');
    const doctor = c.login(`${cli} doctor`);
    assert.match(doctor.out, /your login shell's PATH changed: written into the systemd service's settings; restart the service to use it: systemctl --user restart agent-autoloop/, doctor.out + doctor.err);
    assert.match(readFileSync(join(home, "service.env"), "utf8"), /^PATH="\/home\/tester\/more\/bin:\/home\/tester\/tools\/bin:/m);
    assert.match(c.login(`${cli} doctor`).out, /the systemd service's PATH is your login shell's/);
    let url = (await until(() => hubUrl("v0.1.0"), 30_000, "the installed hub to answer as v0.1.0"))!;

    // The agent CLI that only the login shell finds: its run ends done.
    const first = await post(url, "e1");
    assert.equal(first.duplicate, false);
    let last: unknown = null;
    await until(async () => ((last = (await state(url)).runs[0]) as { state?: string } | undefined)?.state === "done", 30_000, () => `the run of myagent to be done: ${JSON.stringify(last)}`);

    // SIGKILL of the hub: systemd starts it again after RestartSec; nothing acknowledged is lost.
    const seq = (await state(url)).seq;
    const pid = c.login("systemctl --user show --property=MainPID --value agent-autoloop").out.trim();
    assert.match(pid, /^[1-9]\d*$/);
    const killedAt = Date.now();
    assert.equal(c.run(`kill -KILL ${pid}`).code, 0);
    url = (await until(async () => {
      const u = await hubUrl("v0.1.0");
      return u && c.login("systemctl --user show --property=MainPID --value agent-autoloop").out.trim() !== pid ? u : null;
    }, 60_000, "the hub to come back after SIGKILL"))!;
    const backMs = Date.now() - killedAt;
    assert.ok(backMs < (systemdRestartSec + 10) * 1000, `back after ${backMs} ms`);
    assert.ok((await state(url)).seq >= seq);
    assert.deepEqual(await post(url, "e1"), { ...first, duplicate: true });

    // A reboot: linger starts the user manager at boot, and it starts the hub.
    await c.reboot();
    url = (await until(() => hubUrl("v0.1.0"), 60_000, "the hub to come back after a reboot"))!;
    assert.deepEqual(await post(url, "e1"), { ...first, duplicate: true });

    // uninstall: no service, the home intact.
    const files = ["rules.json", "config.json", "master.key", "hub.db", "home.id", "service.env"];
    const before = Object.fromEntries(files.map((f) => [f, readFileSync(join(home, f)).toString("base64")]));
    const removed = c.login(`${cli} uninstall --yes`);
    assert.equal(removed.code, 0, removed.out + removed.err);
    assert.match(removed.out, /removed the service and the command's link\. Kept \/home\/tester\/\.agent-autoloop/);
    assert.notEqual(c.login("systemctl --user cat agent-autoloop").code, 0);
    assert.equal(existsSync(join(root, "home", tester.name, ".config", "systemd", "user", "agent-autoloop.service")), false);
    assert.equal(existsSync(join(root, "home", tester.name, ".local", "bin", "agent-autoloop")), false);
    assert.equal(await hubUrl(), null);
    for (const f of ["rules.json", "config.json", "master.key", "home.id", "service.env"]) assert.equal(readFileSync(join(home, f)).toString("base64"), before[f], f);
    assert.ok(existsSync(join(home, "hub.db")));

    // install again: the same facts.
    const reinstalled = c.login(`${cli} install --yes`);
    assert.equal(reinstalled.code, 0, reinstalled.out + reinstalled.err);
    url = (await until(() => hubUrl("v0.1.0"), 30_000, "the reinstalled hub"))!;
    assert.deepEqual(await post(url, "e1"), { ...first, duplicate: true });
    assert.equal((await state(url)).runs[0]?.state, "done");

    // update to v0.2.0: notes first, the service restarted, the hub answers as v0.2.0.
    const updated = c.login(`${cli} update --yes`);
    assert.equal(updated.code, 0, updated.out + updated.err);
    assert.match(updated.out, /release notes of v0\.2\.0 ——\nSecond release: a note\./);
    assert.match(updated.out, /updated to v0\.2\.0; the service was restarted/);
    url = (await until(() => hubUrl("v0.2.0"), 30_000, "the hub to answer as v0.2.0"))!;
    assert.deepEqual(await post(url, "e1"), { ...first, duplicate: true });

    // v0.3.0 does not build: the update fails, the checkout goes back and v0.2.0 runs again.
    writeFileSync(join(work, "src", "broken.ts"), "export const = ;\n");
    git(work, "add", "src/broken.ts");
    git(work, "commit", "--quiet", "-m", "Broken release");
    git(work, "tag", "-a", "v0.3.0", "-m", "Third release: broken on purpose.");
    git(work, "push", "--quiet", "--tags", origin, "HEAD:refs/heads/main");
    chownTree(origin);
    const failed = c.login(`${cli} update --yes`);
    assert.equal(failed.code, 1, failed.out + failed.err);
    assert.match(failed.out, /the update to v0\.3\.0 failed: npm run build/, failed.err);
    assert.match(failed.out, /went back to the previous commit [0-9a-f]{12}; the old version runs/);
    assert.equal(git(clone, "describe", "--tags", "--exact-match", "HEAD"), "v0.2.0");
    url = (await until(() => hubUrl("v0.2.0"), 60_000, "v0.2.0 to run again after the failed update"))!;
    assert.deepEqual(await post(url, "e1"), { ...first, duplicate: true });
  } finally {
    await c.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
