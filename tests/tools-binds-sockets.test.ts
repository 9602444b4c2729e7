/**
 * Issue 26 round 11, F7: a plugin's bind was looked through for sockets only 3 levels deep and for 5,000 entries, and
 * a look that stopped answered "no socket": a read-only bind reached a service's socket 4 levels deep, and
 * `/var:/hostvar:ro` (which holds /var/run and /var/snap, where LXD's socket appears when its daemon starts) was
 * accepted. Now the look goes as deep as the folder does, a look that did not finish refuses the bind (naming the limit
 * and the fix), and a folder where services or other users create sockets later — /run, /var/run, /var/snap, docker's
 * and LXD's state, the user's runtime folder, any world-writable folder such as /tmp — is refused in any mode, as is a
 * folder lying in or holding one. Real folders and real unix sockets.
 */
import { test } from "node:test";
import { createServer, type Server } from "node:net";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { checkBinds } from "../src/tools/binds.js";
import { bindRefusal } from "../src/tools/process.js";
import { bindSocketScanEntriesMax } from "../src/tools/limits.js";

/** Read-only binds of `hosts`, each at /x. */
const ro = (hosts: readonly string[]) => ({ mounts: hosts.map((host) => ({ host, relative: false, container: "/x", readOnly: true })) });

/** Listens on a unix socket at `path` (its folders made). */
async function listen(path: string): Promise<Server> {
  mkdirSync(join(path, ".."), { recursive: true });
  const server = createServer();
  await new Promise<void>((r) => server.listen(path, () => r()));
  return server;
}

test("issue 26 r11 F7 (reported case): a read-only bind holding a service's socket 4 levels deep (and 12) is refused, naming the socket", async () => {
  const base = realpathSync(tempDir("aa-binds-deep-"));
  const servers: Server[] = [];
  try {
    const four = join(base, "h26sock", "a", "b", "c", "ctl.sock");
    const twelve = join(base, "deep", ..."abcdefghijk".split(""), "ctl.sock");
    servers.push(await listen(four), await listen(twelve));
    const plugin = join(base, "plugin");
    mkdirSync(plugin);
    const checked = checkBinds(ro([join(base, "h26sock"), join(base, "deep")]), plugin, { hidden: [], userHomes: [] });
    assert.deepEqual(checked.map((b) => [b.refused, b.socket ?? null]), [["socket", four], ["socket", twelve]]);
    assert.equal(bindRefusal("sbx", checked, "en")?.message, `plugin sbx binds ${join(base, "h26sock")}: it is or holds the socket ${four}; connecting needs no write permission and reaches services running as someone else (D-Bus, systemd, docker, tmux). Bind only the files and folders the plugin needs`);
  } finally {
    for (const s of servers) s.close();
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 r11 F7 (reported case): /var:/hostvar:ro is refused — it holds /var/run and /var/snap, where services create sockets when they start; so are /run, /tmp, docker's and LXD's state and the runtime folder", () => {
  const base = realpathSync(tempDir("aa-binds-svc-"));
  try {
    const plugin = join(base, "plugin");
    const runtime = join(base, "user-1001");
    mkdirSync(plugin);
    mkdirSync(runtime);
    const hosts = ["/var", "/run", "/tmp", "/var/lib/docker", "/var/snap/lxd/common", "/var/lib/lxd", runtime].filter((h) => existsSync(h));
    const checked = checkBinds(ro(hosts), plugin, { hidden: [], userHomes: [], runtimeDir: runtime });
    const expected: Record<string, string> = {
      "/var": "/var/run", "/run": "/run", "/tmp": "/tmp", "/var/lib/docker": "/var/lib/docker", "/var/snap/lxd/common": "/var/snap", "/var/lib/lxd": "/var/lib/lxd", [runtime]: runtime,
    };
    assert.deepEqual(checked.map((b) => [b.source, b.refused, b.folder ?? null]), hosts.map((h) => [h, "socketFolder", expected[h]]));
    assert.equal(bindRefusal("sbx", [checked[0]!], "en")?.message, "plugin sbx binds /var: it is, lies in or holds /var/run, a folder where services or other users create sockets whenever they start (the system's runtime folders, docker's, LXD's and snaps' state, the user's runtime folder, a world-writable folder such as /tmp); a socket made there after this check would be reachable from the sandbox, since connecting needs no write permission. Bind only folders of data the plugin needs");
    assert.match(bindRefusal("sbx", [checked[0]!], "zh")?.message ?? "", /^插件 sbx 的 binds 里有 \/var：/);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 r11 F7: a world-writable folder (anyone can make a socket in it later) is refused, as the source or anywhere inside it; a private folder of data passes", () => {
  const base = realpathSync(tempDir("aa-binds-ww-"));
  try {
    const plugin = join(base, "plugin");
    mkdirSync(plugin);
    const shared = join(base, "data", "x", "shared");
    const sticky = join(base, "sticky");
    const data = join(base, "private");
    for (const d of [shared, sticky, join(data, "a", "b")]) mkdirSync(d, { recursive: true });
    writeFileSync(join(data, "a", "b", "f.txt"), "x");
    chmodSync(shared, 0o777);
    chmodSync(sticky, 0o1777);
    const checked = checkBinds(ro([join(base, "data"), sticky, data]), plugin, { hidden: [], userHomes: [] });
    assert.deepEqual(checked.map((b) => [b.refused, b.folder ?? null]), [["socketFolder", shared], ["socketFolder", sticky], [null, null]]);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 r11 F7: a look for sockets that stops at its limit of entries refuses the bind (it used to answer \"no socket\"), naming the limit and the fix", () => {
  const base = realpathSync(tempDir("aa-binds-many-"));
  try {
    const plugin = join(base, "plugin");
    const many = join(base, "many");
    const few = join(base, "few");
    mkdirSync(plugin);
    mkdirSync(join(many, "sub"), { recursive: true });
    mkdirSync(few);
    for (let i = 0; i < 150; i++) writeFileSync(join(many, "sub", `f${i}`), "");
    for (let i = 0; i < 99; i++) writeFileSync(join(few, `f${i}`), "");
    const checked = checkBinds(ro([many, few]), plugin, { hidden: [], userHomes: [], socketScanEntriesMax: 100 });
    assert.deepEqual(checked.map((b) => [b.refused, b.limit ?? null]), [["socketScan", 100], [null, null]]);
    assert.equal(bindRefusal("sbx", checked, "en")?.message, `plugin sbx binds ${many}: it holds more than 100 entries, the most the hub looks through for sockets (bindSocketScanEntriesMax), so a socket in it could not be ruled out. Bind the smaller folders the plugin needs instead`);
    assert.equal(bindSocketScanEntriesMax, 100_000);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
