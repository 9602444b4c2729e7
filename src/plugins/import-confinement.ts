/**
 * Confines what plugin code imports by name to the plugin's folder (import-scope.ts says why: hostile round 43,
 * F43b-1 and F43b-2), on both of Node's module systems: ES modules through resolution hooks on the loader thread
 * (import-hooks.ts, `module.register`), CommonJS `require` — which Node 20's hooks do not see — by checking what
 * `Module._resolveFilename` found.
 *
 * Node's resolver is one per thread, so is this: the first call in a thread registers the hooks and wraps the resolver;
 * each scope is added once and kept for the thread's life (a hub names its roots once; a test process starting many
 * hubs adds one scope each, at most `importScopesMax`). Imports nothing of the message catalog: a tool plugin's Node
 * process loads this at its start (import-confinement-start.ts).
 */
import Module, { isBuiltin, register } from "node:module";
import { dirname, join } from "node:path";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { looksUp, namesEngine, pluginFolderOf, realOr, refusal, within, type ImportScope } from "./import-scope.js";

/** Scopes one thread keeps at most; more are refused (each hub of a process adds one). */
export const importScopesMax = 1_000;

/** CommonJS's resolver, which Node keeps as a property of `Module` (not in its public types). */
type ResolveFilename = (request: string, parent: Module | undefined, isMain: boolean, options?: unknown) => string;
interface ModuleStatics { _resolveFilename: ResolveFilename; _nodeModulePaths(from: string): string[] }

/** This thread's confinement: the scopes, the port to the loader thread and the acknowledgements awaited. */
interface Confinement { scopes: ImportScope[]; keys: Set<string>; port: MessagePort; waiting: Map<number, () => void>; next: number }

// One per thread, as Node's resolver is (see above).
let confinement: Confinement | null = null;

/**
 * Confines the plugin folders `scope` names, in this thread, from now on; resolves once the loader thread has the
 * scope too (an import started after that is checked). Adding a scope again does nothing.
 * @param engine the engine's folder (real path), from which `agent-autoloop/…` resolves
 * @throws Error when this thread already keeps `importScopesMax` scopes
 */
export async function confineImports(scope: ImportScope, engine: string): Promise<void> {
  const c = (confinement ??= start(engine));
  const key = JSON.stringify([scope.roots, scope.folders, scope.refused]);
  if (c.keys.has(key)) return;
  if (c.keys.size >= importScopesMax) throw new Error(`more than ${importScopesMax} import scopes in one thread`);
  c.keys.add(key);
  c.scopes.push(scope);
  const id = c.next++;
  const acknowledged = new Promise<void>((done) => c.waiting.set(id, done));
  c.port.ref();
  c.port.postMessage({ id, scope });
  await acknowledged;
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
  register(new URL("./import-hooks.js", import.meta.url), { data: { engine, port: port2 }, transferList: [port2] });
  wrapRequire(c.scopes, engine);
  return c;
}

/**
 * Checks what CommonJS's resolver finds for a module inside a confined folder, as the hooks do for ES modules.
 * @throws Error (code `ERR_AGENT_AUTOLOOP_IMPORT_OUTSIDE`) from `require` when the package lies outside the folder.
 */
function wrapRequire(scopes: readonly ImportScope[], engine: string): void {
  const statics = Module as unknown as ModuleStatics;
  const original = statics._resolveFilename;
  const engineModule = new Module(join(engine, "package.json"));
  engineModule.filename = join(engine, "package.json");
  engineModule.paths = statics._nodeModulePaths(dirname(engineModule.filename));
  statics._resolveFilename = function confined(this: unknown, request, parent, isMain, options) {
    const from = parent?.filename;
    const owner = typeof from === "string" && scopes.length > 0 ? pluginFolderOf(from, scopes) : null;
    if (owner === null || !looksUp(request)) return original.call(this, request, parent, isMain, options);
    if (namesEngine(request)) return original.call(this, request, engineModule, isMain, options);
    const found = original.call(this, request, parent, isMain, options);
    if (isBuiltin(found)) return found;
    const path = realOr(found);
    if (within(path, owner.folder) || within(path, engine)) return found;
    throw refusal(owner.scope, request, path, owner.folder);
  };
}
