/**
 * The CLI's start (issue 15): `--help`, `--version`, `status` and `answer` load only what they use — never the hub,
 * SQLite, Hono, the worker or the rules parser — and every command that loads its modules when it runs still fails
 * with one line when the home is not set up. Real child processes of bin/agent-autoloop.js (`npm run build` first);
 * what a process loads is recorded by a module resolve hook. How long `--help` takes is a figure of
 * `npm run benchmark`, not asserted here.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { engine, hubFixture, tempDir } from "./helpers.js";

const bin = join(engine, "bin", "agent-autoloop.js");
const dir = tempDir("aa-cli-start-");
after(() => rmSync(dir, { recursive: true, force: true }));

// A resolve hook that appends every module URL the process resolves to the file named by LOADED_LOG.
const hooks = join(dir, "hooks.mjs");
writeFileSync(hooks, `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.LOADED_LOG, r.url + "\\n");
  return r;
}
`);
const register = join(dir, "register.mjs");
writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);

let runs = 0;
/**
 * Runs the CLI with `args` on `home` without blocking this process (a hub may run in it); returns its exit code, its
 * output and the engine's files and packages it loaded.
 */
async function run(args: string[], home: string, extra: Record<string, string> = {}) {
  const log = join(dir, `loaded-${++runs}.txt`);
  writeFileSync(log, "");
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", LOADED_LOG: log, ...extra };
  delete env.AGENT_AUTOLOOP_URL;
  const r = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ["--import", register, bin, ...args], { env, encoding: "utf8" }, (e, stdout, stderr) =>
      resolve({ status: e ? Number((e as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
  // A package by its name wherever node_modules really is (a worktree may link it from another checkout).
  const shown = (u: string) => {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u);
    return m ? `node_modules/${m[1]}` : u.slice(pathToFileURL(engine).href.length + 1);
  };
  const loaded = [...new Set(readFileSync(log, "utf8").split("\n").filter((u) => u.startsWith("file:")))].map(shown);
  return { code: r.status, out: r.stdout.trim(), err: r.stderr.trim(), loaded: [...new Set(loaded)].sort() };
}

test("--help and --version load commander, the catalog, print.ts, log-streams.ts, home-commands.ts (types only) and the paths (every command fixes its PATH: issue 26 round 53); --version also the version", async () => {
  const help = await run(["--help"], join(dir, "none"));
  assert.equal(help.code, 0, help.err);
  assert.match(help.out, /^Usage: agent-autoloop \[options\] \[command\]/);
  assert.deepEqual(help.loaded, ["bin/agent-autoloop.js", "dist/src/cli/commander-text.js", "dist/src/cli/home-commands.js", "dist/src/cli/log-streams.js", "dist/src/cli/main.js", "dist/src/cli/print.js", "dist/src/common/paths.js", "dist/src/i18n/messages.js", "node_modules/commander"]);
  const version = await run(["--version"], join(dir, "none"));
  assert.equal(version.code, 0, version.err);
  assert.deepEqual(version.loaded, [
    "bin/agent-autoloop.js", "dist/src/cli/commander-text.js", "dist/src/cli/home-commands.js", "dist/src/cli/log-streams.js", "dist/src/cli/main.js", "dist/src/cli/print.js", "dist/src/common/paths.js",
    "dist/src/host/version.js", "dist/src/i18n/messages.js", "node_modules/commander",
  ]);
});

test("status and answer load the client, its answer checks and what finds this home's hub: no hub, database, server or rules parser", async () => {
  const f = await hubFixture();
  try {
    const event = await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x" });
    assert.equal(event.status, 200);
    const { job } = (await f.call("GET", "/v1/work?claim=c1&capacity=1", f.keys.worker)).body;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: "Go?", options: ["yes", "no"] }] });
    const client = [
      "bin/agent-autoloop.js", "dist/src/cli/commander-text.js", "dist/src/cli/connect.js", "dist/src/cli/home-commands.js", "dist/src/cli/log-streams.js", "dist/src/cli/main.js", "dist/src/cli/print.js", "dist/src/common/paths.js", "dist/src/common/proc.js",
      "dist/src/host/home-files.js", "dist/src/host/home.js", "dist/src/host/listen.js", "dist/src/host/lock.js",
      "dist/src/i18n/messages.js", "dist/src/kernel/limits.js", "dist/src/kernel/names.js",
      // config.json read with positions and checked by its published schema (issue 27; compiled ahead of time)
      "dist/src/protocol/config-file.js", "dist/src/protocol/config-validator.generated.js", "dist/src/protocol/file-problems.js",
      "dist/src/protocol/json-file.js", "node_modules/jsonc-parser",
      // the client checks every answer against its published shape (ahead-of-time validators, no schema library)
      "dist/src/protocol/client.js", "dist/src/protocol/describe.js", "dist/src/protocol/endpoints.js",
      "dist/src/protocol/response-check.js", "dist/src/protocol/responses.generated.js",
      // its one runtime helper: string lengths in code points (ajv/dist/runtime/ucs2length.js, 20 lines), since a
      // transcript's answer has bounded strings (issue 30)
      "node_modules/ajv",
      // files.ts reads the answer-file safely; its one check of what a path is (file-checks.ts, node:fs only)
      "dist/src/worker/files.js", "dist/src/common/file-checks.js", "node_modules/commander",
      // the hub's proof of the master key, checked before any key is sent (issue 26 round 5, F3)
      "dist/src/protocol/hub-proof.js",
    ];
    const status = await run(["status"], f.home.dir);
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, /#1 ask \[alerts\] Go\?/);
    // status also asks what keeps a local channel from starting (config-keys.ts, channel-setup.ts: the catalog and the secret names only).
    assert.deepEqual(status.loaded, [...client, "dist/src/cli/config-keys.js", "dist/src/cli/status.js", "dist/src/host/channel-setup.js"].sort());
    const answer = await run(["answer", "1", "0"], f.home.dir);
    assert.equal(answer.code, 0, answer.err);
    assert.equal(answer.out, "card 1: answered — Go?");
    assert.deepEqual(answer.loaded, [...client].sort());
  } finally {
    await f.close();
  }
});

test("each command that needs a home says so in one line when there is none, and exits 1", async () => {
  const none = join(dir, "not-set-up");
  for (const args of [["status"], ["answer", "1", "0"], ["resolve", "1"], ["stop", "1"], ["pause", "r"], ["resume", "r"], ["run", "r"], ["why", "1"], ["doctor"], ["mcp"], ["key", "new", "worker", "w"], ["key", "remove", "worker", "w"], ["plugins", "list"], ["plugins", "inspect", "x"], ["plugins", "doctor"], ["console"], ["console", "--end"]]) {
    const r = await run(args, none);
    assert.deepEqual([r.code, r.err, r.out], [1, `agent-autoloop: ${none} is not set up yet; run agent-autoloop init first`, ""], args.join(" "));
  }
});
