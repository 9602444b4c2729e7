/**
 * Issue 26 round 2, finding 9: the agent sandbox bound the host's /tmp writable. With the hub's home under /tmp (as
 * `AGENT_AUTOLOOP_HOME=$(mktemp -d)`, and every test, does) an agent put a module into a `node_modules` folder above
 * the home; Node, resolving a trusted unsandboxed plugin's optional module (the pattern of ws/bufferutil) by walking up
 * the parent folders, loaded it as the hub's user. Agents could also read other runs' files in /tmp. The kind: a
 * shared, host-wide writable folder in the sandbox. Now /tmp and /var/tmp are the sandbox's own (empty, per launch),
 * TMPDIR is /tmp, and nothing an agent writes there reaches the host.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, linkSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { baseRules, engine, engineUnderTmp, hubFixture, makeHome, serveFixture, tempDir, untilLatestRun } from "./helpers.js";
import { sandboxKit } from "./sandbox-kit.js";
import { homePaths } from "../src/host/home.js";
import { cliLines, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { refusedRuns } from "./sandbox-helpers.js";
import { hubCodeFolders, hubOrigin } from "../src/worker/hub-code.js";

const kit = sandboxKit();
const { removed } = kit;

/**
 * The planting agent: puts module `aa-planted-<pid>` into `node_modules` of every folder above the hub's home (from
 * its context file's path) that it can write, reads a file of another run's /tmp folder (argv[2]), writes TMPDIR and
 * the outcome into its cwd's `tried.json`.
 */
const plant = (mod: string) => String.raw`
const fs = require("fs"), path = require("path");
const home = process.env.AGENT_AUTOLOOP_CONTEXT.replace(/\/worker\/runs\/.*$/, "");
const planted = {};
for (let d = path.dirname(home); d !== "/"; d = path.dirname(d)) {
  try {
    fs.mkdirSync(path.join(d, "node_modules", "${mod}"), { recursive: true });
    fs.writeFileSync(path.join(d, "node_modules", "${mod}", "index.js"), "exports.greet = () => 'RAN AS THE HUB';\n");
    planted[d] = "written";
  } catch (e) { planted[d] = e.code; }
}
let other; try { other = fs.readFileSync(process.argv[1], "utf8"); } catch (e) { other = e.code; }
fs.writeFileSync("tried.json", JSON.stringify({ planted, other, tmpdir: process.env.TMPDIR }));
console.log("Done: planted");
`;

test("issue 26 r2 #9 (reported case): with the hub's home under /tmp, a sandboxed agent's node_modules above the home never reaches the host, so a trusted plugin's optional module is not the agent's; another run's /tmp file is not there", { skip: engineUnderTmp }, async () => {
  const mod = `aa-planted-${process.pid}`;
  const cwd = realpathSync(tempDir("aa-tmp-cwd-"));
  const otherRun = realpathSync(tempDir("aa-other-run-"));
  removed.push(cwd, otherRun);
  writeFileSync(join(otherRun, "notes.txt"), "another run's notes");
  const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command: [process.execPath, "-e", plant(mod), join(otherRun, "notes.txt")] } }, rules: [{ ...baseRules.rules[0], cwd }] };
  const fx = await hubFixture(rules);
  kit.hub(fx);
  const home = realpathSync(fx.home.dir);
  assert.ok(home.startsWith("/tmp/"), "the hub's home lies under /tmp, as in the report");
  const above: string[] = [];
  for (let d = dirname(home); d !== "/"; d = dirname(d)) above.push(d);
  for (const d of above) removed.push(join(d, "node_modules", mod));
  // A trusted, unsandboxed plugin with an optional module, as ws loads bufferutil.
  writePlugin(fx.home.plugins, "optdep", syncManifest("optdep", "node", ["main.js"], toolToml("greet")), {
    "main.js": `let fast = null;\ntry { fast = require(${JSON.stringify(mod)}); } catch {}\nrequire("node:readline").createInterface({ input: process.stdin }).on("line", (t) => {\n  const r = JSON.parse(t);\n  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: r.id, result: { content: fast ? fast.greet() : "hello" } }) + "\\n");\n});\n`,
  });
  const w = kit.worker(fx);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  assert.equal((await untilLatestRun(fx, "done", 30_000)).runs[0].summary, "Done: planted");
  const tried = JSON.parse(readFileSync(join(cwd, "tried.json"), "utf8")) as { planted: Record<string, string>; other: string; tmpdir: string };
  // Inside, the folders above the home under /tmp are the sandbox's own: writing there reaches nothing of the host.
  const refused = process.getuid?.() === 0 ? "EROFS" : "EACCES";
  assert.deepEqual(tried, {
    planted: Object.fromEntries(above.map((d) => [d, d.startsWith("/tmp") ? "written" : refused])),
    other: "ENOENT",
    tmpdir: "/tmp",
  });
  assert.deepEqual(above.filter((d) => existsSync(join(d, "node_modules", mod))), [], "no module reached the host");
  assert.deepEqual(await cliLines(["plugins", "invoke", "optdep.greet"], fx.home.dir), { code: 0, out: ['{"content":"hello"}'], err: [] });
});

