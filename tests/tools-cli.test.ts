/**
 * `agent-autoloop plugins list | inspect | doctor` (issue 16) as a user runs them: real child processes of
 * bin/agent-autoloop.js (`npm run build` first) on a temporary home holding the example tool plugins and some broken,
 * clashing, hidden, tool-less, service and MCP ones, with tools and approvals in its rules.json. Reading runs no
 * plugin code; `inspect` asks a plugin for its tools (tools/list, an MCP server) only when its manifest lists none,
 * in its sandbox when it has one, and leaves nothing running.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseRules, engine, makeHome } from "./helpers.js";
import { everythingServer, examples, nodePlugin, processesIn, probeBwrap, syncManifest, tempDir, toolToml, writePlugin } from "./tools-helpers.js";

const bin = join(engine, "bin", "agent-autoloop.js");
const homes: string[] = [];
after(() => {
  for (const d of homes) rmSync(d, { recursive: true, force: true });
});

/** Runs the CLI on `home` (its plugins are read there); returns exit code, stdout and stderr lines. */
function cli(args: string[], home: string, env: Record<string, string> = {}): Promise<{ code: number; out: string[]; err: string[] }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env: { ...process.env, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", ...env }, encoding: "utf8" }, (e, stdout, stderr) => {
      const lines = (s: string) => s.split("\n").filter((l) => l !== "");
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out: lines(stdout), err: lines(stderr) });
    });
  });
}

/** A home with `rules`, and its plugins folder. */
function home(rules: unknown): { dir: string; plugins: string } {
  const made = makeHome(rules);
  homes.push(made.dir);
  mkdirSync(made.home.plugins, { recursive: true });
  return { dir: made.dir, plugins: made.home.plugins };
}

/** A sync plugin without a tool list: it answers tools/list with `add` and appends each method it is asked to `asked`. */
const lister = nodePlugin(`
  require("node:fs").appendFileSync("asked", req.method + "\\n");
  if (req.method === "tools/list") return { jsonrpc: "2.0", id: req.id, result: { tools: [{ name: "add", description: "Adds one", inputSchema: { type: "object", required: ["a"], properties: { a: { type: "number" } } } }] } };
  return { jsonrpc: "2.0", id: req.id, result: { sum: req.params.arguments.a + 1 } };`);

const rules = {
  ...baseRules,
  rules: [{ ...baseRules.rules[0], tools: ["hello-python.greet", "lister.*", "nowhere.x"] }, baseRules.rules[1]],
  approvals: [
    { plugin: "hello-python", tool: "hello-python.greet", mode: "prompt", allow_session_keys: ["alerts:*"] },
    // prompt, not deny: a plugin denied whole is not asked for its tools at all (hostile round 40, F40b-2)
    { plugin: "lister", mode: "prompt" },
    { plugin: "ghost", mode: "auto" },
  ],
};
const main = home(rules);
const p = (folder: string) => join(main.plugins, folder);
for (const example of ["hello-python", "hello-bash", "hello-service"]) cpSync(join(examples, example), p(example), { recursive: true });
writePlugin(main.plugins, "lister", syncManifest("lister", "node", ["main.js"]), { "main.js": lister });
writePlugin(main.plugins, "broken", `${syncManifest("broken", "node", ["main.js"])}\ncolour = "blue"\n`);
writePlugin(main.plugins, "twin-a", syncManifest("twin", "node", ["a.js"], toolToml("greet")));
writePlugin(main.plugins, "twin-b", syncManifest("twin", "node", ["b.js"], toolToml("greet")));
writePlugin(main.plugins, "secret", syncManifest("secret", "bash", ["main.sh"], `${toolToml("wipe")}\n[capabilities]\ndisable_model_invocation = true\n`));
writePlugin(main.plugins, "every", `manifest_version = 3\nname = "every"\nversion = "1.0.0"\nplugin_type = "mcp"\n\n[entry_point]\ncommand = "node"\nargs = [${JSON.stringify(everythingServer)}, "stdio"]\n\n[mcp]\ntools_allowlist = { mode = "allow", names = ["echo", "get-sum"] }\n`);

