/**
 * `agent-autoloop backup` and `restore` (issue 32) through the real CLI: a backup taken while a real `serve` takes a
 * write load of events restores into an empty home whose facts equal a prefix of the original's, with SQLite's
 * integrity check ok, and the restored hub starts with every fact; restore is refused onto a running hub, into a home
 * that is not empty, and from an archive that is not a backup or was changed — writing nothing each time.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import Database from "better-sqlite3";
import { engine, serveProcess, tempDir, until } from "./helpers.js";

const bin = join(engine, "bin", "agent-autoloop.js");
const root = tempDir("aa-backup-");
after(() => rmSync(root, { recursive: true, force: true }));

/** The CLI on `home`; never throws: the exit code, stdout and stderr. */
async function cli(home: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const r = await promisify(execFile)(process.execPath, [bin, ...args], { env: { ...process.env, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", HOME: root }, encoding: "utf8" });
    return { code: 0, out: r.stdout.trim(), err: r.stderr.trim() };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout.trim(), err: x.stderr.trim() };
  }
}

/** `serve` on `home` (tests/helpers.ts serveProcess), with this test's HOME. */
const serve = (home: string) => serveProcess(home, undefined, { ...process.env, AGENT_AUTOLOOP_LANG: "en", HOME: root });

type FactRow = { seq: number; at: string; kind: string; body: string };
const factsOf = (db: string): FactRow[] => {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare(`SELECT seq, at, kind, body FROM facts ORDER BY seq`).all() as FactRow[];
  } finally {
    d.close();
  }
};

