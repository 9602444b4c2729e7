/**
 * Versions come from tags only (protocol.md 版本与兼容, docs/releases.md): `--version` and `GET /v1/health` show the
 * newest `vX.Y.Z` / `vX.Y.Z-rc.N` tag on the current commit, `unreleased` otherwise; no other tag is a version. The
 * engine is copied into a scratch git repository (bin/, dist/, package.json; src/ and plugins/ linked) so the tests
 * can tag commits of their own and run the real CLI and a real hub from it.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { cpSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { engine, makeHome, tempDir, until } from "./helpers.js";
import { archivedRelease, compareVersions, formatVersion, newestRelease, newestVersionTag, parseVersionTag, releaseSync, type Version } from "../src/host/version.js";

// ---- the pure rules -------------------------------------------------------------------------------------------------

test("parseVersionTag reads exactly vX.Y.Z and vX.Y.Z-rc.N, and nothing else", () => {
  assert.deepEqual(parseVersionTag("v1.9.0"), { major: 1, minor: 9, patch: 0, rc: null });
  assert.deepEqual(parseVersionTag("v0.0.0"), { major: 0, minor: 0, patch: 0, rc: null });
  assert.deepEqual(parseVersionTag("v12.30.456"), { major: 12, minor: 30, patch: 456, rc: null });
  assert.deepEqual(parseVersionTag("v2.0.0-rc.3"), { major: 2, minor: 0, patch: 0, rc: 3 });
  assert.deepEqual(parseVersionTag("v1.2.0-rc.10"), { major: 1, minor: 2, patch: 0, rc: 10 });
  for (const notVersion of [
    "", "v", "1.2.3", "V1.2.3", "v1.2", "v1", "v1.2.3.4", "v01.2.3", "v1.02.3", "v1.2.03", "v1.2.3-rc", "v1.2.3-rc.0",
    "v1.2.3-rc.01", "v1.2.3-rc1", "v1.2.3-beta.1", "v1.2.3+build.5", "v1.2.3-rc.1+x", " v1.2.3", "v1.2.3 ", "v1.2.3\n",
    "nightly", "release-1.2.3", "v1.2.3/x", "v-1.2.3", "v1.-2.3", "v١.٢.٣", "v99999999999999999999.0.0",
  ]) assert.equal(parseVersionTag(notVersion), null, JSON.stringify(notVersion));
});

test("formatVersion writes the tag back: parse and format are each other's inverse", () => {
  for (const tag of ["v0.1.0", "v1.9.0", "v1.8.14", "v2.0.0-rc.1", "v10.0.3-rc.12"]) {
    assert.equal(formatVersion(parseVersionTag(tag)!), tag);
  }
  assert.equal(formatVersion({ major: 3, minor: 1, patch: 4, rc: null }), "v3.1.4");
  assert.equal(formatVersion({ major: 3, minor: 1, patch: 4, rc: 2 }), "v3.1.4-rc.2");
});

test("compareVersions orders by major, minor, patch as numbers, an -rc.N before its final release, by N", () => {
  const ordered = [
    "v0.0.1", "v0.1.0", "v0.9.0", "v0.10.0", "v1.0.0-rc.1", "v1.0.0-rc.2", "v1.0.0-rc.10", "v1.0.0", "v1.0.1-rc.1",
    "v1.0.1", "v1.0.2", "v1.0.10", "v1.1.0", "v1.9.9", "v1.10.0", "v2.0.0-rc.1", "v2.0.0", "v10.0.0",
  ].map((tag) => parseVersionTag(tag)!);
  for (let i = 0; i < ordered.length; i++) {
    for (let j = 0; j < ordered.length; j++) {
      assert.equal(compareVersions(ordered[i]!, ordered[j]!), Math.sign(i - j), `${formatVersion(ordered[i]!)} vs ${formatVersion(ordered[j]!)}`);
    }
  }
  const v: Version = { major: 1, minor: 2, patch: 3, rc: null };
  assert.equal(compareVersions(v, { ...v }), 0);
});

test("newestRelease picks the highest final release, never an -rc, and ignores tags that are not versions", () => {
  assert.equal(newestRelease(["v1.8.3", "v1.9.0", "v1.10.0-rc.1", "nightly", "v2.0", "v1.9.1"]), "v1.9.1");
  // Numbers, not text: v1.10.0 is newer than v1.9.9; the order of the list does not matter.
  assert.equal(newestRelease(["v1.10.0", "v1.9.9"]), "v1.10.0");
  assert.equal(newestRelease(["v1.9.9", "v1.10.0"]), "v1.10.0");
  // An -rc of a higher number never wins, however many there are.
  assert.equal(newestRelease(["v2.0.0-rc.1", "v2.0.0-rc.2", "v1.0.0", "v3.0.0-rc.1"]), "v1.0.0");
  // Once the final release of an -rc exists, it is the one.
  assert.equal(newestRelease(["v2.0.0-rc.1", "v2.0.0", "v2.0.0-rc.2"]), "v2.0.0");
  assert.equal(newestRelease(["v2.0.0-rc.1", "latest", "V3.0.0", "3.0.0"]), null);
  assert.equal(newestRelease([]), null);
  // Any iterable: the tags of a Set.
  assert.equal(newestRelease(new Set(["v0.1.0", "v0.2.0"])), "v0.2.0");
});

test("newestVersionTag is the same with trial releases counted: what a commit carrying several tags shows", () => {
  assert.equal(newestVersionTag(["v1.3.0-rc.1", "nightly"]), "v1.3.0-rc.1");
  assert.equal(newestVersionTag(["v1.3.0-rc.1", "v1.3.0", "v1.3.0-rc.2"]), "v1.3.0");
  assert.equal(newestVersionTag(["v1.3.0", "v1.10.0-rc.1"]), "v1.10.0-rc.1");
  assert.equal(newestVersionTag(["nightly", "v1.2", "1.2.3"]), null);
});

// ---- the real CLI and hub in a tagged scratch checkout ------------------------------------------------------------------

/** A copy of the engine that is its own git repository: bin/, dist/ and package.json copied, the rest linked. */
const checkout = tempDir("aa-version-");
after(() => rmSync(checkout, { recursive: true, force: true }));
cpSync(join(engine, "package.json"), join(checkout, "package.json"));
cpSync(join(engine, "bin"), join(checkout, "bin"), { recursive: true });
cpSync(join(engine, "dist"), join(checkout, "dist"), { recursive: true });
// "junction": a folder link Windows makes without admin rights (ignored elsewhere).
for (const linked of ["node_modules", "src", "plugins", "protocol"]) symlinkSync(join(engine, linked), join(checkout, linked), "junction");