/** The errors of runs of one agent per case (`[id, writable path]`), each in `cwd`, of a worker of home `hub`. */
async function writableRefusals(cases: readonly (readonly [string, string, ...string[]])[], cwd: string, hub: string): Promise<Record<string, string | null | undefined>> {
  const rules = {
    ...baseRules,
    agents: Object.fromEntries(cases.map(([id, w]) => [id, { worker: "w1", use: "command", command: [process.execPath, "-e", 'console.log("Done: ran")'], writable: [w] }])),
    rules: cases.map(([id]) => ({ name: id, when: { source: "shop", types: [`${id}.*`] }, to: id, cwd })),
  };
  const fx = await serveFixture(makeHome(rules));
  kit.hub(fx);
  return refusedRuns(fx, cases.map(([id]) => id), homePaths(hub), kit.workers);
}

test("issue 26 r2 #9 (the kind in `writable`): a writable folder that holds the worker's home or the engine is refused, saying why", { skip: engineUnderTmp }, async () => {
  const hub = realpathSync(tempDir("aa-hub-home-"));
  const cwd = realpathSync(tempDir("aa-tmp-cwd-"));
  removed.push(hub, cwd);
  const cases: [string, string, string][] = [
    ["above-home", dirname(hub), hub],
    ["above-engine", dirname(realpathSync(engine)), realpathSync(engine)],
  ];
  const errors = await writableRefusals(cases, cwd, hub);
  assert.deepEqual(errors, Object.fromEntries(cases.map(([id, path, folder]) => [id,
    `${path} in "writable" of agent ${id} holds ${folder}, the worker's home or a folder the hub runs code or programs from: an agent that writes above it can move it aside or put a node_modules above it for the hub to load: name a folder that does not hold it`])));
});

test("issue 26 round 44, F44a-2, round 43, F43b-1/2 and round 45, F45b-1 (reported cases: an agent's writable ~/package.json, ~/node_modules, ~/tsconfig.json, ~/.npmrc above the hub's home): refused, saying why", { skip: engineUnderTmp }, async () => {
  const base = realpathSync(tempDir("aa-lookup-above-"));
  const hub = join(base, "home");
  const cwd = realpathSync(tempDir("aa-tmp-cwd-"));
  removed.push(base, cwd);
  mkdirSync(join(base, "node_modules", ".bin"), { recursive: true });
  mkdirSync(hub);
  mkdirSync(join(base, ".config", "mise"), { recursive: true });
  mkdirSync(join(base, ".cache", "node", "corepack"), { recursive: true });
  for (const f of ["package.json", "tsconfig.json", "jsconfig.json", ".npmrc", ".yarnrc.yml"]) writeFileSync(join(base, f), "{}");
  // Round 45, F45b-1: npm read the agent's ~/.npmrc (script-shell, node-options) for a trusted plugin it started.
  const cases: [string, string][] = [
    ["pkg", join(base, "package.json")], ["tsc", join(base, "tsconfig.json")], ["jsc", join(base, "jsconfig.json")],
    ["mods", join(base, "node_modules")], ["bin", join(base, "node_modules", ".bin")],
    ["npmrc", join(base, ".npmrc")], ["yarnrc", join(base, ".yarnrc.yml")], ["config", join(base, ".config", "mise")],
    // Round 46, F46-1: corepack ran the pnpm an agent changed in ~/.cache/node/corepack for a trusted plugin.
    ["cache", join(base, ".cache")], ["corepack", join(base, ".cache", "node", "corepack")],
  ];
  const errors = await writableRefusals(cases, cwd, hub);
  assert.deepEqual(errors, Object.fromEntries(cases.map(([id, path]) => [id,
    `${path} in agent ${id}'s writable is a place programs look in ${base} — a node_modules, package.json, tsconfig.json or the like, a dot entry (.npmrc, .yarnrc.yml, .env, .config, .cache…), any file there (go.work, Cargo.toml…) or a home's go, R or perl5 — and ${base} is your home, or lies above the hub's home or a folder it loads or runs code from: Node, tsx, npm and your other programs read packages and settings there for the hub's plugins, so an agent that writes it chooses what they run. Leave it out of writable (give the agent its own, in its cwd for instance)`])));
});

