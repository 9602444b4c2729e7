/**
 * The layers of DESIGN.md, checked on the code: every import under `src/`, `plugins/` and `examples/plugins/` (static
 * `import` and `export … from`, `import type`, `import("…")` with a literal string) must follow the arrows below.
 * A violation prints as `file:line imports X (layer A → layer B not allowed)`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { filesUnder, importSpecs, resolveRelative, type ImportSpec } from "./imports.js";
import { consoleDir, engineModules } from "../src/host/console-files.js";
import { engine } from "./helpers.js";

type Layer = "kernel" | "i18n" | "protocol" | "sdk" | "common" | "plugin-model" | "tools" | "declarative" | "worker" | "host" | "cli" | "plugins" | "console";

/** Which layer a file is in, by the folder it is under (the first match). A file under none fails the test. */
const folders: [string, Layer][] = [
  ["src/kernel/", "kernel"],
  ["src/i18n/", "i18n"],
  ["src/protocol/", "protocol"],
  ["src/sdk/", "sdk"],
  ["src/common/", "common"],
  ["src/plugins/", "plugin-model"],
  ["src/tools/", "tools"],
  ["src/declarative/", "declarative"],
  ["src/worker/", "worker"],
  ["src/host/", "host"],
  ["src/cli/", "cli"],
  ["src/console/", "console"],
  ["plugins/", "plugins"],
  ["examples/plugins/", "plugins"],
];

interface Arrows {
  /** The other layers it may import (its own layer always; a plugin only its own folder). */
  layers: Layer[];
  /** Layers it may import types from only (`import type`: nothing is loaded at run time). */
  typesFrom?: Layer[];
  /** npm packages: the ones named, or any the project declares in package.json `dependencies`. */
  npm: string[] | "declared";
  /** Node's built-in modules: all, or these with only these named imports. */
  node: "all" | Record<string, string[]>;
  /** Package subpaths of this engine it may import by name. */
  engine?: string[];
  /** Engine files of other layers it may import, each named: the console's are the modules the hub serves it. */
  files?: string[];
}

/**
 * The arrows (DESIGN.md "Shape" and "Plugin hosts"): what each layer may import. Arrows point inward: the kernel is
 * pure (its catalog texts, deterministic hashing, two pure parsers); the SDK is what plugins see and loads no hub;
 * `common` (where things are) is shared by every part that runs here; the common plugin layer (`src/plugins`: roots,
 * records, one registry and one watcher, code plugins checked by the SDK's shapes) is below every host of plugins
 * (issue 27): the tool host and the declarative plugin host register with it and import no other host — the
 * declarative host implements the tool host's `DataTools` seam from the plugin layer's types; the worker and the tool
 * host (a part of the worker layer) never import the host; plugins import the SDK only.
 */
const arrows: Record<Layer, Arrows> = {
  kernel: { layers: ["i18n"], typesFrom: ["protocol"], npm: ["croner", "jsonc-parser"], node: { "node:crypto": ["createHash", "createHmac", "timingSafeEqual"] } },
  i18n: { layers: [], npm: [], node: {} },
  protocol: { layers: ["kernel", "i18n"], npm: "declared", node: "all" },
  sdk: { layers: ["kernel", "i18n"], typesFrom: ["protocol"], npm: [], node: "all" },
  common: { layers: [], npm: [], node: "all" },
  "plugin-model": { layers: ["kernel", "i18n", "sdk", "common"], typesFrom: ["protocol"], npm: ["tsx"], node: "all" },
  tools: { layers: ["kernel", "i18n", "protocol", "sdk", "common", "plugin-model", "worker"], npm: "declared", node: "all" },
  declarative: { layers: ["kernel", "i18n", "protocol", "common", "plugin-model"], npm: "declared", node: "all" },
  worker: { layers: ["kernel", "i18n", "protocol", "sdk", "common", "plugin-model", "tools", "declarative"], npm: "declared", node: "all" },
  host: { layers: ["kernel", "i18n", "protocol", "sdk", "common", "plugin-model", "tools", "declarative", "worker"], npm: "declared", node: "all" },
  cli: { layers: ["kernel", "i18n", "protocol", "sdk", "common", "plugin-model", "tools", "declarative", "worker", "host"], npm: "declared", node: "all" },
  plugins: { layers: [], npm: "declared", node: "all", engine: ["agent-autoloop/sdk"] },
  // The owner console runs in the browser: its own modules only (served as they are, no bundler), nothing of Node;
  // and the engine modules the hub serves it compiled (src/host/console-files.ts `engineModules`), by name. Its JSDoc
  // takes its types from the protocol and the kernel (`import("…")` types: erased, nothing loads; issue 27 #4).
  console: {
    layers: [], typesFrom: ["protocol", "kernel", "i18n"], npm: [], node: {},
    files: ["src/sdk/markdown.ts", "src/kernel/text.ts", "src/kernel/states.ts", "src/kernel/timeline.ts", "src/protocol/endpoints.ts"],
  },
};

