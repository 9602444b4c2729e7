/**
 * Issue 26 round 10: what a sandbox hides or refuses is decided by what a path IS (its file system and its place in
 * it), not by its name. High 2: another mount of a folder holding the hub's home (`mount --bind /srv/h /mnt/alias`,
 * NixOS `/persist`, a container volume) let a sandboxed agent read master.key and the owner key through the alias, and
 * a plugin's bind of `/mnt/alias/home` was accepted. Medium 3: a second proc mount (a monitoring container's
 * /host/proc) bound by a plugin, read-only or writable, was accepted though `/proc` by name is refused. Medium 7: a
 * second home of the same user (`init`, hub not running) was readable by every agent. Real mounts (`mount --bind`,
 * `mount -t proc`, `mount -t sysfs`), made under /mnt — the agent sandbox's /tmp and /var/tmp are its own, so a mount
 * under them would prove nothing — and unmounted after each test; real hub, worker, bubblewrap and plugin processes.
 * Mounting needs root: the tests skip, saying so, on any other user.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { baseRules, makeHome, serveFixture, tempDir, untilLatestRun } from "./helpers.js";
import { sandboxKit } from "./sandbox-kit.js";
import { hostFixture, nodePlugin, probeBwrap, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { refusedRuns } from "./sandbox-helpers.js";
import { homePaths } from "../src/host/home.js";
import { initialize } from "../src/host/serve.js";
import { knownHomes, knownHomesFile, recordKnownHome } from "../src/worker/known-homes.js";
import { aliasesOf, kernelMountsAt, otherProcMounts, parseMountInfo, placeOf } from "../src/common/mounts.js";
import { userHomes } from "../src/worker/sandbox.js";

const kit = sandboxKit();
const { removed } = kit;

/** Why these tests cannot run here, or null: mounting needs root, the sandboxes need bubblewrap and /mnt. */
async function cannot(): Promise<string | null> {
  if (process.getuid?.() !== 0) return "mounting a file system needs root (these tests run as root in CI)";
  if (!existsSync("/mnt")) return "no /mnt to make the mounts in";
  return (await probeBwrap("bwrap")).ok ? null : "bubblewrap cannot run here";
}

/** A new empty folder under /mnt (outside both sandboxes' own /tmp), removed after the test. */
function mntDir(): string {
  const d = mkdtempSync("/mnt/aa-mounts-");
  removed.push(d);
  return d;
}

/** Mounts (`mount` arguments before the mount point) at `at`, made when missing; unmounted after the test. */
function mount(args: string[], at: string): string {
  mkdirSync(at, { recursive: true });
  execFileSync("mount", [...args, at]);
  kit.cleanups.push(() => {
    try {
      execFileSync("umount", [at]);
    } catch {
      execFileSync("umount", ["-l", at]); // busy: detached now, gone when its last user ends
    }
  });
  return at;
}

/**
 * The agent's probe: for each path, its text (`READ <first 12 characters>`), its entries (`LIST n`) or the error code;
 * each of `writes` opened for writing (no byte written): `OPENED` or the error code.
 */
const probe = (paths: string[], writes: string[] = []) => `
const fs = require("fs");
const out = {};
for (const p of ${JSON.stringify(paths)}) {
  try { out[p] = fs.statSync(p).isDirectory() ? "LIST " + fs.readdirSync(p).length : "READ " + fs.readFileSync(p, "utf8").slice(0, 12); }
  catch (e) { out[p] = e.code; }
}
for (const p of ${JSON.stringify(writes)}) {
  try { fs.closeSync(fs.openSync(p, fs.constants.O_WRONLY)); out[p] = "OPENED"; } catch (e) { out[p] = e.code; }
}
fs.writeFileSync("probe.json", JSON.stringify(out));
console.log("Done: probed");
`;