test("issue 26 round 47, F47a-1/2/3 and round 48, F48a-1/3 (reported cases: an agent's writable ~/miniconda3/lib/…/site-packages, ~/node-v20/lib/node_modules/npm/lib and ~/miniconda3/etc, each install's bin on PATH; ~/go/pkg/mod; ~/gocode/pkg/mod with GOPATH set by go env -w; ~/go.work) and the kind (~/R, ~/perl5, ~/lib for ~/bin, GOMODCACHE from the environment, Cargo.toml): refused, saying why", { skip: engineUnderTmp }, async () => {
  const userHome = realpathSync(tempDir("aa-r47-user-"));
  const hub = join(userHome, ".agent-autoloop");
  const cwd = realpathSync(tempDir("aa-tmp-cwd-"));
  removed.push(userHome, cwd);
  for (const d of ["go/pkg/mod", "R/x86_64-pc-linux-gnu-library/4.3", "perl5/lib/perl5", "miniconda3/bin", "miniconda3/lib/python3.12/site-packages", "miniconda3/etc", "node-v20/bin", "node-v20/lib/node_modules/npm/lib", "bin", "lib/python3/site-packages", ".agent-autoloop",
    "gocode/pkg/mod/example.com", ".config/go", "modcache/example.com"]) mkdirSync(join(userHome, d), { recursive: true });
  // F48a-1: the owner's `go env -w GOPATH=~/gocode`; and a GOMODCACHE of the hub's environment.
  writeFileSync(join(userHome, ".config", "go", "env"), `GOPATH=${join(userHome, "gocode")}\n`);
  // Round 49: npm's cache named in ~/.npmrc (npx runs packages from its _npx).
  mkdirSync(join(userHome, "npmcache", "_npx"), { recursive: true });
  writeFileSync(join(userHome, ".npmrc"), "cache=~/npmcache\n");
  kit.setEnv({ HOME: userHome, GOMODCACHE: join(userHome, "modcache"), PATH: `${join(userHome, "miniconda3", "bin")}:${join(userHome, "node-v20", "bin")}:${join(userHome, "bin")}:${process.env.PATH ?? ""}` });
  const home = (id: string, path: string): [string, string, string] => [id, join(userHome, path), userHome];
  // Round 48, F48a-3: a workspace file at the top of the home (go.work `replace`d a trusted Go plugin's dependency).
  for (const f of ["go.work", "Cargo.toml", "pyproject.toml"]) writeFileSync(join(userHome, f), "");
  const cases: [string, string, string][] = [home("go", "go"), home("gomod", "go/pkg/mod"), home("r", "R/x86_64-pc-linux-gnu-library/4.3"), home("perl", "perl5"),
    home("gowork", "go.work"), home("cargo", "Cargo.toml"), home("pyproject", "pyproject.toml")];
  const prefixed: [string, string, string][] = [
    ["conda", join(userHome, "miniconda3", "lib", "python3.12", "site-packages"), join(userHome, "miniconda3", "lib")],
    // F47a-3: a git installed in the prefix reads its system configuration from <prefix>/etc/gitconfig.
    ["condaetc", join(userHome, "miniconda3", "etc"), join(userHome, "miniconda3", "etc")],
    ["npm", join(userHome, "node-v20", "lib", "node_modules", "npm", "lib"), join(userHome, "node-v20", "lib")],
    ["gocode", join(userHome, "gocode", "pkg", "mod", "example.com"), join(userHome, "gocode")],
    ["modcache", join(userHome, "modcache", "example.com"), join(userHome, "modcache")],
    ["npx", join(userHome, "npmcache", "_npx"), join(userHome, "npmcache")],
    // ~/bin on PATH: a --prefix=$HOME install keeps its libraries in ~/lib.
    ["homelib", join(userHome, "lib", "python3", "site-packages"), join(userHome, "lib")],
  ];
  const errors = await writableRefusals([...cases, ...prefixed], cwd, hub);
  assert.deepEqual(errors, {
    ...Object.fromEntries(cases.map(([id, path]) => [id,
      `${path} in agent ${id}'s writable is a place programs look in ${userHome} — a node_modules, package.json, tsconfig.json or the like, a dot entry (.npmrc, .yarnrc.yml, .env, .config, .cache…), any file there (go.work, Cargo.toml…) or a home's go, R or perl5 — and ${userHome} is your home, or lies above the hub's home or a folder it loads or runs code from: Node, tsx, npm and your other programs read packages and settings there for the hub's plugins, so an agent that writes it chooses what they run. Leave it out of writable (give the agent its own, in its cwd for instance)`])),
    ...Object.fromEntries(prefixed.map(([id, path, folder]) => [id, `${path} in "writable" of agent ${id} lies inside ${folder}, which the sandbox keeps read-only because the hub runs code or programs from there`])),
  });
});

