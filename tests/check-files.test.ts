/**
 * One way to check files (issue 27): `agent-autoloop check` on broken rules.json, config.json and manifest.toml files
 * (tests/fixtures/broken/, 30 of them) gives the line, the column and a catalog text for each, in English and in
 * Chinese; it takes each file's kind by its name or content; and the published schemas (protocol/rules.schema.json,
 * config.schema.json, manifest.schema.json) accept every example file of the repository — the examples' manifests, the
 * starter rules.json `init` writes, the recipes' rules, and the examples of the README and docs/guide/ that are whole files — read by a plain Ajv, as an
 * editor would.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseJsonc, type ParseError } from "jsonc-parser";
import Ajv2020Module from "ajv/dist/2020.js";
import { engine, tempDir } from "./helpers.js";
import { starterRules } from "../src/host/home.js";
import { readToml } from "../src/tools/toml.js";
import { kindOf } from "../src/cli/check.js";

const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as typeof Ajv2020Module.default;
const bin = join(engine, "bin", "agent-autoloop.js");
const broken = join(engine, "tests", "fixtures", "broken");

/** `agent-autoloop check <file>` in `lang`: exit code, standard error, standard output. */
function check(file: string, lang: "en" | "zh"): { code: number | null; err: string; out: string } {
  const r = spawnSync(process.execPath, [bin, "check", file], { env: { ...process.env, AGENT_AUTOLOOP_LANG: lang }, encoding: "utf8", timeout: 20_000 });
  return { code: r.status, err: r.stderr.trim(), out: r.stdout.trim() };
}