/**
 * Clients never reach the database: no file of the CLI may load these, directly or through what it imports — except
 * through `host/serve.ts`, the sanctioned door: `serve` and `init` start or create the hub, and `key new|remove`
 * writes keys locally only while no hub runs on the home (src/cli/connect.ts `changeKeys` holds the home's lock).
 */
const database = ["src/host/store.ts", "npm:better-sqlite3"];
const databaseDoor = "src/host/serve.ts";

const declared = Object.keys((JSON.parse(readFileSync(join(engine, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies);
/** One import: where it is, what it names, what it resolves to, and whether only types come in. */
interface Import extends ImportSpec { file: string; target: string }

const rel = (p: string) => relative(engine, p).split(sep).join("/");

/**
 * The source of the engine module a console file names beside the console's own files (`./sdk/markdown.js` is
 * /console/sdk/markdown.js, which the hub serves compiled from src/sdk/markdown.ts), or null.
 */
function servedModule(from: string, spec: string): string | null {
  if (layerOf(rel(from)) !== "console") return null;
  const built = engineModules[relative(consoleDir, resolve(dirname(from), spec)).split(sep).join("/")];
  return built ? join(engine, built.replace(/^dist\//, "").replace(/\.js$/, ".ts")) : null;
}

/** What an import names: an engine file (relative to the engine), `node:<name>`, `npm:<package>` or `engine:<subpath>`. */
function targetOf(file: string, spec: string): string {
  if (spec.startsWith(".")) {
    const f = resolveRelative(file, spec) ?? servedModule(file, spec);
    return f ? rel(f) : `unresolved:${spec}`;
  }
  if (spec.startsWith("node:") || isBuiltin(spec)) return spec.startsWith("node:") ? spec : `node:${spec}`;
  if (spec === "agent-autoloop" || spec.startsWith("agent-autoloop/")) return `engine:${spec}`;
  const parts = spec.split("/");
  return `npm:${spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]}`;
}

/** Every import of a file, with its line and what it resolves to (tests/imports.ts reads them). */
function importsOf(file: string): Import[] {
  return importSpecs(file).map((i) => ({ file, ...i, target: targetOf(file, i.spec) }));
}

function layerOf(path: string): Layer | null {
  return folders.find(([prefix]) => path.startsWith(prefix))?.[1] ?? null;
}

/** The plugin folder a file is in (`plugins/<name>` or `examples/plugins/<name>`). */
function pluginFolder(path: string): string {
  const parts = path.split("/");
  return parts.slice(0, parts[0] === "examples" ? 3 : 2).join("/");
}

/** Why an import crosses a layer against the arrows, or null when it may be made. */
function violation(i: Import): string | null {
  const from = rel(i.file);
  const layer = layerOf(from)!;
  const a = arrows[layer];
  const no = (to: string) => `${layer} → ${to} not allowed`;
  if (i.target.startsWith("unresolved:")) return `${no(i.spec)}: no such file`;
  if (i.target.startsWith("node:")) {
    if (a.node === "all") return null;
    const names = Object.hasOwn(a.node, i.target) ? a.node[i.target]! : null;
    if (!names) return no(i.target);
    const extra = i.names === null ? ["*"] : i.names.filter((n) => !names.includes(n));
    return extra.length === 0 ? null : no(`${i.target} ${extra.join(", ")}`);
  }
  if (i.target.startsWith("npm:")) {
    const pkg = i.target.slice(4);
    const allowed = a.npm === "declared" ? declared : a.npm;
    if (allowed.includes(pkg)) return null;
    return a.npm === "declared" ? `${no(`npm package ${pkg}`)}: not in package.json dependencies` : no(`npm package ${pkg}`);
  }
  if (i.target.startsWith("engine:")) return a.engine?.includes(i.spec) ? null : no(i.spec);
  if (a.files?.includes(i.target)) return null;
  const to = layerOf(i.target);
  if (!to) return no(i.target);
  if (layer === "plugins") return to === "plugins" && pluginFolder(i.target) === pluginFolder(from) ? null : no(to === "plugins" ? `another plugin (${pluginFolder(i.target)})` : to);
  if (to === layer || a.layers.includes(to)) return null;
  if (a.typesFrom?.includes(to)) return i.typeOnly ? null : `${no(to)} at run time (import type only)`;
  return no(to);
}

const files = ["src", "plugins", join("examples", "plugins")].flatMap((d) => filesUnder(join(engine, d)));
const imports = files.flatMap(importsOf);

/** The engine files and packages a file loads at run time, directly or through others, stopping at `stop`. */
function reach(start: string, stop: string[] = []): Map<string, string[]> {
  const byFile = new Map<string, Import[]>();
  for (const i of imports) if (!i.typeOnly) byFile.set(rel(i.file), [...(byFile.get(rel(i.file)) ?? []), i]);
  const paths = new Map<string, string[]>([[start, [start]]]);
  const queue = [start];
  while (queue.length > 0) {
    const f = queue.shift()!;
    for (const i of byFile.get(f) ?? []) {
      if (paths.has(i.target) || stop.includes(i.target)) continue;
      paths.set(i.target, [...paths.get(f)!, i.target]);
      if (!i.target.includes(":")) queue.push(i.target);
    }
  }
  return paths;
}

test("every file under src/, plugins/ and examples/plugins/ is in a layer, and the walk finds their imports", () => {
  assert.deepEqual(files.map(rel).filter((f) => layerOf(f) === null), []);
  // The walk sees every kind of import: a static one, a type-only one, a dynamic one, a re-export.
  const seen = (file: string, spec: string) => imports.find((i) => rel(i.file) === file && i.spec === spec);
  assert.equal(seen("src/cli/main.ts", "./doctor.js")?.typeOnly, false, "import(\"./doctor.js\")");
  assert.equal(seen("src/kernel/tell.ts", "../protocol/schema.js")?.typeOnly, true);
  assert.equal(seen("src/sdk/index.ts", "./agent.js")?.target, "src/sdk/agent.ts");
  assert.equal(seen("plugins/feishu/channel.ts", "agent-autoloop/sdk")?.target, "engine:agent-autoloop/sdk");
});

test("no import crosses a layer against the arrows of DESIGN.md", () => {
  const found = imports.flatMap((i) => {
    const why = violation(i);
    return why ? [`${rel(i.file)}:${i.line} imports ${i.spec} (${why})`] : [];
  });
  assert.deepEqual(found, [], `\n${found.join("\n")}`);
});

test("the engine modules the hub serves the console are the ones it may import, each loading none but another of them (a browser loads them alone)", () => {
  const served = Object.values(engineModules).map((built) => built.replace(/^dist\//, "").replace(/\.js$/, ".ts"));
  assert.deepEqual(served, arrows.console.files);
  // Served beside each other under /console/ as under src/: a relative import of another served module resolves there too.
  const loads = (file: string) => imports.filter((i) => rel(i.file) === file && !i.typeOnly && !served.includes(i.target));
  for (const file of served) assert.deepEqual(loads(file).map((i) => `${file}:${i.line} imports ${i.spec}`), []);
  for (const [name, built] of Object.entries(engineModules)) assert.equal(built, `dist/src/${name}`, "served at its own path under src/");
  // What the console imports of them resolves to the served sources; nothing else of the engine resolves so.
  const seen = (file: string, spec: string) => imports.find((i) => rel(i.file) === file && i.spec === spec)?.target;
  assert.equal(seen("src/console/ui.js", "./sdk/markdown.js"), "src/sdk/markdown.ts");
  assert.equal(seen("src/console/ui.js", "./kernel/text.js"), "src/kernel/text.ts");
  assert.equal(targetOf(join(engine, "src/console/ui.js"), "./sdk/index.js"), "unresolved:./sdk/index.js");
  assert.equal(targetOf(join(engine, "src/host/http.ts"), "./sdk/markdown.js"), "unresolved:./sdk/markdown.js");
});

test("clients never reach the database: no CLI file loads the store or better-sqlite3, except through host/serve.ts", () => {
  const found: string[] = [];
  for (const file of files.map(rel).filter((f) => layerOf(f) === "cli")) {
    const paths = reach(file, [databaseDoor]);
    const path = database.map((db) => paths.get(db)).find((p) => p !== undefined);
    if (!path) continue;
    const first = imports.find((i) => rel(i.file) === file && i.target === path[1] && !i.typeOnly)!;
    found.push(`${file}:${first.line} imports ${first.spec} (cli → database not allowed: ${path.slice(1).join(" → ")})`);
  }
  assert.deepEqual(found, [], `\n${found.join("\n")}`);
});

test("the plugin SDK loads no hub: from src/sdk/index.ts only the kernel, the catalog and pure packages are reached", () => {
  const reached = [...reach("src/sdk/index.ts").keys()];
  const layers = [...new Set(reached.filter((t) => !t.includes(":")).map((t) => layerOf(t)))].sort();
  assert.deepEqual(layers, ["i18n", "kernel", "sdk"]);
  const packages = reached.filter((t) => t.startsWith("npm:")).map((t) => t.slice(4));
  assert.deepEqual(packages.filter((p) => !(arrows.kernel.npm as string[]).includes(p)), [], "only the kernel's pure packages");
  const exported = Object.keys(JSON.parse(readFileSync(join(engine, "package.json"), "utf8")).exports as Record<string, unknown>);
  assert.deepEqual(exported, ["./sdk", "./package.json"]);
});

// ── one plugin model (issue 27, point 1) ─────────────────────────────────────────────────────────────────────────
/** The hosts of plugins: each registers with the common plugin layer through its kind loader and imports no other. */
const pluginHosts = [
  { folder: "src/tools/", loader: "src/tools/kind.ts" },
  { folder: "src/declarative/", loader: "src/declarative/kind.ts" },
  { folder: "src/plugins/code", loader: "src/plugins/code-kind.ts" },
];

test("the tool host, the declarative host and the code plugin loader register with the common plugin layer and import no other host", async () => {
  for (const { folder, loader } of pluginHosts) {
    // Registers: its kind loader is typed by the plugin layer's KindLoader.
    assert.ok(imports.some((i) => rel(i.file) === loader && i.target === "src/plugins/types.ts"), `${loader} imports the plugin layer's types`);
    const others = pluginHosts.filter((h) => h.folder !== folder);
    const crossing = imports.filter((i) => rel(i.file).startsWith(folder) && others.some((o) => i.target.startsWith(o.folder)));
    assert.deepEqual(crossing.map((i) => `${rel(i.file)}:${i.line} imports ${i.spec}`), [], folder);
  }
  // The common layer imports no host of plugins (its arrows), and every kind is loaded by exactly one loader.
  assert.deepEqual(arrows["plugin-model"].layers.filter((l) => ["tools", "declarative", "worker", "host", "cli"].includes(l)), []);
  const [{ pluginKinds, codePlugins, PluginLoader, LastGood }, { ToolPlugins }, { declarativePlugins, DeclarativeCatalog }] = await Promise.all([
    import("../src/plugins/index.js"), import("../src/tools/kind.js"), import("../src/declarative/index.js"),
  ]);
  const loaders = [
    codePlugins({ loader: new PluginLoader(null, "en"), lang: "en" }), new ToolPlugins([], "en", new LastGood(null)),
    declarativePlugins(new DeclarativeCatalog({ roots: [], lang: "en" })),
  ];
  assert.deepEqual(loaders.flatMap((l) => [...l.kinds]).sort(), [...pluginKinds].sort());
});

/** Runtime import cycles among the files under `prefixes`, by their imports (`import type` is gone at run time). */
function cyclesAmong(prefixes: string[]): string[][] {
  const within = (f: string) => prefixes.some((p) => f.startsWith(p));
  const edges = new Map<string, string[]>();
  for (const i of imports) if (!i.typeOnly && within(rel(i.file)) && within(i.target)) edges.set(rel(i.file), [...(edges.get(rel(i.file)) ?? []), i.target]);
  return cyclesIn(edges);
}

/** The cycles of a graph, each as its nodes in order, the first again at the end. */
function cyclesIn(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const visit = (f: string, path: string[]) => {
    if (state.get(f) === "done") return;
    if (state.get(f) === "open") return void found.push([...path.slice(path.indexOf(f)), f]);
    state.set(f, "open");
    for (const t of edges.get(f) ?? []) visit(t, [...path, f]);
    state.set(f, "done");
  };
  for (const f of edges.keys()) visit(f, []);
  return found;
}

test("the plugin layers have no import cycle, and no module of them is over 500 lines", () => {
  assert.deepEqual(cyclesIn(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]])), [["a", "b", "c", "a"]], "the search finds a cycle");
  const folders = ["src/plugins/", "src/tools/", "src/declarative/"];
  assert.deepEqual(cyclesAmong(folders).map((c) => c.join(" → ")), []);
  const long = files.map(rel).filter((f) => folders.some((p) => f.startsWith(p)) && !f.endsWith(".generated.ts"))
    .map((f) => [f, readFileSync(join(engine, f), "utf8").split("\n").length] as const).filter(([, n]) => n > 500);
  assert.deepEqual(long, []);
});
