/**
 * Confines what plugin code loaded by the hub imports to the plugin's folder (import-scope.cts says why: hostile
 * rounds 43–44), on both of Node's module systems: ES modules through resolution hooks on the loader thread
 * (import-hooks.ts, `module.register`), CommonJS `require` — which Node 20's hooks do not see — by checking what
 * `Module._resolveFilename` found (import-scope.cts `wrapRequire`).
 *
 * Node's resolver is one per thread, so is this: the first call in a thread registers the hooks and wraps the resolver;
 * each scope is added once and kept for the thread's life (a hub names its roots once; a test process starting many
 * hubs adds one scope each, at most `importScopesMax`).
 */
import { register } from "node:module";
import { t, type Lang } from "../i18n/messages.js";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { wrapRequire, type ImportScope } from "./import-scope.cjs";

/** The refusal's text of an import outside a plugin's folder in `lang`, its `{specifier}`, `{found}`, `{folder}` left to fill. */
export function importRefusedText(lang: Lang): string {
  return t(lang, "plugins.importOutside", { specifier: "{specifier}", found: "{found}", folder: "{folder}" });
}

/** Scopes one thread keeps at most; more are refused (each hub of a process adds one). */
export const importScopesMax = 1_000;

/** This thread's confinement: the scopes, the port to the loader thread and the acknowledgements awaited. */
interface Confinement { scopes: ImportScope[]; keys: Set<string>; port: MessagePort; waiting: Map<number, () => void>; next: number }

// One per thread, as Node's resolver is (see above).
let confinement: Confinement | null = null;

/**
 * Confines the plugin folders `scope` names, in this thread, from now on; resolves once the loader thread has the
 * scope too (an import started after that is checked). Adding a scope again does nothing.
 * @param engine the engine's folder (real path), from which `agent-autoloop/…` resolves
 * @returns false, adding nothing, when this thread already keeps `importScopesMax` scopes (load no plugin then)
 */
export async function confineImports(scope: ImportScope, engine: string): Promise<boolean> {
  const c = (confinement ??= start(engine));
  const key = JSON.stringify([scope.roots, scope.folders, scope.refused]);
  if (c.keys.has(key)) return true;
  if (c.keys.size >= importScopesMax) return false;
  c.keys.add(key);
  c.scopes.push(scope);
  const id = c.next++;
  const acknowledged = new Promise<void>((done) => c.waiting.set(id, done));
  c.port.ref();
  c.port.postMessage({ id, scope });
  await acknowledged;
  return true;
}

/** Registers the hooks and wraps CommonJS's resolver, once per thread. */
function start(engine: string): Confinement {
  const { port1, port2 } = new MessageChannel();
  const c: Confinement = { scopes: [], keys: new Set(), port: port1, waiting: new Map(), next: 0 };
  port1.on("message", (id: number) => {
    c.waiting.get(id)?.();
    c.waiting.delete(id);
    if (c.waiting.size === 0) port1.unref();
  });
  port1.unref();
  // The compiled hooks: run from the sources (the tests, through tsx), the loader thread could not load the CommonJS
  // helpers they import (tsx's hooks there cannot require).
  const hooks = import.meta.url.endsWith(".ts") ? pathToFileURL(join(engine, "dist", "src", "plugins", "import-hooks.js")) : new URL("./import-hooks.js", import.meta.url);
  register(hooks, { data: { engine, port: port2 }, transferList: [port2] });
  wrapRequire(c.scopes, engine);
  return c;
}
