/** The CLI as a user runs it: a real child process of bin/agent-autoloop.js. */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync, execFile } from "node:child_process";
import { writeFileSync, statSync, rmSync, readFileSync, chmodSync, mkdirSync, symlinkSync, existsSync } from "node:fs";
import { join } from "node:path";
import { engine, tempDir, hubFixture, baseRules, until } from "./helpers.js";
import { readMasterKey } from "../src/host/home.js";
import { Store } from "../src/host/store.js";
import { readRulesInput } from "../src/host/hub.js";
import { startServe } from "../src/host/serve.js";
import { findProgram, programWritable } from "../src/sdk/index.js";

const bin = join(engine, "bin", "agent-autoloop.js");
const dir = tempDir("aa-cli-");
after(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], extraEnv: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [bin, ...args], {
    env: { ...process.env, AGENT_AUTOLOOP_HOME: dir, AGENT_AUTOLOOP_LANG: "en", AGENT_AUTOLOOP_URL: "http://127.0.0.1:1", ...extraEnv },
    encoding: "utf8",
  });
  return { code: r.status, out: r.stdout.trim(), err: r.stderr.trim() };
}

/**
 * doctor's line for an agent's program found at `program`: with the note that it is not run when this user could
 * change it (issue 26 round 2 #8; as root always, and a temporary folder of one's own always).
 */
function programLine(agent: string, program: string): string {
  const writable = programWritable(program);
  return `ok   agent ${agent}: ${program}${writable === null ? "" : ` (not run, its version not checked: this user can change ${writable}, and agents run as this user)`}`;
}

/** Like run(), without blocking this process: the hub of a fixture runs in this process. */
function runAsync(args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], {
      env: { ...process.env, AGENT_AUTOLOOP_HOME: dir, AGENT_AUTOLOOP_LANG: "en", AGENT_AUTOLOOP_URL: "http://127.0.0.1:1", ...extraEnv },
      encoding: "utf8",
    }, (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout.trim(), err: stderr.trim() }));
  });
}

test("--version shows the release tag of this commit, or 'unreleased', and the commit; so do -V and -V among other short flags", () => {
  const versions = [["--version"], ["-V"], ["-Vh"], ["-Vx"], ["status", "-V"]].map((args) => run(args));
  assert.deepEqual(versions.map((r) => r.code), [0, 0, 0, 0, 0]);
  assert.match(versions[0]!.out, /^(v\d+\.\d+\.\d+\S*|unreleased)( \([0-9a-f]{7,}\))?$/);
  assert.deepEqual(versions.map((r) => r.out), Array(5).fill(versions[0]!.out));
});