test("plugins list: one line per plugin folder — name, version, kind, tools, (origin), status — and what is wrong on stderr; no plugin runs", async () => {
  const r = await cli(["plugins", "list"], main.dir);
  assert.equal(r.code, 0, r.err.join("\n"));
  // Every kind (issue 27): the engine's own code plugins among the home's tool plugins, by name.
  assert.deepEqual(r.out, [
    "acp            -      agent    -                             (builtin)  ok",
    "broken         -      -        -                             (home)     error",
    "claude         -      agent    -                             (builtin)  ok",
    "codex          -      agent    -                             (builtin)  ok",
    "command        -      agent    -                             (builtin)  ok",
    "desktop        -      channel  -                             (builtin)  ok",
    "dsh            -      agent    -                             (builtin)  ok",
    "every          1.0.0  mcp      (asked when needed)           (home)     ok",
    "feishu         -      channel  -                             (builtin)  ok",
    "file           -      channel  -                             (builtin)  ok",
    "github         -      source   -                             (builtin)  ok",
    "hello-bash     0.1.0  sync     greet                         (home)     ok",
    "hello-python   0.1.0  sync     greet                         (home)     ok",
    "hello-service  0.1.0  service  greet,count,refuse,ask,crash  (home)     ok",
    "lister         0.1.0  sync     (asked when needed)           (home)     ok",
    "secret         0.1.0  sync     wipe                          (home)     ok",
    "twin           0.1.0  sync     greet                         (home)     ok",
    "twin           0.1.0  sync     greet                         (home)     shadowed",
    "webhook        -      channel  -                             (builtin)  ok",
  ]);
  assert.deepEqual(r.err, [
    `${p("broken")}/manifest.toml:10: entry_point.colour: unknown field`,
    `plugin twin: ${p("twin-a")} (home) wins over ${p("twin-b")} (home)`,
  ]);
  assert.equal(existsSync(join(p("lister"), "asked")), false, "listing asked no plugin anything");
  // The issue's own line, for a home with only that plugin.
  const alone = home({});
  cpSync(join(examples, "hello-python"), join(alone.plugins, "hello-python"), { recursive: true });
  const own = (out: string[]) => out.filter((l) => !l.includes("(builtin)"));
  assert.deepEqual(own((await cli(["plugins", "list"], alone.dir)).out), ["hello-python  0.1.0  sync     greet  (home)     ok"]);
  assert.deepEqual(own((await cli(["plugins", "list"], alone.dir, { AGENT_AUTOLOOP_LANG: "zh" })).out), ["hello-python  0.1.0  sync     greet  (home)     正常"]);
  // A home without plugins of its own lists the engine's.
  const none = (await cli(["plugins", "list"], home({}).dir)).out;
  assert.deepEqual([none.length, own(none)], [10, []]);
  assert.equal(none[0], "acp      -  agent    -  (builtin)  ok");
});

test("plugins list --json: the same lines as data, with each folder and its errors", async () => {
  const r = await cli(["plugins", "list", "--json"], main.dir);
  assert.equal(r.code, 0);
  const lines = JSON.parse(r.out.join("\n")) as { name: string }[];
  assert.deepEqual(lines.map((l) => l.name), [
    "acp", "broken", "claude", "codex", "command", "desktop", "dsh", "every", "feishu", "file", "github", "hello-bash", "hello-python", "hello-service",
    "lister", "secret", "twin", "twin", "webhook",
  ]);
  assert.deepEqual(lines[12], { name: "hello-python", version: "0.1.0", kind: "sync", tools: ["greet"], origin: "home", status: "ok", dir: p("hello-python"), errors: [] });
  assert.deepEqual(lines[14], { name: "lister", version: "0.1.0", kind: "sync", tools: null, origin: "home", status: "ok", dir: p("lister"), errors: [] });
  assert.deepEqual(lines[1], {
    name: "broken", version: null, kind: null, tools: null, origin: "home", status: "error", dir: p("broken"),
    errors: [`${p("broken")}/manifest.toml:10: entry_point.colour: unknown field`],
  });
});