test("issue 26 r10 High 2, Medium 3, Medium 7 (reported cases): a sandboxed agent reads neither the hub's home through another mount of it or of a folder holding it, nor a second proc mount, nor a second home of the user", async (t) => {
  const why = await cannot();
  if (why) return t.skip(why);
  const base = mntDir();
  // The hub's home lies in `holder`; three other mounts show it: of its folder, of itself, of a folder inside it.
  const made = makeHome();
  const holder = join(base, "holder");
  mkdirSync(holder);
  renameSync(made.dir, join(holder, "home"));
  const home = homePaths(join(holder, "home"));
  mkdirSync(home.plugins, { recursive: true });
  writeFileSync(join(home.plugins, "secret.txt"), "plugin-secret");
  const byHolder = mount(["--bind", holder], join(base, "alias-holder"));
  const byHome = mount(["--bind", home.dir], join(base, "alias-home"));
  const byInside = mount(["--bind", home.plugins], join(base, "alias-inside"));
  const proc = mount(["-t", "proc", "proc"], join(base, "hostproc"));
  // A second home of the same user, made by `init` (its hub not running).
  const home2 = homePaths(join(base, "home2"));
  initialize(home2, "en");
  assert.ok(knownHomes(userHomes()).includes(home2.dir), `init records ${home2.dir} in ~/${knownHomesFile}`);
  // The agent's writable cwd holds a proc mount (hidden) and a sysfs mount (read-only): a folder that only holds them
  // is not refused (a cwd of /tmp with a monitoring agent's proc mount under it).
  const cwd = join(base, "work");
  mkdirSync(cwd);
  const heldProc = mount(["-t", "proc", "proc"], join(cwd, "hp"));
  const heldSys = mount(["-t", "sysfs", "sysfs"], join(cwd, "sys"));
  const knob = ["kernel/mm/transparent_hugepage/enabled", "power/state"].map((k) => join(heldSys, k)).find((k) => existsSync(k));
  const paths = [heldProc, join(heldProc, "1", "cmdline"), 
    join(byHolder, "home", "master.key"), join(byHolder, "home", "config.json"), join(byHolder, "home"), join(byHome, "master.key"),
    join(byInside, "secret.txt"), proc, join(proc, "1", "cmdline"), home2.masterKey, home2.config, home2.dir,
  ];
  const writes = knob ? [knob] : [];
  const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command: [process.execPath, "-e", probe(paths, writes)] } }, rules: [{ ...baseRules.rules[0], cwd }] };
  writeFileSync(home.rules, JSON.stringify(rules));
  const fx = await serveFixture({ dir: home.dir, home, keys: made.keys });
  kit.hub(fx);
  const w = kit.worker(fx);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  assert.equal((await untilLatestRun(fx, "done", 30_000)).runs[0].summary, "Done: probed");
  // Every alias is an empty folder in the sandbox: nothing of the home, no process of the computer, no second home.
  const [p0, p1, ...rest] = paths;
  assert.deepEqual(JSON.parse(readFileSync(join(cwd, "probe.json"), "utf8")), {
    [p0!]: "LIST 0", [p1!]: "ENOENT",
    [rest[0]!]: "ENOENT", [rest[1]!]: "ENOENT", [rest[2]!]: "LIST 0", [rest[3]!]: "ENOENT",
    [rest[4]!]: "ENOENT", [rest[5]!]: "LIST 0", [rest[6]!]: "ENOENT", [rest[7]!]: "ENOENT", [rest[8]!]: "ENOENT", [rest[9]!]: "LIST 0",
    ...Object.fromEntries(writes.map((w) => [w, "EROFS"])),
  });
});

test("issue 26 r10 High 2, Medium 3: an agent's cwd or writable folder is judged by what it is — inside the worker's home by another mount, on a proc or sysfs mount, in a read-only folder by another mount — and refused", async (t) => {
  const why = await cannot();
  if (why) return t.skip(why);
  const base = mntDir();
  const holder = join(base, "holder");
  const home = homePaths(join(holder, "home"));
  mkdirSync(join(home.dir, "work"), { recursive: true });
  const alias = mount(["--bind", holder], join(base, "alias"));
  const proc = mount(["-t", "proc", "proc"], join(base, "hostproc"));
  const sys = mount(["-t", "sysfs", "sysfs"], join(base, "hostsys"));
  const usr = mount(["--bind", "/usr"], join(base, "usr"));
  const work = join(base, "work");
  mkdirSync(work);
  const agents = { bot: { worker: "w1", use: "command", command: ["true"] } };
  const cases: [string, string, string[]?][] = [
    ["cwdalias", join(alias, "home", "work")],
    ["cwdproc", proc],
    ["wralias", work, [join(alias, "home", "work")]],
    ["wrholds", work, [alias]],
    ["wrproc", work, [join(proc, "sys")]],
    ["wrholdsproc", work, [base]],
    ["wrsys", work, [join(sys, "kernel")]],
    ["wrusr", work, [join(usr, "bin")]],
  ];
  const rules = {
    ...baseRules,
    agents: Object.fromEntries(cases.map(([id, , writable]) => [id, { ...agents.bot, ...(writable ? { writable } : {}) }])),
    rules: cases.map(([id, cwd]) => ({ name: id, when: { source: "shop", types: [`${id}.*`] }, to: id, cwd, prompt: "p" })),
  };
  const made = makeHome(rules);
  const fx = kit.hub(await serveFixture(made));
  const errors = await refusedRuns(fx, cases.map(([id]) => id), home, kit.workers);
  assert.deepEqual(errors, {
    cwdalias: `cwd ${join(alias, "home", "work")} is inside the worker's home ${home.dir}, which the sandbox hides from agents: choose another folder, or set "sandbox": false on agent cwdalias`,
    cwdproc: `cwd ${proc} lies on ${proc}, a mount of the kernel's proc file system, whose files are the kernel's state and settings (or every process of the computer): choose another folder, or set "sandbox": false on agent cwdproc`,
    wralias: `${join(alias, "home", "work")} in "writable" of agent wralias lies inside the worker's home ${home.dir}, which the sandbox hides`,
    wrholds: `${alias} in "writable" of agent wrholds holds ${join(alias, "home")}, the worker's home or a folder the hub runs code or programs from: an agent that writes above it can move it aside or put a node_modules above it for the hub to load: name a folder that does not hold it`,
    wrproc: `${join(proc, "sys")} in "writable" of agent wrproc lies on ${proc}, a mount of the kernel's proc file system: its files are the kernel's state and settings (or every process of the computer), and writing them changes the computer outside the sandbox: name a folder of data`,
    wrholdsproc: `${base} in "writable" of agent wrholdsproc holds ${home.dir}, the worker's home or a folder the hub runs code or programs from: an agent that writes above it can move it aside or put a node_modules above it for the hub to load: name a folder that does not hold it`,
    wrsys: `${join(sys, "kernel")} in "writable" of agent wrsys lies on ${sys}, a mount of the kernel's sysfs file system: its files are the kernel's state and settings (or every process of the computer), and writing them changes the computer outside the sandbox: name a folder of data`,
    wrusr: `${join(usr, "bin")} in "writable" of agent wrusr lies inside ${join(usr, "bin")}, which the sandbox keeps read-only because the hub runs code or programs from there`,
  });
});

