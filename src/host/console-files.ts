/**
 * The owner console's files (issue 17): plain ES modules, a style sheet and one HTML page in `src/console/`, served
 * as they are (no build step), plus `catalog.json`, the console's texts of the message catalog in both languages,
 * the browser files of the libraries it uses (`vendor/`), read from their npm packages as they are, and the engine's
 * own modules it shares with the hub (`sdk/markdown.js`, `kernel/text.js`), as `npm run build` compiled them.
 * Only the files found in that one folder at first use and the named library and engine files are served (no path is
 * ever joined from a request), with the console's headers: a strict Content-Security-Policy (scripts and styles from
 * this origin only: no inline script or style, no eval), no framing, no sniffing, no referrer.
 */
import { readdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { engineDir } from "./home.js";
import { catalogEntries } from "../i18n/messages.js";

/** Headers of every console answer (pages, files, the sign-in exchange). */
export const consoleHeaders: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** One file of the console: its bytes, the same gzip'd (issue 30: sent to a browser that takes gzip), content type and cache policy. */
export interface ConsoleFile { body: Buffer; gzip: Buffer; type: string; cache: string }

const types: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json; charset=utf-8",
};

/** The folder of the console's files in this engine. */
export const consoleDir = join(engineDir, "src", "console");

/**
 * The libraries' browser files the console loads, by the name it asks for: cronstrue (cron expressions in words, in
 * English and Chinese) as its package builds it, a UMD script that sets `globalThis.cronstrue` when imported.
 */
const vendorFiles: Record<string, string> = {
  "vendor/cronstrue.js": "cronstrue/dist/cronstrue.min.js",
  "vendor/cronstrue-zh_CN.js": "cronstrue/locales/zh_CN.min.js",
};

/**
 * The engine's modules the console loads, by the name it asks for → the compiled file (relative to the engine), so
 * that the console and the hub read Markdown, name artifacts, tell a run's timeline and name states and paths with one
 * piece of code: the SDK's Markdown tokenizer (src/sdk/markdown.ts), the kernel's text rules (src/kernel/text.ts:
 * `artifactRoute`), its shared enumerations and run-state groups (src/kernel/states.ts), the `why` timeline
 * (src/kernel/timeline.ts, issue 27 #4) and the endpoint table (src/protocol/endpoints.ts: paths and methods). Each
 * loads nothing at run time but another of these (types only, erased), so the browser loads them alone
 * (tests/layers.test.ts holds them to that). `npm ci` and `npm run build` write `dist/`.
 */
export const engineModules: Readonly<Record<string, string>> = {
  "sdk/markdown.js": "dist/src/sdk/markdown.js",
  "kernel/text.js": "dist/src/kernel/text.js",
  "kernel/states.js": "dist/src/kernel/states.js",
  "kernel/timeline.js": "dist/src/kernel/timeline.js",
  "protocol/endpoints.js": "dist/src/protocol/endpoints.js",
};

let files: Promise<Map<string, ConsoleFile>> | null = null;

/**
 * The page with the browser told at once of every module the console loads at its start and of its texts (issue 30:
 * the first load at size): without it, the browser learns each import only when it has read the module that names it,
 * three round trips deep, and the texts only once all have run. Only the modules the page's own scripts import
 * statically are named (`staticImports`): the other views' modules load when shown (app.js `viewLoaders`), and the
 * libraries (`vendor/`) when a view needs them. The links go before the page's last script (boot.js, the first, goes
 * first: its requests start the load); `crossorigin` makes the
 * texts' preload the same request as the console's own fetch of them (same-origin credentials).
 * @param page the page's HTML; @param files each module's text by its name (`needs.js`, `kernel/text.js`).
 */
export function withPreloads(page: string, files: ReadonlyMap<string, string>): string {
  const entries = [...page.matchAll(/<script type="module" src="\/console\/([^"]+)"/g)].map((m) => m[1]!);
  const links = [...staticImports(entries, files)].filter((n) => !entries.includes(n)).sort()
    .map((n) => `<link rel="modulepreload" href="/console/${n}">`);
  links.push(`<link rel="preload" href="/console/catalog.json" as="fetch" crossorigin="anonymous">`);
  const last = `<script type="module" src="/console/${entries.at(-1)}"`;
  return page.replace(last, `${links.join("\n")}\n${last}`);
}