test("plugins inspect: manifest, origin, tools, sandbox, approval from rules.json, the rules offering each tool, why it is loaded, checks", async () => {
  const r = await cli(["plugins", "inspect", "hello-python"], main.dir);
  assert.equal(r.code, 0, r.err.join("\n"));
  const digest = r.out[3]!.match(/sha256 ([0-9a-f]{64})/)?.[1];
  assert.ok(digest);
  // The digest is of the plugin's files (issue 26 round 2 #6: the label says so), the same the hub keys trust by.
  const json = JSON.parse((await cli(["plugins", "inspect", "hello-python", "--json"], main.dir)).out.join("\n")) as { digest: string; files: string[] };
  assert.equal(json.digest, digest);
  const files = json.files.length;
  assert.deepEqual(json.files.map((l) => l.slice(17)), readdirSync(p("hello-python")).sort());
  assert.deepEqual(r.out.filter((l) => !l.includes("the entry point is found")), [
    "hello-python 0.1.0 — sync (home): ok",
    "  why: loaded: its manifest is valid and no other folder has its name",
    `  folder: ${p("hello-python")}`,
    `  manifest: ${p("hello-python")}/manifest.toml; the plugin's files (${files}, what "always allow" trusts): sha256 ${digest}`,
    "  runs: python3 main.py",
    "  timeout: 30000 ms",
    "  sandbox: none (it runs as you, with an allowlisted environment)",
    "  tools (listed in the manifest):",
    "    hello-python.greet — Greet a person",
    "      approval: prompt (approvals[0]); sessions alerts:* need no approval",
    "      offered by rules: alerts",
    '      parameters: {"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}',
    "  checks:",
    `    ok   the manifest reads and is valid: ${p("hello-python")}/manifest.toml`,
  ]);
  assert.match(r.out.find((l) => l.includes("the entry point is found"))!, /^ {4}ok {3}the entry point is found: \/\S+\/python3$/);
  // Without an entry in approvals: auto, and an agent's first call asks once; a rule that offers none of its tools.
  const bash = await cli(["plugins", "inspect", "hello-bash"], main.dir);
  assert.deepEqual(bash.out.slice(8, 11), [
    "    hello-bash.greet — Greet a person",
    "      approval: auto (no entry in approvals); an agent's first call asks you once (until you answer \"always allow\")",
    "      offered by no rule (a rule offers it with \"tools\" in rules.json)",
  ]);
  const secret = await cli(["plugins", "inspect", "secret"], main.dir);
  assert.equal(secret.out[9], "      approval: hidden from agents (disable_model_invocation); your own calls are auto (no entry in approvals)");
});

test("plugins inspect asks a manifest without tools with tools/list, once, and an MCP server for its tools; nothing is left running", async () => {
  // Not trusted: asked in the review sandbox (issue 26 round 11, F5), where this plugin cannot write its note in its
  // own (read-only) folder and dies; its tools are unknown, and the words say why and what to do.
  const reviewed = await cli(["plugins", "inspect", "lister"], main.dir);
  assert.equal(reviewed.code, 0, reviewed.err.join("\n"));
  assert.equal(reviewed.out[7], "  tools: cannot be had: plugin lister's tools are unknown: you have not trusted it yet (no \"always allow\" at its current files), so its tools are asked only in the review sandbox (none of your home, no network, nothing of serve's environment), where it could not answer: plugin lister exited before answering (exit 1). List them in its manifest, or run agent-autoloop plugins inspect lister --run to ask it as its manifest runs it (its code runs as you); until then a rule's tools must name each as lister.<tool>");
  assert.equal(existsSync(join(p("lister"), "asked")), false);
  // The owner's --run: as its manifest runs it (no [sandbox]: as the owner).
  const r = await cli(["plugins", "inspect", "lister", "--run"], main.dir);
  assert.equal(r.code, 0, r.err.join("\n"));
  assert.deepEqual(r.out.slice(7, 12), [
    "  tools (asked with tools/list):",
    "    lister.add — Adds one",
    "      approval: prompt (approvals[1])",
    "      offered by rules: alerts",
    '      parameters: {"type":"object","required":["a"],"properties":{"a":{"type":"number"}}}',
  ]);
  assert.equal(readFileSync(join(p("lister"), "asked"), "utf8"), "tools/list\n");
  // The MCP server lies in the engine's node_modules, outside the plugin's folder and the system folders: the review
  // sandbox does not show it (issue 26 round 12, F12-6), so the owner asks it on purpose.
  const every = await cli(["plugins", "inspect", "every", "--run"], main.dir);
  assert.equal(every.code, 0, every.err.join("\n"));
  assert.deepEqual(every.out.filter((l) => /^ {2}tools|^ {4}every\./.test(l)).map((l) => l.split(" — ")[0]), [
    "  tools (from its MCP server, after tools_allowlist):", "    every.echo", "    every.get-sum",
  ]);
  assert.deepEqual([processesIn(p("lister")), processesIn(p("every"))], [[], []], "the CLI ended what it started");
  // list and doctor still asked nothing more.
  await cli(["plugins", "list"], main.dir);
  await cli(["plugins", "doctor"], main.dir);
  assert.equal(readFileSync(join(p("lister"), "asked"), "utf8"), "tools/list\n");
});