/** A plugin that reads each of `paths` (text, entries, or the error code) and answers with what it found. */
const reader = (paths: string[]) => nodePlugin(`
  const fs = require("node:fs");
  const out = {};
  for (const p of ${JSON.stringify(paths)}) {
    try { out[p] = fs.statSync(p).isDirectory() ? "LIST " + fs.readdirSync(p).length : "READ " + fs.readFileSync(p, "utf8").slice(0, 12); }
    catch (e) { out[p] = e.code; }
  }
  return { jsonrpc: "2.0", id: req.id, result: out };`);

test("issue 26 r10 High 2, Medium 3 (reported cases): a plugin's bind of the hidden home through another mount, of a second proc mount (read-only or writable) or of what holds one is refused; a writable bind of a sysfs mount or of another mount of /etc too; the sandbox shows no alias", async (t) => {
  const why = await cannot();
  if (why) return t.skip(why);
  const base = mntDir();
  const holder = join(base, "holder");
  const hub = join(holder, "home");
  mkdirSync(hub, { recursive: true });
  writeFileSync(join(hub, "master.key"), "hub-master-key");
  const alias = mount(["--bind", holder], join(base, "alias"));
  const proc = mount(["-t", "proc", "proc"], join(base, "hostproc"));
  const sys = mount(["-t", "sysfs", "sysfs"], join(base, "hostsys"));
  const etc = mount(["--bind", "/etc"], join(base, "etc"));
  // The hub user's home by another mount (hidden from plugins like the home itself), and a second home of the user.
  const userHome = mount(["--bind", userHomes()[0]!], join(base, "userhome"));
  const home2 = homePaths(join(base, "home2"));
  initialize(home2, "en");
  const h = hostFixture({ hiddenPaths: [hub] });
  try {
    const binds: [string, string, string][] = [
      ["aliashome", `${join(alias, "home")}:/h:ro`, `plugin aliashome binds ${join(alias, "home")}: it is a path the host hides from every sandbox (the hub's home, with its keys), or is inside or holds one`],
      ["aliasholder", `${alias}:/h:ro`, `plugin aliasholder binds ${alias}: it is a path the host hides from every sandbox (the hub's home, with its keys), or is inside or holds one`],
      ["procro", `${proc}:/hp:ro`, `plugin procro binds ${proc}: the host's /proc shows every process of the computer (with their command lines) and the kernel's settings; the sandbox has a /proc of its own — remove the bind`],
      ["procrw", `${proc}:/hp:rw`, `plugin procrw binds ${proc}: the host's /proc shows every process of the computer (with their command lines) and the kernel's settings; the sandbox has a /proc of its own — remove the bind`],
      ["procsys", `${join(proc, "sys", "kernel")}:/k:rw`, `plugin procsys binds ${join(proc, "sys", "kernel")}: the host's /proc shows every process of the computer (with their command lines) and the kernel's settings; the sandbox has a /proc of its own — remove the bind`],
      ["holdsproc", `${base}:/b:ro`, `plugin holdsproc binds ${base}: the host's /proc shows every process of the computer (with their command lines) and the kernel's settings; the sandbox has a /proc of its own — remove the bind`],
      ["sysrw", `${join(sys, "kernel")}:/s:rw`, `plugin sysrw binds ${join(sys, "kernel")} writable: it lies in (or holds) the system folder ${sys} (sysfs) — the kernel's settings, programs, libraries, configuration, services' state; writable, it changes the computer outside the sandbox. Bind it read-only ("…:ro"), or bind a folder of data (under /var only /var/tmp and /var/www)`],
      ["home2", `${home2.dir}:/h2:ro`, `plugin home2 binds ${home2.dir}: it is a path the host hides from every sandbox (the hub's home, with its keys), or is inside or holds one`],
      ["etcrw", `${etc}:/e:rw`, `plugin etcrw binds ${etc} writable: it lies in (or holds) the system folder /etc — the kernel's settings, programs, libraries, configuration, services' state; writable, it changes the computer outside the sandbox. Bind it read-only ("…:ro"), or bind a folder of data (under /var only /var/tmp and /var/www)`],
    ];
    for (const [name, bind] of binds) {
      writePlugin(h.root, name, syncManifest(name, "node", ["main.js"], `[sandbox]\nbinds = [${JSON.stringify(bind)}]\n\n${toolToml("go")}`), { "main.js": reader([]) });
    }
    // No bind at all: the sandbox root shows no /mnt (issue 26 round 12, F12-6: only the system folders), so no alias is
    // there at all; an alias of the user's home is an empty folder, as the home is.
    const seen = [join(alias, "home", "master.key"), join(alias, "home"), proc, join(proc, "1", "cmdline"), home2.masterKey, home2.dir, userHome];
    writePlugin(h.root, "nobind", syncManifest("nobind", "node", ["main.js"], `[sandbox]\n\n${toolToml("go")}`), { "main.js": reader(seen) });
    h.registry.rescan();
    for (const [name, , message] of binds) {
      const r = await h.host.call(`${name}.go`, {}, { sessionKey: "s" });
      assert.deepEqual([r.status, "code" in r ? r.code : null, "message" in r ? r.message : null], ["refused", "tools.bind_refused", message], name);
    }
    const r = await h.host.call("nobind.go", {}, { sessionKey: "s" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.deepEqual((r as { result: unknown }).result, {
      [seen[0]!]: "ENOENT", [seen[1]!]: "ENOENT", [seen[2]!]: "ENOENT", [seen[3]!]: "ENOENT", [seen[4]!]: "ENOENT", [seen[5]!]: "ENOENT", [seen[6]!]: "LIST 0",
    });
  } finally {
    await h.close();
  }
});

test("issue 26 r10: the mount table is read as the kernel shows it — escaped paths, a mount covered by a later one, an overmount — and a recorded home that is gone is dropped", () => {
  const table = parseMountInfo([
    "1 0 8:1 / / rw - ext4 /dev/sda1 rw",
    "2 1 8:1 /srv /mnt/my\\040alias rw - ext4 /dev/sda1 rw",
    "3 1 8:1 /srv /data/inner rw - ext4 /dev/sda1 rw",
    "4 1 0:30 / /data rw - tmpfs tmpfs rw",
    "5 1 0:31 / /srv/hp rw - proc proc rw",
    "6 5 0:32 / /srv/hp rw - tmpfs tmpfs rw",
    "7 1 8:1 /srv/h/home/plugins /opt/p rw - ext4 /dev/sda1 rw",
  ].join("\n"));
  assert.equal(table[1]!.at, "/mnt/my alias");
  // /data/inner lies under /data, mounted after it: covered, it shows nothing; /srv/hp is covered by a tmpfs.
  assert.deepEqual(aliasesOf("/srv/h/home", table), ["/opt/p", "/mnt/my alias/h/home"]);
  assert.deepEqual(kernelMountsAt("/srv", table), []);
  assert.deepEqual(otherProcMounts(table), []);
  assert.equal(placeOf("/data/inner/x", table)?.dev, "0:30");

  const user = tempDir("aa-known-homes-");
  removed.push(user);
  const gone = join(user, "gone");
  mkdirSync(gone);
  recordKnownHome(gone, [user]);
  rmSync(gone, { recursive: true });
  recordKnownHome(join(user, "kept"), [user]);
  mkdirSync(join(user, "kept"));
  assert.deepEqual(JSON.parse(readFileSync(join(user, knownHomesFile), "utf8")), { homes: [] });
  recordKnownHome(join(user, "kept"), [user]);
  assert.deepEqual([JSON.parse(readFileSync(join(user, knownHomesFile), "utf8")), knownHomes([user])], [{ homes: [join(user, "kept")] }, [join(user, "kept")]]);
});