/** [fixture under tests/fixtures/broken/, line, column, English text, Chinese text] */
const fixtures: [string, number, number, string, string][] = [
  ["config/capacity-zero/config.json", 4, 56, "worker.capacity: must be a whole number ≥ 1 (how many runs at once)", "worker.capacity：应为 ≥ 1 的整数（同时跑几个）"],
  ["config/channel-no-use/config.json", 6, 14, "channels.slack.use: the channel's plugin (desktop, file, webhook, feishu, …), as a string", "channels.slack.use：通道插件（desktop、file、webhook、feishu……），字符串"],
  ["config/comment/config.json", 2, 3, "JSON: a comment written wrongly", "JSON 写错了：注释写法不对"],
  ["config/listen-number/config.json", 2, 13, "listen: where the hub listens, a string \"HOST:PORT\" such as \"127.0.0.1:8787\"", "listen：中台监听的地址，字符串 \"主机:端口\"，如 \"127.0.0.1:8787\""],
  ["config/misspelt-field/config.json", 4, 16, "publicURL: unknown field", "publicURL：不认识的字段"],
  ["config/no-listen/config.json", 1, 1, "listen: where the hub listens, a string \"HOST:PORT\" such as \"127.0.0.1:8787\"", "listen：中台监听的地址，字符串 \"主机:端口\"，如 \"127.0.0.1:8787\""],
  ["config/no-owner/config.json", 1, 1, "owner: the owner key the CLI uses, as a string", "owner：CLI 用的本人密钥，字符串"],
  ["config/trailing-comma/config.json", 4, 1, "JSON: a property name in double quotes expected", "JSON 写错了：这里要写双引号括起的属性名"],
  ["config/worker-no-key/config.json", 4, 13, "worker.key: a key, as a string (agent-autoloop key new … prints one)", "worker.key：一个密钥，字符串（agent-autoloop key new … 会打印一个）"],
  ["config/worker-text/config.json", 4, 13, "worker: must be {\"name\", \"key\", \"capacity\"}, or null (no worker in this process)", "worker：应为 {\"name\", \"key\", \"capacity\"}，或 null（不在本机跑接单程序）"],
  ["manifest/after-multiline.toml", 8, 1, "capabilities.disable_model_invocation: must be boolean", "capabilities.disable_model_invocation：应为 boolean"],
  ["manifest/bind-form.toml", 9, 29, "sandbox.binds[1]: must be in Docker -v form host:/absolute/container/path[:ro|rw]", "sandbox.binds[1]：应为 Docker -v 形式 主机路径:容器内绝对路径[:ro|rw]"],
  ["manifest/key-twice.toml", 4, 1, "not valid TOML: a key or table defined a second time", "不是合法的 TOML：这个键或表已经定义过了"],
  ["manifest/missing-equals.toml", 2, 9, "not valid TOML: an equals sign = expected", "不是合法的 TOML：这里要写等号 ="],
  ["manifest/name-dot.toml", 1, 1, "name: letters, digits, _ and - only, starting with a letter or digit", "name：只能用字母、数字、_ 和 -，以字母或数字开头"],
  ["manifest/open-string.toml", 2, 17, "not valid TOML: a string that is not closed (a quote missing)", "不是合法的 TOML：字符串没有结束（缺引号）"],
  ["manifest/plugin-type.toml", 3, 1, "plugin_type: must be one of \"sync\", \"async\", \"service\", \"mcp\"", "plugin_type：只能是 \"sync\", \"async\", \"service\", \"mcp\""],
  ["manifest/timeout-text.toml", 9, 3, "communication.timeout_ms: must be integer", "communication.timeout_ms：应为 integer"],
  ["manifest/tool-twice.toml", 12, 1, "capabilities.tools[1].name: tool greet is listed twice", "capabilities.tools[1].name：工具 greet 写了两次"],
  ["manifest/unknown-key.toml", 7, 1, "entry_point.colour: unknown field", "entry_point.colour：不认识的字段"],
  ["rules/approval-mode.json", 4, 34, "approvals[1].mode: must be auto, prompt or deny", "approvals[1].mode：只能是 auto、prompt 或 deny"],
  ["rules/bad-cron.json", 4, 44, "rules[0].when.cron: not a cron expression: 0 25 * * *", "rules[0].when.cron：不是 cron 表达式：0 25 * * *"],
  ["rules/env-name.json", 6, 27, "agents.fixer.env[1]: a variable name (letters, digits and _, not starting with a digit, at most 100) or a prefix such as GH_*", "agents.fixer.env[1]：应为环境变量名（字母、数字和 _，不以数字开头，最多 100 个），或 GH_* 这样的前缀"],
  ["rules/key-twice.json", 4, 15, "timezone: given twice", "timezone：写了两次"],
  ["rules/missing-comma.json", 5, 5, "JSON: a comma expected", "JSON 写错了：这里要写逗号"],
  ["rules/misspelt-field.json", 4, 13, "agnets: unknown field (known: $schema, timezone, askFirst, sources, agents, channels, rules, elsewhere, approvals, approvalWaitSeconds)", "agnets：不认识的字段（认识的有：$schema, timezone, askFirst, sources, agents, channels, rules, elsewhere, approvals, approvalWaitSeconds）"],
  ["rules/parallel-text.json", 5, 82, "rules[0].parallel: must be a whole number ≥ 1", "rules[0].parallel：应为 ≥ 1 的整数"],
  ["rules/same-secret.json", 4, 15, "sources.gh_app: same secrets.env name (GH_APP) as source \"gh-app\"; rename one", "sources.gh_app：和来源 \"gh-app\" 对应同一个 secrets.env 变量（GH_APP）；改掉其中一个名字"],
  ["rules/tool-pattern.json", 6, 29, "rules[0].tools[1]: must be <plugin>.<tool>, with * for any run of characters in the tool's part (such as file-ops.*)", "rules[0].tools[1]：应为 <插件>.<工具>，<工具> 里可以用 * 代表任意一串字符（如 file-ops.*）"],
  ["rules/unknown-agent.json", 8, 13, "rules[0].to: no agent \"revewer\" in agents", "rules[0].to：agents 里没有 Agent \"revewer\""],
];