test("plugins inspect says why a folder is not loaded; a name of two folders shows both, the one in use first; an unknown name exits 1", async () => {
  const broken = await cli(["plugins", "inspect", "broken"], main.dir);
  assert.equal(broken.code, 0);
  assert.deepEqual(broken.out.slice(0, 2), [
    "broken - — - (home): error",
    `  why: not loaded: ${p("broken")}/manifest.toml:10: entry_point.colour: unknown field`,
  ]);
  assert.ok(broken.out.includes("  tools: not asked (this folder is not in use)"));
  const twin = await cli(["plugins", "inspect", "twin"], main.dir);
  const heads = twin.out.filter((l) => !l.startsWith(" "));
  assert.deepEqual(heads, ["twin 0.1.0 — sync (home): ok", "twin 0.1.0 — sync (home): shadowed"]);
  assert.ok(twin.out.includes(`  why: not loaded: ${p("twin-a")} (home) has the same name and is used instead`));
  assert.ok(twin.out.includes(`    ok   name clash: plugin twin: ${p("twin-a")} (home) wins over ${p("twin-b")} (home)`));
  assert.ok(twin.out.includes(`    warn name clash: plugin twin: ${p("twin-a")} (home) wins over ${p("twin-b")} (home)`));
  const byFolder = await cli(["plugins", "inspect", "twin-b", "--json"], main.dir);
  const inspected = JSON.parse(byFolder.out.join("\n"));
  assert.deepEqual([inspected.status, inspected.dir, inspected.shadowedBy, inspected.toolsSource], ["shadowed", p("twin-b"), { dir: p("twin-a"), origin: "home" }, null]);
  const none = await cli(["plugins", "inspect", "nope"], main.dir);
  assert.deepEqual([none.code, none.out, none.err], [1, [], [`agent-autoloop: no plugin named nope (looked among the built-in ones and in ${main.plugins})`]]);
});

test("plugins inspect --json: the tools with their approval entry, allowed sessions and offering rules", async () => {
  const r = await cli(["plugins", "inspect", "hello-python", "--json"], main.dir);
  const got = JSON.parse(r.out.join("\n"));
  assert.deepEqual([got.name, got.status, got.toolsSource, got.toolsError, got.rulesError], ["hello-python", "ok", "manifest", null, null]);
  assert.deepEqual(got.tools, [{
    name: "hello-python.greet", description: "Greet a person", parameters: { type: "object", required: ["name"], properties: { name: { type: "string" } } },
    approval: { mode: "prompt", entry: 0, allow_session_keys: ["alerts:*"] }, offeredBy: ["alerts"],
  }]);
  assert.equal(got.manifest.entry_point.command, "python3");
});