test("a backup under a write load restores into an empty home: a prefix of the facts, integrity ok, the hub starts with every fact; restore refuses a running hub, a home not empty and a changed archive", async () => {
  const home = join(root, "aa");
  assert.equal((await cli(home, "init")).code, 0);
  // No agent: the starter rule's events stay queued; every event is still a fact.
  const config = JSON.parse(readFileSync(join(home, "config.json"), "utf8")) as { worker: unknown };
  config.worker = null;
  writeFileSync(join(home, "config.json"), JSON.stringify(config));
  const hub = await serve(home);
  const archive = join(root, "home.tar.gz");
  try {
    const key = (await cli(home, "key", "new", "source", "demo")).out;
    // Writers post as fast as the hub answers (8 at once) while the backup runs.
    let stop = false;
    let posted = 0;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const res = await fetch(`${hub.url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ id: `w${w}-${i}`, type: "load.x", subject: `s${i % 50}` }) });
        if (res.status === 200) posted++;
        await res.arrayBuffer();
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    await until(() => posted >= 300, 60_000, "the load to start");
    const backup = await cli(home, "backup", archive);
    const duringBackup = posted;
    await until(() => posted >= duringBackup + 200, 60_000, "writes after the backup");
    stop = true;
    await Promise.all(writers);
    assert.equal(backup.code, 0, backup.err);
    assert.match(backup.out, new RegExp(`^backed up to ${archive.replace(/[/.]/g, "\\$&")}: \\d+ facts \\(up to #\\d+\\), files hub\\.db, rules\\.json, config\\.json, master\\.key, home\\.id\\. It holds every key: keep it private\nnote: ${archive.replace(/[/.]/g, "\\$&")} holds master\\.key and every key, in a folder agents can read \\(sandboxes hide only the home and the ~/\\.agent-autoloop\\* folders\\)\\. Keep backups in ~/\\.agent-autoloop-backups/, or move them off this computer$`));
    assert.equal(statSync(archive).mode & 0o777, 0o600, "the archive is private");
    // Issue 26 round 7, F15: written where every sandbox hides it (here the home itself), no note.
    const hidden = await cli(home, "backup", join(home, "in-home.tar.gz"));
    assert.deepEqual([hidden.code, hidden.out.split("\n").length], [0, 1], hidden.out);
    rmSync(join(home, "in-home.tar.gz"));

    // Onto the running hub's home: refused, nothing written.
    const ontoRunning = await cli(home, "restore", archive);
    assert.equal(ontoRunning.code, 1);
    assert.match(ontoRunning.err, /^agent-autoloop: a hub is running on this home \(pid \d+\): stop it first; restore goes only into an empty home/);
  } finally {
    await hub.stop();
  }
  // Into a home that is not empty (the original, now stopped): refused.
  const notEmpty = await cli(home, "restore", archive);
  assert.equal(notEmpty.code, 1);
  assert.match(notEmpty.err, /is not empty \(it has hub\.db, rules\.json, config\.json, master\.key, home\.id\)/);

  // Into an empty home: a prefix of the original's facts, integrity ok.
  const restored = join(root, "restored");
  const r = await cli(restored, "restore", archive);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^restored into .*restored: (\d+) facts \(up to #\d+\), backed up at \S+ by \S+\. Start it: agent-autoloop serve\nThe data format is this version's\.$/);
  const original = factsOf(join(home, "hub.db"));
  const copy = factsOf(join(restored, "hub.db"));
  assert.ok(copy.length > 300 && copy.length < original.length, `${copy.length} of ${original.length} facts: taken during the load`);
  assert.deepEqual(copy, original.slice(0, copy.length), "the copy's facts are a prefix of the original's");
  assert.equal(new Database(join(restored, "hub.db"), { readonly: true }).pragma("integrity_check", { simple: true }), "ok");
  for (const [name, mode] of [["hub.db", 0o600], ["config.json", 0o600], ["master.key", 0o600], ["rules.json", 0o644]] as const) {
    if (name !== "hub.db") assert.ok(readFileSync(join(restored, name)).equals(readFileSync(join(home, name))), `${name} as it was`);
    assert.equal(statSync(join(restored, name)).mode & 0o777, mode, `${name}'s mode`);
  }
  assert.deepEqual(readdirSync(root).filter((n) => n.includes(".restore-") || n.endsWith(".tmp") || n.endsWith(".partial")), [], "no staging folder left");
  // The restored hub starts with every fact: its state counts the queued runs of the events in the copy.
  const again = await serve(restored);
  try {
    const owner = (JSON.parse(readFileSync(join(restored, "config.json"), "utf8")) as { owner: string }).owner;
    const state = (await (await fetch(`${again.url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as { seq: number };
    assert.ok(state.seq >= copy.at(-1)!.seq, `the restored hub is at fact ${state.seq}, the copy's last is ${copy.at(-1)!.seq}`);
  } finally {
    await again.stop();
  }

  // A changed archive, and one that is not a backup: refused, the empty home stays empty.
  const changedHome = join(root, "changed");
  const bytes = readFileSync(archive);
  const flipped = Buffer.from(bytes);
  flipped[Math.floor(bytes.length / 2)] ^= 0xff;
  writeFileSync(join(root, "flipped.tar.gz"), flipped);
  const bad = await cli(changedHome, "restore", join(root, "flipped.tar.gz"));
  assert.equal(bad.code, 1);
  assert.match(bad.err, /is not an agent-autoloop backup|does not match its manifest|fails its check/);
  writeFileSync(join(root, "junk.tar.gz"), gzipSync("not a tar"));
  const junk = await cli(changedHome, "restore", join(root, "junk.tar.gz"));
  assert.equal(junk.code, 1);
  assert.match(junk.err, /is not an agent-autoloop backup/);
  assert.deepEqual(existsSync(changedHome) ? readdirSync(changedHome) : [], [], "nothing written");
});

test("restore refuses an archive that carries a path, a link or a file a backup never writes, unpacking none of it", async () => {
  const tar = await import("tar");
  const staging = join(root, "evil");
  mkdirSync(staging);
  writeFileSync(join(staging, "manifest.json"), "{}");
  writeFileSync(join(staging, "notes.txt"), "x");
  const archive = join(root, "evil.tar.gz");
  await tar.create({ gzip: true, file: archive, cwd: staging, portable: true }, ["manifest.json", "notes.txt"]);
  const target = join(root, "evil-home");
  const r = await cli(target, "restore", archive);
  assert.equal(r.code, 1);
  assert.equal(r.err, `agent-autoloop: ${archive} holds entries a backup never writes (notes.txt); nothing written`);
  assert.deepEqual(readdirSync(target), [], "nothing unpacked into the home");
});

test("issue 26 r24 F24-3, F24-4 (reported cases): a link planted at <file>.partial or at <file> is never followed, and every entry of the archive is private (the database too)", async () => {
  const tar = await import("tar");
  const home = join(root, "r24");
  assert.equal((await cli(home, "init")).code, 0);
  const victim = join(root, "r24-victim");
  writeFileSync(victim, "the owner's\n", { mode: 0o644 });
  const archive = join(root, "r24.tar.gz");
  symlinkSync(victim, `${archive}.partial`);
  const r = await cli(home, "backup", archive);
  assert.equal(r.code, 0, r.err);
  assert.equal(readFileSync(victim, "utf8"), "the owner's\n");
  assert.equal(statSync(victim).mode & 0o777, 0o644);
  assert.equal(lstatSync(`${archive}.partial`).isSymbolicLink(), true, "the planted link is left as it was");
  assert.equal(lstatSync(archive).isFile(), true);
  const modes: Record<string, number> = {};
  await tar.list({ file: archive, onentry: (e) => void (modes[e.path] = (e.mode ?? 0) & 0o777) });
  assert.deepEqual(Object.keys(modes).sort(), ["config.json", "home.id", "hub.db", "manifest.json", "master.key", "rules.json"]);
  for (const [name, mode] of Object.entries(modes)) assert.equal(mode, 0o600, name);
  // A link at <file> itself is replaced by the archive, its target untouched.
  const again = join(root, "r24-again.tar.gz");
  symlinkSync(victim, again);
  assert.equal((await cli(home, "backup", again)).code, 0);
  assert.equal(lstatSync(again).isFile(), true);
  assert.equal(readFileSync(victim, "utf8"), "the owner's\n");
});