test("npx agent-autoloop works from the checkout, and the test leaves dist/ as it is", () => {
  // The first npx of a checkout path links it into npx's cache and runs its `prepare` (tsc) there: it would rewrite
  // dist/ while other test files run the CLI from it (seen: "main is not a function", a missing export, in the full
  // run on a fresh clone). A user's first npx may rebuild; the test must not.
  const built = join(engine, "dist", "src", "cli", "main.js");
  const before = statSync(built).mtimeMs;
  const r = spawnSync("npx", ["--no", "--", "agent-autoloop", "--version"], { cwd: engine, encoding: "utf8", env: { ...process.env, AGENT_AUTOLOOP_LANG: "en", npm_config_ignore_scripts: "true" } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout.trim(), /^(v\d|unreleased)/);
  assert.equal(statSync(built).mtimeMs, before, "dist/ rebuilt by npx during the tests");
});

test("init creates the home with private files once; a second init changes nothing", () => {
  const first = run(["init"]);
  assert.equal(first.code, 0);
  assert.equal(first.out, `created ${dir}`);
  const before = readFileSync(join(dir, "config.json"), "utf8");
  assert.equal(statSync(join(dir, "master.key")).mode & 0o777, 0o600);
  assert.equal(statSync(join(dir, "config.json")).mode & 0o777, 0o600);
  assert.equal(statSync(join(dir, "hub.db")).mode & 0o777, 0o600);
  const second = run(["init"]);
  assert.equal(second.out, `${dir} is already set up; nothing changed`);
  assert.equal(readFileSync(join(dir, "config.json"), "utf8"), before);
  const config = JSON.parse(before);
  assert.deepEqual(Object.keys(config), ["listen", "publicUrl", "owner", "worker", "channels"]);
  assert.equal(config.listen, "127.0.0.1:8787");
  assert.deepEqual(config.worker.name, "local");
  assert.equal(config.worker.capacity, 2);
  assert.deepEqual(Object.keys(config.channels), ["desktop", "file"]);
  const check = run(["check"]);
  assert.equal(check.code, 0, check.err);
  assert.match(check.out, /is valid: 1 rules, 1 agents, 1 sources, 2 channels, 0 elsewhere tasks$/);
});

test("doctor finds each local agent's program and says what to do for a missing one", () => {
  const ok = run(["doctor"]);
  assert.equal(ok.code, 0, ok.out);
  assert.ok(ok.out.startsWith(`ok   rules.json: 1 rules, 1 agents\n${programLine("demo-agent", findProgram("node")!)}\n`), ok.out);
  const rulesFile = join(dir, "rules.json");
  const before = readFileSync(rulesFile, "utf8");
  // A plugin may be named like a property every object inherits: it is a plugin like any other.
  mkdirSync(join(dir, "plugins", "constructor"), { recursive: true });
  writeFileSync(join(dir, "plugins", "constructor", "agent.mjs"), 'export default { command: () => ["true"], read: () => ({ text: "Done: ok" }) };\n');
  writeFileSync(rulesFile, JSON.stringify({ sources: {}, agents: { ghost: { worker: "local", use: "command", command: ["no-such-agent-cli", "{prompt}"] }, other: { worker: "elsewhere", use: "claude" }, odd: { worker: "local", use: "nope" }, ctor: { worker: "local", use: "constructor" } }, channels: {}, rules: [] }));
  try {
    const bad = run(["doctor"]);
    assert.equal(bad.code, 1, bad.err);
    assert.match(bad.out, /\nok   agent ctor: plugin constructor$/m);
    assert.match(bad.out, /FIX  agent ghost: program no-such-agent-cli is not on PATH — install it, or set "program" to its full path/);
    assert.match(bad.out, /ok   agent other: runs on worker elsewhere, not here/);
    assert.match(bad.out, /FIX  agent odd: no agent plugin "nope"/);
  } finally {
    writeFileSync(rulesFile, before);
    rmSync(join(dir, "plugins", "constructor"), { recursive: true });
  }
});

test("doctor says whether the sandbox hides this home from the local agents, and why not", () => {
  const ok = run(["doctor"]);
  assert.equal(ok.code, 0, ok.out);
  assert.match(ok.out, /\nok   sandbox: on for demo-agent \(bubblewrap \d+\.\d+\.\d+\): this home is hidden from them$/m);
  // No bubblewrap on PATH (only node): a FIX on Linux, with what to install.
  const bin = join(dir, "bin-no-bwrap");
  mkdirSync(bin, { recursive: true });
  symlinkSync(process.execPath, join(bin, "node"));
  const missing = run(["doctor"], { PATH: bin });
  assert.equal(missing.code, 1, missing.out);
  assert.match(missing.out, /\nFIX  sandbox: off for demo-agent, which can read this home's keys: bubblewrap \(bwrap\) is not installed: install it \(Debian and Ubuntu: apt-get install bubblewrap\)$/m);
  // A bubblewrap that cannot make its namespaces here (a container, a kernel that forbids them): its own words.
  writeFileSync(join(bin, "bwrap"), "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
  chmodSync(join(bin, "bwrap"), 0o755);
  const broken = run(["doctor"], { PATH: bin });
  assert.equal(broken.code, 1, broken.out);
  assert.match(broken.out, new RegExp(`\nFIX  sandbox: ${join(bin, "bwrap")} does not run here \\(bwrap: No permissions to create new namespace\\), so runs of demo-agent fail — let it make namespaces, or set "sandbox": false on them$`, "m"));
  rmSync(bin, { recursive: true });
  const rulesFile = join(dir, "rules.json");
  const before = readFileSync(rulesFile, "utf8");
  try {
    // Turned off by the owner: a note, not a fault. A sandboxed agent's rule working inside the home: a FIX.
    writeFileSync(rulesFile, JSON.stringify({ sources: {}, channels: {}, agents: {
      open: { worker: "local", use: "command", command: ["node"], sandbox: false },
      boxed: { worker: "local", use: "command", command: ["node"] },
      hosted: { worker: "local", use: "command", command: ["node"], network: "host" },
    }, rules: [{ name: "inside", when: { cron: "0 0 1 1 *" }, to: "boxed", cwd: join(dir, "plugins") }, { name: "fine", when: { cron: "0 0 1 1 *" }, to: "open", cwd: dir }] }));
    const r = run(["doctor"]);
    assert.equal(r.code, 1, r.out);
    // Issue 26 round 33, F33a-1: the sandboxed agents' network, where pasta is installed (CI installs it).
    const pastaFound = run(["doctor"]).out.includes("network: boxed have a network of their own");
    assert.match(r.out, new RegExp(`\\nok   agent open: note: sandbox off \\("sandbox": false in rules\\.json\\), so it can read this home's keys\\nok   sandbox: on for boxed, hosted \\(bubblewrap [\\d.]+\\): this home is hidden from them\\nok   network: hosted says "network": "host" and shares this computer's network\\n${pastaFound ? "ok   network: boxed have a network of their own \\(/\\S+/pasta\\)" : "FIX  network: boxed share this computer's network"}[^\\n]*\\nFIX  rule inside: cwd \\S+ is inside this home, which the sandbox hides from agent boxed — choose another folder$`, "m"));
    assert.doesNotMatch(r.out, /rule fine/);
  } finally {
    writeFileSync(rulesFile, before);
  }
});

test("doctor checks acp and dsh agents: the ACP program; a dsh this user could have written is not run (issue 26 round 2 #8, reported case)", () => {
  const rulesFile = join(dir, "rules.json");
  const before = readFileSync(rulesFile, "utf8");
  // The reported case: the dsh agent's program lives in an agents' working folder, and an agent rewrote it.
  const proj = join(dir, "proj-dsh", "bin");
  mkdirSync(proj, { recursive: true });
  const ran = join(dir, "dsh-ran.txt");
  const planted = join(proj, "dsh");
  writeFileSync(planted, `#!/bin/sh\necho planted >> ${ran}\necho "dsh 0.1.9"\n`);
  chmodSync(planted, 0o755);
  writeFileSync(rulesFile, JSON.stringify({ sources: {}, channels: {}, rules: [], agents: {
    bridge: { worker: "local", use: "acp", command: ["node", "adapter.js"] },
    lost: { worker: "local", use: "acp", command: ["no-such-acp-adapter"] },
    deepseek: { worker: "local", use: "dsh", program: planted },
    // Varied: the same planted dsh found on PATH by name.
    named: { worker: "local", use: "dsh" },
  } }));
  try {
    const r = run(["doctor"], { PATH: `${proj}:${process.env.PATH}` });
    assert.equal(r.code, 1);
    assert.equal(existsSync(ran), false, "doctor ran a dsh this user (and so an agent) could have written");
    assert.ok(r.out.includes(`\n${programLine("bridge", findProgram("node")!)}\n`), r.out);
    assert.match(r.out, /\nFIX  agent lost: program no-such-acp-adapter is not on PATH/);
    assert.ok(r.out.includes(`\nok   agent deepseek: ${planted} (not run, its version not checked: this user can change ${planted}, and agents run as this user)\n`), r.out);
    assert.ok(r.out.includes(`\nok   agent named: ${planted} (not run, its version not checked: this user can change ${planted}, and agents run as this user)\n`), r.out);
    assert.doesNotMatch(r.out, /too old|0\.1\.9/);
  } finally {
    writeFileSync(rulesFile, before);
    rmSync(join(dir, "proj-dsh"), { recursive: true });
  }
});

test("doctor runs no agent's program: it checks that each is there and executable (issue 26, finding 6)", () => {
  // The reported case: a command agent's script ran outside the sandbox and its output was shown as the version.
  // Varied: the first word of a command agent's `command`, an acp agent's, a claude agent's `program`, a name found in
  // PATH; and a file that is there but not executable, which is a FIX.
  const rulesFile = join(dir, "rules.json");
  const before = readFileSync(rulesFile, "utf8");
  const bin = join(dir, "bin-doctor");
  mkdirSync(bin, { recursive: true });
  const ran = join(dir, "ran.txt");
  const script = (name: string) => {
    const f = join(bin, name);
    writeFileSync(f, `#!/bin/sh\necho "${name} $*" >> ${ran}\necho "v6.6.6 from ${name}"\n`);
    chmodSync(f, 0o755);
    return f;
  };
  const mine = script("my-agent.sh");
  const bridge = script("my-acp.sh");
  const claude = script("my-claude");
  script("on-path-agent");
  const plain = join(bin, "not-executable.sh");
  writeFileSync(plain, `#!/bin/sh\necho "plain" >> ${ran}\n`);
  chmodSync(plain, 0o644);
  writeFileSync(rulesFile, JSON.stringify({ sources: {}, channels: {}, rules: [], agents: {
    mine: { worker: "local", use: "command", command: [mine, "{prompt}"], sandbox: false },
    bridge: { worker: "local", use: "acp", command: [bridge], sandbox: false },
    cc: { worker: "local", use: "claude", program: claude, sandbox: false },
    named: { worker: "local", use: "command", command: ["on-path-agent", "{prompt}"], sandbox: false },
    plain: { worker: "local", use: "command", command: [plain], sandbox: false },
  } }));
  try {
    const r = run(["doctor"], { PATH: `${bin}:${process.env.PATH}` });
    assert.equal(r.code, 1, r.out);
    assert.throws(() => readFileSync(ran, "utf8"), /ENOENT/, "doctor ran an agent's program");
    assert.doesNotMatch(r.out, /v6\.6\.6/);
    assert.ok(r.out.includes(`\n${programLine("mine", mine)}\n`), r.out);
    assert.ok(r.out.includes(`\n${programLine("bridge", bridge)}\n`), r.out);
    assert.ok(r.out.includes(`\n${programLine("cc", claude)}\n`), r.out);
    assert.ok(r.out.includes(`\n${programLine("named", join(bin, "on-path-agent"))}\n`), r.out);
    assert.match(r.out, new RegExp(`\nFIX  agent plain: program ${plain} is not executable — make it executable \\(chmod \\+x\\), or set "program" to the program to run$`, "m"));
  } finally {
    writeFileSync(rulesFile, before);
    rmSync(bin, { recursive: true });
  }
});

test("check reports the line and column of a problem and exits 1, without a hub", () => {
  const f = join(dir, "draft.json");
  writeFileSync(f, '{\n  "rules": [ { "name": "r", "to": "a" } ]\n}');
  const r = run(["check", f]);
  assert.equal(r.code, 1);
  assert.equal(r.err, `agent-autoloop: ${f}:2:14: rules[0].when: required: {"source", "types"}, {"intent"} or {"cron"}`);
  const missing = run(["check", join(dir, "nope.json")]);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /nope\.json: no such file \(ENOENT\)$/);
});

test("key new and key remove work without a running hub; bad kinds are refused", () => {
  const k = run(["key", "new", "source", "demo"]);
  assert.equal(k.code, 0, k.err);
  assert.match(k.out, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(run(["key", "remove", "source", "demo"]).out, "removed");
  assert.equal(run(["key", "remove", "source", "demo"]).out, "no such key");
  const bad = run(["key", "new", "admin", "x"]);
  assert.equal(bad.code, 1);
  assert.equal(bad.err, "agent-autoloop: kind must be source, worker, channel, owner or metrics");
  // ".." could be made without a hub but never removed through one (URLs drop it): refused like any name rules.json cannot use.
  for (const name of ["..", ".", "a b"]) {
    const r = run(["key", "new", "source", name]);
    assert.deepEqual([r.code, r.err], [1, "agent-autoloop: name: letters, digits, _ . - (at most 100), starting with a letter or digit"], name);
  }
  // A key made before that check, with such a name, can still be removed.
  const old = run(["key", "remove", "source", "a b"]);
  assert.deepEqual([old.code, old.out], [0, "no such key"]);
});

test("commands that need the hub say how to start it", () => {
  const r = run(["status"]);
  assert.equal(r.code, 1);
  assert.match(r.err, /^agent-autoloop: cannot reach the hub at http:\/\/127\.0\.0\.1:1: .*Start it with agent-autoloop serve$/);
});

test("status, answer, resolve and stop talk to a running hub", async () => {
  const f = await hubFixture();
  try {
    writeFileSync(join(f.home.dir, "config.json"), JSON.stringify({ ...JSON.parse(readFileSync(f.home.config, "utf8")) }));
    await f.call("POST", "/v1/events", f.keys.source, { id: "1", type: "alert.x", subject: "#9" });
    const job = (await f.call("GET", "/v1/work?claim=x", f.keys.worker)).body.job;
    await f.call("POST", "/v1/runs/1/result", job.token, { outcome: "done", summary: "asked", ask: [{ title: "Ship it?", options: ["yes", "no"], recommend: 1 }, { title: "Other?", options: ["x"] }] });
    await f.call("POST", "/v1/events", f.keys.source, { id: "2", type: "alert.x" });
    const env = { AGENT_AUTOLOOP_HOME: f.home.dir, AGENT_AUTOLOOP_URL: f.url };
    const status = await runAsync(["status"], env);
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, /Cards waiting for you \(2\):\n {2}#1 ask \[alerts\] Ship it\?\n {6}0\) yes\n {6}1\) no {2}← recommended\n {6}→ agent-autoloop answer 1 <0-1>/);
    assert.match(status.out, /#1 alerts · done .* · w1\n {6}asked/);
    assert.match(status.out, /Active runs \(1\):\n {2}#2 alerts · queued · since /);
    const json = JSON.parse((await runAsync(["status", "--json"], env)).out);
    assert.equal(json.cards.length, 2);
    assert.equal((await runAsync(["answer", "1", "1"], env)).out, "card 1: answered — Ship it?");
    const twice = await runAsync(["answer", "1", "0"], env);
    assert.equal(twice.code, 1);
    assert.equal(twice.err, "agent-autoloop: this card was already answered");
    assert.equal((await runAsync(["answer", "2", "5"], env)).err, "agent-autoloop: choice: must be 0 to 0");
    assert.equal((await runAsync(["resolve", "2", "not", "needed"], env)).out, "card 2: closed");
    assert.equal((await runAsync(["stop", "2"], env)).out, "run 2: cancelled");
    assert.equal((await runAsync(["stop", "99"], env)).err, "agent-autoloop: no such run: 99");
    const st = (await f.call("GET", "/v1/state", f.keys.owner)).body;
    assert.equal(st.recentCards.find((c: any) => c.id === 2).result, "No longer needed: not needed");
    assert.equal((await runAsync(["answer", "1", "abc"], env)).err, "agent-autoloop: choice: the option's number (0, 1, …); use --text for your own words");
    assert.equal((await runAsync(["status", "--before", "abc"], env)).err, "agent-autoloop: no such run: abc");
    assert.equal((await runAsync(["answer", "abc", "0"], env)).err, "agent-autoloop: no such card: abc", "not 'cannot reach the hub'");
    assert.equal((await runAsync(["pause", "nope"], env)).err, "agent-autoloop: no such rule: nope", "the protocol's Chinese text, said in English");
    // rotating the owner key the CLI uses updates config.json, so the CLI keeps working
    const rotated = await runAsync(["key", "new", "owner", "owner"], env);
    assert.equal(rotated.code, 0, `${rotated.err} ${rotated.out}`);
    assert.equal(JSON.parse(readFileSync(f.home.config, "utf8")).owner, rotated.out);
    assert.equal((await runAsync(["status"], env)).code, 0);
    assert.equal((await f.call("GET", "/v1/state", f.keys.owner)).status, 401, "the old owner key is gone");
  } finally {
    await f.close();
  }
});

test("cron times missed while the hub was down: status shows how many and the last one, /v1/state has them, one fyi card", async () => {
  const f = await hubFixture();
  await f.running.close();
  let running = f.running;
  try {
    // This hub last ran in June 2020, when its rules got a cron rule for every 1 January (UTC).
    writeFileSync(f.home.rules, JSON.stringify({ ...baseRules, rules: [...baseRules.rules, { name: "yearly", when: { cron: "0 0 1 1 *" }, to: "bot" }] }));
    const master = readMasterKey(f.home);
    const store = new Store({ path: f.home.database, master });
    store.commit([{ input: readRulesInput(f.home.rules, "en"), now: Date.parse("2020-06-01T00:00:00Z") }], { master, lang: "en", publicUrl: null });
    store.close();
    running = await startServe(f.home, { lang: "en", log: () => {} });
    const year = new Date().getUTCFullYear();
    const missed = year - 2021; // 1 January 2021 to the year before this one; this year's ran
    const owner = { authorization: `Bearer ${f.keys.owner}` };
    const state = await until(async () => {
      const s = await (await fetch(`${running.url}/v1/state`, { headers: owner })).json() as any;
      return s.runs.length > 0 && s;
    }, 10_000, "the latest missed time to run");
    const line = state.lines.find((l: any) => l.name === "yearly");
    assert.deepEqual([line.skippedAt, line.skippedCount], [`${year - 1}-01-01T00:00:00.000Z`, missed]);
    assert.deepEqual(state.runs.map((r: any) => r.rule), ["yearly"], "only the latest time ran");
    assert.deepEqual(state.recentCards.map((c: any) => [c.fyi, c.rule, c.title]), [[true, "yearly", `"yearly": ${missed} missed cron time(s) while the hub was down`]]);
    const status = await runAsync(["status"], { AGENT_AUTOLOOP_HOME: f.home.dir, AGENT_AUTOLOOP_URL: running.url });
    assert.equal(status.code, 0, status.err);
    const f2 = new Intl.DateTimeFormat("en-CA", { month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
    const p = Object.fromEntries(f2.formatToParts(new Date(Date.UTC(year - 1, 0, 1))).map((x) => [x.type, x.value]));
    const last = `${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
    assert.ok(status.out.includes(`  yearly ← cron 0 0 1 1 * → bot · queued 1 · running 0 · next `), status.out);
    assert.ok(status.out.includes(` · skipped ${missed}× (last ${last})`), status.out);
  } finally {
    await running.close();
    rmSync(f.home.dir, { recursive: true, force: true });
  }
});

test("no --help of any command, in either language, shows commander's own \"(default: …)\" after our text (issue 15)", () => {
  // Each language is a process of its own: the CLI picks it once, from the environment. Every command's help, walked.
  const walk = `
    const { program } = await import(${JSON.stringify(join(engine, "dist", "src", "cli", "main.js"))});
    const out = [];
    // Commander shows a default when it has one, except true/false of a flag (its Help.optionDescription).
    const shown = (x) => x.defaultValue !== undefined && !(x.isBoolean?.() && typeof x.defaultValue === "boolean");
    const visit = (c, path) => {
      out.push([path, c.helpInformation(), [...c.options, ...c.registeredArguments].filter(shown).map((x) => x.flags ?? x.name())]);
      for (const s of c.commands) visit(s, [...path, s.name()]);
    };
    visit(await program(["node", "agent-autoloop"]), []);
    process.stdout.write(JSON.stringify(out));`;
  for (const lang of ["zh", "en"]) {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", walk], { env: { PATH: process.env.PATH!, AGENT_AUTOLOOP_LANG: lang, AGENT_AUTOLOOP_HOME: tempDir() }, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const helps = JSON.parse(r.stdout) as [string[], string, string[]][];
    assert.ok(helps.length > 20, `${helps.length} commands`);
    const serve = helps.find(([path]) => path.join(" ") === "serve")![1];
    assert.match(serve, /--plugins <dir>/);
    for (const [path, help, defaults] of helps) {
      assert.deepEqual(defaults, [], `${lang} ${path.join(" ")} --help:\n${help}`);
      // Our own English texts may say "(default: …)"; the Chinese ones say 默认, so any "(default:" there is commander's.
      if (lang === "zh") assert.ok(!help.includes("(default:"), `${path.join(" ")} --help:\n${help}`);
    }
  }
});

test("conformance with a missing --config file and init over a home that is a file say so in the catalog's words (issue 15)", () => {
  const missing = join(tempDir(), "nonexist.json");
  const conf = run(["conformance", "http://127.0.0.1:1", "--config", missing], { AGENT_AUTOLOOP_LANG: "zh" });
  assert.equal(conf.code, 1);
  assert.equal(conf.err, `agent-autoloop：${missing}：没有这个文件或目录`);
  assert.equal(run(["conformance", "http://127.0.0.1:1", "--config", missing]).err, `agent-autoloop: ${missing}: no such file or folder`);
  const file = join(tempDir(), "home-is-a-file");
  writeFileSync(file, "x");
  for (const [lang, text] of [
    ["zh", `agent-autoloop：${file} 是个文件，agent-autoloop 要在这里放一个目录：把这个文件移走或删掉，再试一次`],
    ["en", `agent-autoloop: ${file} is a file where agent-autoloop keeps a folder: move or remove that file, then try again`],
  ] as const) {
    const init = run(["init"], { AGENT_AUTOLOOP_HOME: file, AGENT_AUTOLOOP_LANG: lang });
    assert.equal(init.code, 1);
    assert.equal(init.err, text);
  }
});