test("plugins doctor: every plugin's checks and rules.json's names of plugins not found; exit 1 while anything needs fixing", async () => {
  const r = await cli(["plugins", "doctor"], main.dir);
  assert.equal(r.code, 1);
  const entry = (l: string) => l.replace(/the entry point is found: \/\S+/, "the entry point is found: <found>");
  assert.deepEqual(r.out.map(entry), [
    `broken (${p("broken")})`,
    `  FIX  the manifest reads and is valid: ${p("broken")}/manifest.toml:10: entry_point.colour: unknown field`,
    `every (${p("every")})`,
    `  ok   the manifest reads and is valid: ${p("every")}/manifest.toml`,
    "  ok   the entry point is found: <found>",
    `hello-bash (${p("hello-bash")})`,
    `  ok   the manifest reads and is valid: ${p("hello-bash")}/manifest.toml`,
    "  ok   the entry point is found: <found>",
    `hello-python (${p("hello-python")})`,
    `  ok   the manifest reads and is valid: ${p("hello-python")}/manifest.toml`,
    "  ok   the entry point is found: <found>",
    `hello-service (${p("hello-service")})`,
    `  ok   the manifest reads and is valid: ${p("hello-service")}/manifest.toml`,
    "  ok   the entry point is found: <found>",
    `lister (${p("lister")})`,
    `  ok   the manifest reads and is valid: ${p("lister")}/manifest.toml`,
    "  ok   the entry point is found: <found>",
    `secret (${p("secret")})`,
    `  ok   the manifest reads and is valid: ${p("secret")}/manifest.toml`,
    "  ok   the entry point is found: <found>",
    `twin (${p("twin-a")})`,
    `  ok   the manifest reads and is valid: ${p("twin-a")}/manifest.toml`,
    `  ok   name clash: plugin twin: ${p("twin-a")} (home) wins over ${p("twin-b")} (home)`,
    "  ok   the entry point is found: <found>",
    `twin (${p("twin-b")})`,
    `  ok   the manifest reads and is valid: ${p("twin-b")}/manifest.toml`,
    `  warn name clash: plugin twin: ${p("twin-a")} (home) wins over ${p("twin-b")} (home)`,
    "  ok   the entry point is found: <found>",
    `${join(main.dir, "rules.json")}:`,
    "  warn the tools of rule alerts: nowhere.x: there is no tool plugin nowhere here",
    "  warn approvals[2]: ghost: there is no tool plugin ghost here",
    "9 tool plugin(s), 1 to fix",
  ]);
  // A home whose plugins are all fine exits 0; an entry point that is not found, or a sandbox bubblewrap cannot make, needs fixing.
  const fine = home({});
  cpSync(join(examples, "hello-python"), join(fine.plugins, "hello-python"), { recursive: true });
  const ok = await cli(["plugins", "doctor"], fine.dir);
  assert.deepEqual([ok.code, ok.out.at(-1)], [0, "1 tool plugin(s), all fine"]);
  writePlugin(fine.plugins, "boxed", syncManifest("boxed", "./missing.sh", [], `${toolToml("x")}\n[sandbox]\nnetwork = "none"\n`));
  const bad = await cli(["plugins", "doctor"], fine.dir, { PATH: "/nonexistent" });
  assert.equal(bad.code, 1);
  assert.deepEqual(bad.out.slice(0, 4), [
    `boxed (${join(fine.plugins, "boxed")})`,
    `  ok   the manifest reads and is valid: ${join(fine.plugins, "boxed")}/manifest.toml`,
    "  FIX  the entry point is found: ./missing.sh is not found (a relative path counts from the plugin folder, a name is looked up in PATH)",
    "  FIX  the sandbox it asks for can be made here: plugin boxed asks for a sandbox but bubblewrap cannot run (ENOENT). Install it: apt-get install bubblewrap",
  ]);
  // Without PATH, python3 of hello-python is not found either.
  assert.equal(bad.out.at(-1), "2 tool plugin(s), 2 to fix");
  assert.deepEqual((await cli(["plugins", "doctor"], home({}).dir)).code, 0);
});