const gitEnv = {
  ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.invalid", GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null",
};
function git(...args: string[]): string {
  return execFileSync("git", ["-C", checkout, ...args], { env: gitEnv, encoding: "utf8" }).trim();
}
git("init", "-q");
git("commit", "-q", "--allow-empty", "-m", "first");

/** `agent-autoloop --version` of the scratch checkout, in `lang`. */
function cliVersion(lang = "en"): string {
  const r = spawnSync(process.execPath, [join(checkout, "bin", "agent-autoloop.js"), "--version"], { encoding: "utf8", env: { ...process.env, AGENT_AUTOLOOP_LANG: lang } });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

/** The `version` that `GET /v1/health` of a real hub started from the scratch checkout answers. */
async function healthVersion(): Promise<unknown> {
  const { dir } = makeHome();
  const child = spawn(process.execPath, [join(checkout, "bin", "agent-autoloop.js"), "serve", "--listen", "127.0.0.1:0"], {
    env: { ...process.env, AGENT_AUTOLOOP_HOME: dir, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "" }, stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise((r) => child.once("exit", r));
  try {
    const url = await until(() => /listening on (http:\/\/\S+)/.exec(out)?.[1], 60_000, () => `the hub to listen (output: ${out})`);
    const body = await (await fetch(`${url}/v1/health`)).json() as { ok: boolean; version: unknown };
    assert.equal(body.ok, true);
    return body.version;
  } finally {
    child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a commit without a version tag is unreleased, whatever other tags it carries; the commit is shown", async () => {
  const commit = git("rev-parse", "--short", "HEAD");
  assert.equal(cliVersion(), `unreleased (${commit})`);
  assert.equal(cliVersion("zh"), `未发布 (${commit})`);
  for (const tag of ["nightly", "v1.2", "1.2.3", "v1.2.3-beta.1", "v01.2.3", "release-1.2.3"]) git("tag", tag);
  git("tag", "-a", "-m", "an annotated tag that is no version", "V9.9.9");
  assert.equal(cliVersion(), `unreleased (${commit})`);
  assert.equal(await healthVersion(), "unreleased", "the protocol's word, in every language");
});

test("only a tag on the current commit counts: a release on an earlier commit leaves the next commit unreleased", () => {
  git("tag", "v1.2.3");
  assert.equal(cliVersion(), `v1.2.3 (${git("rev-parse", "--short", "HEAD")})`);
  git("commit", "-q", "--allow-empty", "-m", "second");
  assert.equal(cliVersion(), `unreleased (${git("rev-parse", "--short", "HEAD")})`);
});

test("an -rc tag is the version of its commit until the final release tags the same commit; the newest tag wins", async () => {
  const commit = git("rev-parse", "--short", "HEAD");
  git("tag", "-a", "-m", "trial", "v1.3.0-rc.1");
  git("tag", "latest");
  assert.equal(cliVersion(), `v1.3.0-rc.1 (${commit})`);
  git("tag", "-a", "-m", "final", "v1.3.0");
  git("tag", "v1.3.0-rc.2");
  assert.equal(cliVersion(), `v1.3.0 (${commit})`);
  assert.equal(await healthVersion(), "v1.3.0");
  // Numbers, not text: v1.10.0-rc.1 is newer than v1.3.0.
  git("tag", "v1.10.0-rc.1");
  assert.equal(cliVersion(), `v1.10.0-rc.1 (${commit})`);
});

test("package.json carries no version that could disagree with a tag: it stays 0.0.0", () => {
  assert.equal((JSON.parse(readFileSync(join(engine, "package.json"), "utf8")) as { version: string }).version, "0.0.0");
});

test("a release archive made by git archive knows its version from src/host/release.txt; a checkout's copy of the file says nothing", () => {
  const repo = tempDir("aa-archive-");
  try {
    const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@example.invalid", "-c", "tag.gpgsign=false", "-c", "commit.gpgsign=false", ...args], { cwd: repo, encoding: "utf8" });
    git("init", "--quiet");
    cpSync(join(engine, ".gitattributes"), join(repo, ".gitattributes"));
    cpSync(join(engine, "src", "host", "release.txt"), join(repo, "src", "host", "release.txt"));
    git("add", ".");
    git("commit", "--quiet", "-m", "one");
    assert.equal(archivedRelease(repo), null, "a checkout still holds the placeholders");
    const unpack = (name: string) => {
      const out = join(repo, name);
      execFileSync("sh", ["-c", `mkdir -p "${out}" && git archive HEAD | tar -x -C "${out}"`], { cwd: repo });
      return out;
    };
    const untagged = archivedRelease(unpack("a1"));
    assert.equal(untagged?.tag, null);
    assert.match(untagged?.commit ?? "", /^[0-9a-f]{7,}$/);
    git("tag", "-a", "v1.4.0", "-m", "release");
    const tagged = unpack("a2");
    assert.deepEqual(archivedRelease(tagged), { tag: "v1.4.0", commit: git("rev-parse", "--short", "HEAD").trim() });
    assert.deepEqual(releaseSync(tagged), archivedRelease(tagged));
    git("commit", "--quiet", "--allow-empty", "-m", "two");
    // One commit past the release: describe says v1.4.0-1-g…, which is no version.
    assert.equal(archivedRelease(unpack("a3"))?.tag, null);
    git("tag", "nightly");
    assert.equal(archivedRelease(unpack("a4"))?.tag, null);
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});
