/**
 * `plugins invoke` refusals before the hub is asked (issue 16 "Every call is audited"): an unknown plugin or tool,
 * arguments failing the tool's JSON Schema, `--args` that are not JSON. Real child processes of
 * bin/agent-autoloop.js (`npm run build` first), a real hub over HTTP or, with none running, the home's SQLite file.
 * Each is still refused as before (exit 2, the reason on stderr, the plugin not started) and now recorded: a `denied`
 * call with the tool host's code and reason, counted in `status`.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { baseRules, hubFixture, makeHome } from "./helpers.js";
import { cliLines as cli, nodePlugin, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { recordedCalls, streamCalls } from "./tool-calls-helpers.js";
import { toolLimits } from "../src/tools/index.js";

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A plugin `strict` whose tool `greet` needs a string `name`; it notes each start in `started`. */
function strictPlugin(plugins: string): void {
  mkdirSync(plugins, { recursive: true });
  const nameSchema = 'type = "object"\nrequired = ["name"]\n\n[capabilities.tools.parameters.properties.name]\ntype = "string"';
  writePlugin(plugins, "strict", syncManifest("strict", "node", ["main.js"], toolToml("greet", nameSchema)), {
    "main.js": `require("node:fs").appendFileSync("started", "x");\n${nodePlugin('return { jsonrpc: "2.0", id: req.id, result: { content: "hi" } };')}`,
  });
}

/** The refusals, each with its exact (pinned) exit code and stderr. */
async function refuseAll(dir: string): Promise<void> {
  assert.deepEqual(await cli(["plugins", "invoke", "nope.greet"], dir), { code: 2, out: [], err: ["refused: no such tool plugin: nope"] });
  assert.deepEqual(await cli(["plugins", "invoke", "strict.wave"], dir), { code: 2, out: [], err: ["refused: plugin strict has no tool wave"] });
  assert.deepEqual(await cli(["plugins", "invoke", "strict.greet", "--args", '{"name":7}'], dir), { code: 2, out: [], err: ["refused: wrong arguments for strict.greet: name: must be string"] });
  assert.equal((await cli(["plugins", "invoke", "strict.greet", "--args", "{name}"], dir)).code, 2);
  assert.equal((await cli(["plugins", "invoke", "bad name"], dir)).code, 2, "a name that is not <plugin>.<tool> is refused, with nothing to record it under");
}

/** The calls as recorded: tool, session key, decision, status, why, reason. */
const shown = (rows: { tool: string; sessionKey: string; decision: string; status: string; why: string; reason: string | null }[]) =>
  rows.map((c) => [c.tool, c.sessionKey, c.decision, c.status, c.why, c.reason]);

const expected = [
  ["nope.greet", "owner:owner", "deny", "denied", "refused", "tools.unknown_plugin: no such tool plugin: nope"],
  ["strict.wave", "owner:owner", "deny", "denied", "refused", "tools.unknown_tool: plugin strict has no tool wave"],
  ["strict.greet", "owner:owner", "deny", "denied", "refused", "tools.invalid_arguments: wrong arguments for strict.greet: name: must be string"],
];

test("through a running hub: unknown plugin, unknown tool, bad arguments and bad --args JSON are refused as before, recorded denied with the reason, counted in status", async () => {
  const f = await hubFixture(baseRules);
  try {
    strictPlugin(f.home.plugins);
    await refuseAll(f.home.dir);
    assert.equal(existsSync(join(f.home.plugins, "strict", "started")), false, "a refused call starts no plugin");
    const rows = await streamCalls(f);
    assert.deepEqual(shown(rows).slice(0, 3), expected);
    assert.equal(rows[3]!.reason!.startsWith("cli.args: --args is not valid JSON: "), true, rows[3]!.reason!);
    assert.equal(rows.length, 4);
    const status = (await cli(["status"], f.home.dir)).out;
    const from = status.indexOf("Tool calls today (by plugin and status):");
    assert.ok(from > 0, status.join("\n"));
    assert.deepEqual(status.slice(from + 1, from + 3), ["  nope: denied 1", "  strict: denied 3"]);
  } finally {
    await f.close();
  }
});

test("with no hub running: the refusals are recorded in the home's database all the same", async () => {
  const made = makeHome(baseRules);
  const { dir, home } = made;
  dirs.push(dir);
  strictPlugin(home.plugins);
  await refuseAll(dir);
  assert.equal(existsSync(join(home.plugins, "strict", "started")), false);
  assert.deepEqual(shown(await recordedCalls(made)).slice(0, 3), expected);
});

test("--args nested far deeper than the named limit is refused naming arguments, recorded, never a crash", async () => {
  const made = makeHome(baseRules);
  const { dir, home } = made;
  dirs.push(dir);
  strictPlugin(home.plugins);
  const deep = `{"name":${"[".repeat(20_000)}${"]".repeat(20_000)}}`;
  assert.deepEqual(await cli(["plugins", "invoke", "strict.greet", "--args", deep], dir), {
    code: 2, out: [], err: [`refused: wrong arguments for strict.greet: arguments: nested deeper than ${toolLimits.argumentsDepthMax} levels`],
  });
  assert.equal(existsSync(join(home.plugins, "strict", "started")), false);
  const rows = await recordedCalls(made);
  assert.deepEqual(shown(rows), [["strict.greet", "owner:owner", "deny", "denied", "refused", `tools.invalid_arguments: wrong arguments for strict.greet: arguments: nested deeper than ${toolLimits.argumentsDepthMax} levels`]]);
});