test("plugins inspect --run asks a sandboxed plugin for its tools inside its own sandbox; without --run, in the review sandbox", async (t) => {
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const h = home({});
  // What the plugin writes lies outside every plugin folder (issue 26 round 5, F6).
  const state = tempDir("aa-boxed-state-");
  const dir = writePlugin(h.plugins, "boxed", syncManifest("boxed", "node", ["main.js"], `[sandbox]\nnetwork = "none"\nbinds = ["${state}:/state"]\n`), {
    "main.js": nodePlugin(`
      require("node:fs").writeFileSync("/state/asked", req.method);
      return { jsonrpc: "2.0", id: req.id, result: { tools: [{ name: "where", description: "cwd " + process.cwd(), inputSchema: { type: "object" } }] } };`),
  });
  // Not trusted: the review sandbox replaces its own, so its bind is not there (issue 26 round 11, F5).
  const reviewed = await cli(["plugins", "inspect", "boxed"], h.dir);
  assert.match(reviewed.out.find((l) => l.startsWith("  tools")) ?? "", /^ {2}tools: cannot be had: plugin boxed's tools are unknown: /);
  assert.equal(existsSync(join(state, "asked")), false);
  const r = await cli(["plugins", "inspect", "boxed", "--run"], h.dir);
  assert.equal(r.code, 0, r.err.join("\n"));
  assert.ok(r.out.includes(`  sandbox: bubblewrap; memory -, cpus -, pids -, network none, root writable (what is written vanishes with the sandbox), binds ${state}:/state`), r.out.join("\n"));
  assert.ok(r.out.includes("    boxed.where — cwd /workspace"), r.out.join("\n"));
  assert.equal(readFileSync(join(state, "asked"), "utf8"), "tools/list");
  assert.deepEqual(processesIn(dir), []);
  rmSync(state, { recursive: true, force: true });
});

test("tools mcp: --lang is zh or en, a wrong one refused in the user's language", async () => {
  assert.deepEqual(await cli(["tools", "mcp", "--socket", "/nonexistent/tools.sock", "--lang", "fr"], main.dir), { code: 1, out: [], err: ["agent-autoloop: --lang is zh or en, not fr"] });
  assert.deepEqual((await cli(["tools", "mcp", "--socket", "/nonexistent/tools.sock", "--lang", "fr"], main.dir, { AGENT_AUTOLOOP_LANG: "zh" })).err, ["agent-autoloop：--lang 只能是 zh 或 en，不是 fr"]);
});

test("check on this home's rules.json (hostile round 57, F57a-4: an approval naming SVCB or a plugin's folder denied nothing, and check said valid): valid, exit 0, and a warning on stderr for each entry naming no plugin — with the plugin meant when it differs only in case or is its folder", async () => {
  const approvals = [{ plugin: "LISTER", mode: "deny" }, { plugin: "svcd", mode: "deny" }, { plugin: "ghost", mode: "auto" }, { plugin: "lister", tool: "lister.add", mode: "prompt" }];
  const h = home({ ...baseRules, approvals });
  writePlugin(h.plugins, "lister", syncManifest("lister", "node", ["main.js"], toolToml("add")), { "main.js": lister });
  writePlugin(h.plugins, "svcd", syncManifest("svcd-real", "node", ["main.js"], toolToml("x")), { "main.js": lister });
  const r = await cli(["check"], h.dir);
  assert.equal(r.code, 0, r.err.join("\n"));
  assert.match(r.out.join("\n"), /rules\.json is valid: /);
  assert.deepEqual(r.err, [
    "warn approvals[0]: LISTER: there is no tool plugin LISTER here; did you mean lister? Plugin names are case-sensitive and are the plugin's own name (its manifest's name), not its folder's",
    "warn approvals[1]: svcd: there is no tool plugin svcd here; did you mean svcd-real? Plugin names are case-sensitive and are the plugin's own name (its manifest's name), not its folder's",
    "warn approvals[2]: ghost: there is no tool plugin ghost here",
  ]);
  // A home not set up (rules.json alone, no config.json): valid, exit 0, and nothing written into it (no home.id).
  const bare = tempDir("aa-check-bare-");
  writeFileSync(join(bare, "rules.json"), JSON.stringify({ ...baseRules, approvals: [{ plugin: "ghost", mode: "auto" }] }));
  const b = await cli(["check"], bare);
  assert.deepEqual([b.code, b.err, readdirSync(bare)], [0, ["warn approvals[0]: ghost: there is no tool plugin ghost here"], ["rules.json"]]);
  // A file named on the command line is checked alone: its plugins are not this home's.
  const named = await cli(["check", join(h.dir, "rules.json")], h.dir);
  assert.deepEqual([named.code, named.err], [0, []]);
});