test("check gives the line, column and catalog text of each of 30 broken files, in English and in Chinese", () => {
  const files = ["rules", "config", "manifest"].flatMap((kind) => readdirSync(join(broken, kind), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(broken.length + 1)));
  assert.deepEqual(files.sort(), fixtures.map(([f]) => f).sort(), "every fixture has its row");
  assert.equal(fixtures.length, 30);
  for (const [file, line, column, en, zh] of fixtures) {
    const path = join(broken, file);
    assert.deepEqual(check(path, "en"), { code: 1, err: `agent-autoloop: ${path}:${line}:${column}: ${en}`, out: "" }, file);
    assert.deepEqual(check(path, "zh"), { code: 1, err: `agent-autoloop：${path}:${line}:${column}: ${zh}`, out: "" }, file);
  }
});

test("check takes a .toml file for a manifest, config.json (or JSON with listen or owner) for a config, anything else for rules; fixed, each is valid", () => {
  assert.deepEqual([kindOf("/x/manifest.toml", null), kindOf("/x/plugin-manifest.toml", "x"), kindOf("/x/config.json", "{}"), kindOf("/x/draft.json", '{"listen": "a"}'), kindOf("/x/draft.json", '{"owner": "o"}'), kindOf("/x/draft.json", '{"sources": {"listen": {}}}'), kindOf("/x/rules.json", null)],
    ["manifest", "manifest", "config", "config", "config", "rules", "rules"]);
  const dir = tempDir();
  const fixed: [string, string, string][] = [
    ["rules.json", readFileSync(join(broken, "rules", "unknown-agent.json"), "utf8").replace("revewer", "reviewer"), "is valid: 1 rules, 1 agents, 1 sources, 0 channels, 0 elsewhere tasks"],
    ["config.json", readFileSync(join(broken, "config", "capacity-zero", "config.json"), "utf8").replace('"capacity": 0', '"capacity": 3'), "is valid: listens on 127.0.0.1:8787, 0 channels, worker local"],
    ["draft.json", readFileSync(join(broken, "config", "worker-text", "config.json"), "utf8").replace('"local"', "null"), "is valid: listens on 127.0.0.1:8787, 0 channels, worker none"],
    ["manifest.toml", readFileSync(join(broken, "manifest", "tool-twice.toml"), "utf8").replace(/greet"\n$/, 'wave"\n'), "is valid: plugin greeter 0.1.0 (sync), 2 tools"],
  ];
  for (const [name, text, said] of fixed) {
    writeFileSync(join(dir, name), text);
    assert.deepEqual(check(join(dir, name), "en"), { code: 0, err: "", out: `${join(dir, name)} ${said}` }, name);
  }
  writeFileSync(join(dir, "config.json"), '{"listen": "127.0.0.1:1", "owner": "o", "channels": {"a": {"use": "file", "key": "k", "path": "/p"}}}');
  assert.equal(check(join(dir, "config.json"), "zh").out, `${join(dir, "config.json")} 没问题：监听 127.0.0.1:1，1 个通道，接单程序 无`);
});

test("a manifest with several problems gets each on its own line, in the order of the file", () => {
  const dir = tempDir();
  const file = join(dir, "manifest.toml");
  writeFileSync(file, 'name = "a.b"\nversion = 1\nplugin_type = "sync"\n[entry_point]\ncommand = "../run"\n');
  assert.deepEqual(check(file, "en"), {
    code: 1, out: "",
    err: [`agent-autoloop: ${file}:1:1: name: letters, digits, _ and - only, starting with a letter or digit`, `${file}:2:1: version: must be string`, `${file}:5:1: entry_point.command: has a .. segment, which leaves the plugin folder`].join("\n"),
  });
});

/** The published schema of `file` (protocol/<file>), compiled by a plain Ajv as an editor's would be. */
function published(file: string): (value: unknown) => boolean {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const validate = ajv.compile(JSON.parse(readFileSync(join(engine, "protocol", file), "utf8")));
  return (value) => {
    const ok = validate(value);
    assert.ok(ok, `${file}: ${ajv.errorsText(validate.errors)}`);
    return ok;
  };
}

/** The json and jsonc blocks of README.md and the guide (docs/guide/) that are whole files (one object, nothing around it), by the file they show. */
function readmeFiles(): { rules: unknown[]; config: unknown[] } {
  const guide = join(engine, "docs", "guide");
  const readme = [join(engine, "README.md"), ...readdirSync(guide).filter((f) => f.endsWith(".md")).map((f) => join(guide, f))]
    .map((f) => readFileSync(f, "utf8"))
    .join("\n");
  const blocks = [...readme.matchAll(/^```jsonc?\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  const out = { rules: [] as unknown[], config: [] as unknown[] };
  for (const block of blocks) {
    const errors: ParseError[] = [];
    const value = parseJsonc(block, errors, { allowTrailingComma: true });
    if (errors.length > 0 || typeof value !== "object" || value === null || Array.isArray(value)) continue;
    if ("listen" in value) out.config.push(value);
    else if ("rules" in value || "agents" in value) out.rules.push(value);
  }
  return out;
}

test("the published schemas accept every example file: the starter rules, the docs' whole files, the examples' manifests", () => {
  const rules = published("rules.schema.json");
  const config = published("config.schema.json");
  const manifest = published("manifest.schema.json");
  const starter = parseJsonc(starterRules(engine), [], { allowTrailingComma: true });
  assert.ok(rules(starter));
  // Its $schema, for an editor, is the published schema itself.
  assert.equal(readFileSync(new URL(starter.$schema), "utf8"), readFileSync(join(engine, "protocol", "rules.schema.json"), "utf8"));
  const readme = readmeFiles();
  assert.deepEqual([readme.rules.length, readme.config.length], [2, 1], "the whole rules.json and config.json examples of the README and the guide");
  for (const r of readme.rules) rules(r);
  for (const c of readme.config) config(c);
  // The recipes' rules (examples/recipes/*/recipe.json `add`, with their placeholders filled as `recipe add` fills them).
  const recipes = join(engine, "examples", "recipes");
  const recipeNames = readdirSync(recipes).filter((d) => !d.includes("."));
  assert.equal(recipeNames.length, 7);
  for (const name of recipeNames) {
    const text = readFileSync(join(recipes, name, "recipe.json"), "utf8").replaceAll("{worker}", "local").replaceAll("{engine}", engine).replaceAll("{dir}", "/tmp/r");
    const recipe = JSON.parse(text) as { timezone?: string; add: Record<string, unknown> };
    assert.ok(rules({ ...(recipe.timezone ? { timezone: recipe.timezone } : {}), ...recipe.add }), name);
  }
  const examples = join(engine, "examples", "tool-plugins");
  const manifests = readdirSync(examples).map((d) => join(examples, d, "manifest.toml"));
  assert.equal(manifests.length, 5);
  for (const m of manifests) {
    const read = readToml(readFileSync(m, "utf8"), 24, "en");
    assert.ok(read.ok, m);
    manifest(read.value);
  }
});

test("the published schemas say what an editor needs: a $schema field, a description of every field, and the limits", () => {
  for (const file of ["rules.schema.json", "config.schema.json", "manifest.schema.json"]) {
    const doc = JSON.parse(readFileSync(join(engine, "protocol", file), "utf8"));
    assert.equal(doc.$schema, "https://json-schema.org/draft/2020-12/schema");
    assert.equal(doc.$id, `https://agent-autoloop.dev/protocol/${file}`);
    const undescribed: string[] = [];
    const walk = (node: Record<string, unknown>, path: string) => {
      for (const [k, v] of Object.entries((node.properties ?? {}) as Record<string, Record<string, unknown>>)) {
        if (typeof v.description !== "string") undescribed.push(`${path}.${k}`);
        walk(v, `${path}.${k}`);
        if (typeof v.additionalProperties === "object") walk(v.additionalProperties as Record<string, unknown>, `${path}.${k}.*`);
        if (typeof v.items === "object") walk(v.items as Record<string, unknown>, `${path}.${k}[]`);
      }
    };
    walk(doc, file);
    assert.deepEqual(undescribed, [], `${file}: every field has a description`);
  }
  const rules = JSON.parse(readFileSync(join(engine, "protocol", "rules.schema.json"), "utf8"));
  assert.equal(rules.properties.rules.maxItems, 1000);
  assert.equal(rules.properties.agents.additionalProperties.properties.env.maxItems, 100);
});
