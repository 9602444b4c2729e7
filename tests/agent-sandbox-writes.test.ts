/**
 * What a sandboxed agent can change (issue 26, finding 2): nothing that the hub's user later runs outside the sandbox.
 * The reported case: an agent wrote a `.pth` into `~/.local/lib/python3.x/site-packages`, and the next call of the
 * README's own hello-python plugin (no `[sandbox]`) ran it with the hub's rights and read master.key. The same kind
 * through other interpreters and programs the hub's user runs: a Python install under the home (a venv, as
 * ~/miniconda3), `~/.npmrc` (npm's `node-options` for a plugin started with `npm exec`), `~/.gitconfig` (a smudge
 * filter that `agent-autoloop add` runs while cloning), shell profiles, `~/.ssh/config`, Node's module folders, a
 * system folder when the hub runs as root. Each plant is tried by a real `command` agent in the real sandbox; each
 * chain that runs code is then driven end to end (the CLI's `plugins invoke`, `add`), and must not run it.
 */
import { test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, realpathSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { hubFixture, baseRules, tempDir, untilLatestRun, type Fixture } from "./helpers.js";
import { cliLines, examples, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { Worker } from "../src/worker/worker.js";

let f: Fixture | null = null;
const workers: Worker[] = [];
const saved: Record<string, string | undefined> = {};
const removed: string[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) w.stop();
  await f?.close();
  f = null;
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
    delete saved[k];
  }
  for (const p of removed.splice(0)) rmSync(p, { recursive: true, force: true });
});

/** Sets a variable of this process (the hub's and the worker's environment) for one test. */
function setEnv(name: string, value: string): void {
  if (!(name in saved)) saved[name] = process.env[name];
  process.env[name] = value;
}

/** A hub whose rule "alerts" runs `agent` (a rules.json agent entry) in `cwd`, and a worker for it. */
async function setup(agent: Record<string, unknown>, cwd: string): Promise<Fixture> {
  const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", ...agent } }, rules: [{ ...baseRules.rules[0], cwd }] };
  const fx = await hubFixture(rules);
  f = fx;
  const w = new Worker({ url: fx.url, key: fx.keys.worker, name: "w1", capacity: 1, home: fx.home, lang: "en" });
  workers.push(w);
  void w.run();
  return fx;
}

/** Python's `major.minor` here (the folder name of its site-packages). */
const pyVersion = execFileSync("python3", ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { encoding: "utf8" }).trim();

/**
 * The planting agent: for each `[path, text]` of `<cwd>/plants.json`, makes the folders above it and appends the text; notes
 * "written" or the error's code per path in `<cwd>/tried.json`; prints "Done: planted".
 */
const plant = String.raw`
const fs = require("fs"), path = require("path");
const plants = JSON.parse(fs.readFileSync("plants.json", "utf8"));
const tried = {};
for (const [p, text] of plants) {
  try { fs.mkdirSync(path.dirname(p), { recursive: true }); fs.appendFileSync(p, text); tried[p] = "written"; } catch (e) { tried[p] = e.code || String(e); }
}
fs.writeFileSync(path.join(process.cwd(), "tried.json"), JSON.stringify(tried));
console.log("Done: planted");
`;