test("issue 26 round 51, F51a-1/4 (reported cases: an agent's writable ~/site/node_modules/.cache, and a writable that is a node_modules, whose packages are hard links into a store): refused, saying why", { skip: engineUnderTmp }, async () => {
  const base = realpathSync(tempDir("aa-r51-"));
  const hub = join(base, "hub");
  const cwd = realpathSync(tempDir("aa-tmp-cwd-"));
  removed.push(base, cwd);
  const modules = join(base, "site", "node_modules");
  mkdirSync(join(modules, "prettier"), { recursive: true });
  mkdirSync(join(modules, ".cache"));
  mkdirSync(join(base, "store"));
  writeFileSync(join(base, "store", "package.json"), "{}");
  linkSync(join(base, "store", "package.json"), join(modules, "prettier", "package.json"));
  const cases: [string, string][] = [["cache", join(modules, ".cache")], ["modules", modules]];
  const errors = await writableRefusals(cases, cwd, hub);
  assert.deepEqual(errors, Object.fromEntries(cases.map(([id, path]) => [id, `${path} in agent ${id}'s writable is, or lies in, ${modules}, whose files are hard links into a package store every project shares (pnpm, bun, uv): writing them would change them for every project and trusted plugin. Install it with copies (package-import-method=copy, UV_LINK_MODE=copy, bun install --backend=copyfile), or name a folder outside it`])));
});


test("issue 26 (the kind of round 47 through a plugin's own manifest): a program or script a trusted plugin names by absolute path outside PATH (~/venv/bin/python3, ~/tools/fmt.py), its install prefix and (round 53, F53a-5) the project its venv's .pth names, refused as an agent's writable; the same manifest with a [sandbox] is not the hub's code", { skip: engineUnderTmp }, async () => {
  const user = realpathSync(tempDir("aa-programs-"));
  const hub = join(user, "hub");
  const cwd = realpathSync(tempDir("aa-tmp-cwd-"));
  removed.push(user, cwd);
  for (const d of ["venv/bin", "venv/lib/python3.12/site-packages", "tools", "data", "boxed/bin", "boxed/lib"]) mkdirSync(join(user, d), { recursive: true });
  writeFileSync(join(user, "venv", "bin", "python3"), "#!/bin/sh\n", { mode: 0o755 });
  writeFileSync(join(user, "tools", "fmt.py"), "print('hi')\n");
  writeFileSync(join(user, "data", "words.txt"), "a\n");
  writeFileSync(join(user, "boxed", "bin", "run"), "#!/bin/sh\n", { mode: 0o755 });
  // Round 53, F53a-5: the owner's project installed editable into that venv (its .pth names the project).
  mkdirSync(join(user, "pyproj"));
  writeFileSync(join(user, "venv", "lib", "python3.12", "site-packages", "_editable_impl_pyproj.pth"), `${join(user, "pyproj")}\nimport sys\n`);
  // Trusted (no [sandbox]): its interpreter and its script by absolute path; a data file among its arguments is not code.
  writePlugin(join(hub, "plugins"), "fmt", syncManifest("fmt", join(user, "venv", "bin", "python3"), [join(user, "tools", "fmt.py"), join(user, "data", "words.txt")], toolToml("go")));
  // Sandboxed: its program is not run with the hub's rights, so it does not make its folder the hub's.
  writePlugin(join(hub, "plugins"), "boxed", syncManifest("boxed", join(user, "boxed", "bin", "run"), [], `${toolToml("go")}\n[sandbox]\n`));
  const cases: [string, string][] = [["site", join(user, "venv", "lib", "python3.12", "site-packages")], ["script", join(user, "tools")], ["venv", join(user, "venv")], ["proj", join(user, "pyproj")]];
  const errors = await writableRefusals(cases, cwd, hub);
  assert.deepEqual(errors, {
    site: `${cases[0]![1]} in "writable" of agent site lies inside ${join(user, "venv", "lib")}, which the sandbox keeps read-only because the hub runs code or programs from there`,
    script: `${cases[1]![1]} in "writable" of agent script lies inside ${join(user, "tools")}, which the sandbox keeps read-only because the hub runs code or programs from there`,
    venv: `${cases[2]![1]} in "writable" of agent venv holds ${join(user, "venv", "bin")}, the worker's home or a folder the hub runs code or programs from: an agent that writes above it can move it aside or put a node_modules above it for the hub to load: name a folder that does not hold it`,
    proj: `${cases[3]![1]} in "writable" of agent proj lies inside ${join(user, "pyproj")}, which the sandbox keeps read-only because the hub runs code or programs from there`,
  });
  const folders = hubCodeFolders(hubOrigin(), [], [join(hub, "plugins")]);
  assert.equal(folders.includes(join(user, "data")), false, "a data file's folder is not the hub's code");
  assert.equal(folders.some((f) => f.startsWith(join(user, "boxed"))), false, "a sandboxed plugin's program is not the hub's code");
});