/**
 * The modules `entries` import statically, and theirs, by name (`import … from "./x.js"` and `export … from`, relative
 * to the importing module's folder); `import("./x.js")` loads later and is not followed. A name with no file is left out.
 */
export function staticImports(entries: readonly string[], files: ReadonlyMap<string, string>): Set<string> {
  const seen = new Set<string>();
  const next = [...entries];
  for (let name = next.pop(); name !== undefined; name = next.pop()) {
    const text = files.get(name);
    if (seen.has(name) || text === undefined) continue;
    seen.add(name);
    const dir = name.includes("/") ? name.slice(0, name.lastIndexOf("/") + 1) : "";
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s*"\.\/([^"]+)"/g)) next.push(dir + m[1]!);
  }
  return seen;
}

/** The last compression queued: each file waits for the one before it (`file`). */
let compressing: Promise<unknown> = Promise.resolve();

/**
 * A file as served: gzip'd once here, at the best level (the files do not change while the hub runs). One file at a
 * time, on the main thread, each in its own turn of the event loop, so a start's warming (`warmConsoleFiles`) holds a
 * request for one file's compression at most (the catalog, the largest: ~30 ms on a busy machine). Not in zlib's thread
 * pool: there each of its 4 threads kept the memory of the compressions it ran at once in its own malloc arena for the
 * life of the hub (+8 MB of idle RSS on a fresh home, issue 32).
 */
const file = async (body: Buffer, type: string, cache = "no-cache"): Promise<ConsoleFile> => {
  const turn = compressing.then(() => new Promise<void>((r) => setImmediate(r))).then(() => gzipSync(body, { level: 9 }));
  compressing = turn.catch(() => {});
  return { body, gzip: await turn, type, cache };
};

/** Reads the console's folder once: every file of a known type, and the catalog. */
async function load(): Promise<Map<string, ConsoleFile>> {
  const require = createRequire(import.meta.url);
  const sources: [string, Promise<Buffer>, string, string?][] = [];
  for (const name of await readdir(consoleDir)) {
    const type = types[name.slice(name.lastIndexOf("."))];
    if (!type) continue;
    // The page itself is never cached: it is the one file that names the others.
    sources.push([name, readFile(join(consoleDir, name)), type, name.endsWith(".html") ? "no-store" : "no-cache"]);
  }
  sources.push(["catalog.json", Promise.resolve(Buffer.from(JSON.stringify(consoleCatalog()))), types[".json"]!]);
  for (const [name, spec] of Object.entries(vendorFiles)) sources.push([name, readFile(require.resolve(spec)), types[".js"]!]);
  for (const [name, path] of Object.entries(engineModules)) sources.push([name, readFile(join(engineDir, path)), types[".js"]!]);
  const out = new Map(await Promise.all(sources.map(async ([name, body, type, cache]) => [name, await file(await body, type, cache)] as const)));
  const page = out.get("index.html");
  const modules = new Map([...out].filter(([n]) => n.endsWith(".js")).map(([n, f]) => [n, f.body.toString("utf8")]));
  if (page) out.set("index.html", await file(Buffer.from(withPreloads(page.body.toString("utf8"), modules)), page.type, page.cache));
  return out;
}

/**
 * The console's texts, by language then id: every message of the catalog but the command line's own (`cli.*`), so the
 * console words the hub's refusals and the texts of its facts from their ids and params (issue 27 #2), its own texts
 * (`console.*`) and its timeline with the same texts as `why` (`why.*`).
 */
export function consoleCatalog(): { zh: Record<string, string>; en: Record<string, string> } {
  const zh: Record<string, string> = {};
  const en: Record<string, string> = {};
  for (const [id, entry] of catalogEntries()) {
    if (id.startsWith("cli.")) continue;
    zh[id] = entry.zh;
    en[id] = entry.en;
  }
  return { zh, en };
}

/** The console file `name` (a plain file name of that folder, `catalog.json`, or a named library or engine file), or null. */
export async function consoleFile(name: string): Promise<ConsoleFile | null> {
  files ??= load().catch((e: unknown) => {
    files = null;
    throw e;
  });
  return (await files).get(name) ?? null;
}

/**
 * Reads and compresses the console's files now, in the background (serve calls it once listening): the first page a
 * console opens after a start no longer waits for every file to be read and gzip'd (issue 30's first load; 1.1 s on a
 * busy machine). A failure is left for the first request to meet and report again.
 */
export function warmConsoleFiles(): void {
  consoleFile("index.html").catch(() => {});
}