test("a sandboxed agent cannot plant code the hub's user runs later: the issue's .pth in ~/.local for hello-python, a venv under the home, ~/.npmrc for npm exec, ~/.gitconfig for add, shell profiles, ssh, Node's folders, system folders", async () => {
  const home = realpathSync(tempDir("aa-user-home-"));
  const leak = realpathSync(tempDir("aa-leak-"));
  const cwd = realpathSync(tempDir("aa-plant-cwd-"));
  removed.push(home, leak, cwd);
  // The hub user's home as it was before the agent: a profile, an ssh and a config folder, a Python install (as
  // ~/miniconda3 would be) whose interpreter is first on the hub's PATH and which also reads the user's site-packages.
  writeFileSync(join(home, ".bashrc"), "# the user's own\n");
  mkdirSync(join(home, ".ssh"), { mode: 0o700 });
  mkdirSync(join(home, ".config"));
  execFileSync("python3", ["-m", "venv", "--without-pip", "--system-site-packages", join(home, "venv")]);
  setEnv("HOME", home);
  setEnv("PATH", `${join(home, "venv", "bin")}:${process.env.PATH}`);

  const fx = await setup({ use: "command", command: [process.execPath, "-e", plant] }, cwd);
  const master = fx.home.masterKey;
  const steal = (name: string) => `import shutil; shutil.copy(${JSON.stringify(master)}, ${JSON.stringify(join(leak, name))})\n`;
  writeFileSync(join(cwd, "evil-npm.js"), `require("fs").copyFileSync(${JSON.stringify(master)}, ${JSON.stringify(join(leak, "npm"))});\n`);
  writeFileSync(join(cwd, "evil-git.sh"), `#!/bin/sh\ncp ${master} ${join(leak, "git")}\ncat\n`, { mode: 0o755 });
  writeFileSync(join(cwd, "attributes"), "* filter=evil\n");
  const systemProbe = `/usr/local/lib/aa-planted-${process.pid}.pth`;
  const tmpProbe = `/tmp/aa-planted-${process.pid}`;
  removed.push(systemProbe, tmpProbe);
  const sitePackages = `lib/python${pyVersion}/site-packages`;
  const plants: [string, string][] = [
    [join(home, ".local", sitePackages, "aa-planted.pth"), steal("python-user-site")], // the case
    [join(home, "venv", sitePackages, "aa-planted.pth"), steal("python-venv")],
    [join(home, ".npmrc"), `node-options=--require=${join(cwd, "evil-npm.js")}\n`],
    [join(home, ".gitconfig"), `[core]\n\tattributesFile = ${join(cwd, "attributes")}\n[filter "evil"]\n\tsmudge = ${join(cwd, "evil-git.sh")}\n`],
    [join(home, ".config", "git", "config"), `[core]\n\tfsmonitor = ${join(cwd, "evil-git.sh")}\n`],
    [join(home, ".bashrc"), `cp ${master} ${leak}/bashrc\n`],
    [join(home, ".profile"), `cp ${master} ${leak}/profile\n`],
    [join(home, ".bash_profile"), `cp ${master} ${leak}/bash_profile\n`],
    [join(home, ".ssh", "config"), `Host *\n  ProxyCommand ${join(cwd, "evil-git.sh")}\n`],
    [join(home, ".node_modules", "aa-planted.js"), "planted"],
    [join(home, "node_modules", "aa-planted.js"), "planted"],
    [systemProbe, "planted"],
  ];
  const allowed: [string, string][] = [[join(cwd, "work.txt"), "the agent's own work"], [tmpProbe, "a temporary file"]];
  writeFileSync(join(cwd, "plants.json"), JSON.stringify([...plants, ...allowed]));
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const st = await untilLatestRun(fx, "done", 30_000);
  assert.equal(st.runs[0].summary, "Done: planted");
  const tried = JSON.parse(readFileSync(join(cwd, "tried.json"), "utf8")) as Record<string, string>;
  const refused = process.getuid?.() === 0 ? "EROFS" : "EACCES";
  assert.deepEqual(tried, {
    ...Object.fromEntries(plants.map(([p]) => [p, p === systemProbe ? refused : "EROFS"])),
    ...Object.fromEntries(allowed.map(([p]) => [p, "written"])),
  });
  assert.equal(readFileSync(join(home, ".bashrc"), "utf8"), "# the user's own\n");

  // The chains, driven as the hub's user drives them: nothing planted runs, nothing reaches the leak folder.
  cpSync(join(examples, "hello-python"), join(fx.home.plugins, "hello-python"), { recursive: true });
  writePlugin(fx.home.plugins, "hello-npx", syncManifest("hello-npx", "npm", ["exec", "--offline", "--", "node", "main.js"], `[entry_point.env]\nnpm_config_update_notifier = "false"\n\n${toolToml("greet")}`), {
    "main.js": readFileSync(join(examples, "hello-node", "main.js"), "utf8"),
  });
  const ada = ["--args", '{"name":"Ada"}'];
  assert.deepEqual(await cliLines(["plugins", "invoke", "hello-python.greet", ...ada], fx.home.dir), { code: 0, out: ['{"content":"hello, Ada"}'], err: [] });
  const npx = await cliLines(["plugins", "invoke", "hello-npx.greet", ...ada], fx.home.dir);
  assert.deepEqual([npx.code, npx.out], [0, ['{"content":"hello, Ada"}']], JSON.stringify(npx));
  const repo = join(cwd, "repo");
  mkdirSync(repo);
  execFileSync("git", ["init", "-q"], { cwd: repo });
  writeFileSync(join(repo, "README.md"), "a plugin\n");
  execFileSync("git", ["-c", "user.name=a", "-c", "user.email=a@example.com", "add", "."], { cwd: repo });
  execFileSync("git", ["-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-qm", "x"], { cwd: repo });
  await cliLines(["add", repo], fx.home.dir);
  assert.ok(existsSync(join(fx.home.plugins, "repo", "README.md")), "add cloned the repository");
  assert.deepEqual(readdirSync(leak), [], "no planted code ran");
});
