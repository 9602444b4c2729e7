/**
 * Module resolution hooks that keep a plugin's imports by name inside its folder (import-scope.ts says why). They run
 * on Node's loader thread (registered by import-confinement.ts with `module.register`); the scopes arrive on a port,
 * each acknowledged before the thread that sent it imports a plugin. Every other module resolves as Node resolves it.
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import type { MessagePort } from "node:worker_threads";
import { looksUp, namesEngine, pluginFolderOf, realOr, refusal, within, type ImportScope } from "./import-scope.js";

/** What the registering thread gives: the engine's folder (real path) and the port scopes arrive on. */
interface HooksData { engine: string; port: MessagePort }
/** A scope sent on the port, with the number the acknowledgement carries back. */
interface ScopeMessage { id: number; scope: ImportScope }

interface ResolveContext { parentURL?: string; conditions?: string[]; importAttributes?: Record<string, string> }
interface ResolveResult { url: string; format?: string | null; shortCircuit?: boolean }
type NextResolve = (specifier: string, context?: ResolveContext) => Promise<ResolveResult>;

// The hooks are this thread's: one registration per registering thread, so these live as long as the thread.
const scopes: ImportScope[] = [];
let engineParent = "";
let engine = "";

/** Takes the engine's folder and starts listening for scopes (Node calls this once, on the loader thread). */
export function initialize(data: HooksData): void {
  engine = data.engine;
  engineParent = pathToFileURL(`${data.engine}/package.json`).href;
  data.port.on("message", (m: ScopeMessage) => {
    scopes.push(m.scope);
    data.port.postMessage(m.id);
  });
  data.port.unref();
}

/**
 * Resolves as Node does, except for a module inside a confined plugin folder: `agent-autoloop/…` from the engine, and
 * another import by name only when it resolves to a built-in module, a file inside the folder or one of the engine's
 * own (its packages: an example plugin run from the engine's folder imports them).
 * @throws Error (code `ERR_AGENT_AUTOLOOP_IMPORT_OUTSIDE`) naming the import, where Node found it and the folder.
 */
export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<ResolveResult> {
  const parent = context.parentURL;
  if (scopes.length === 0 || parent === undefined || !parent.startsWith("file:")) return next(specifier, context);
  const owner = pluginFolderOf(fileURLToPath(parent), scopes);
  if (owner === null) return next(specifier, context);
  if (namesEngine(specifier)) return next(specifier, { ...context, parentURL: engineParent });
  if (!looksUp(specifier)) return next(specifier, context);
  const found = await next(specifier, context);
  if (found.url.startsWith("node:")) return found;
  const path = found.url.startsWith("file:") ? realOr(fileURLToPath(found.url)) : null;
  if (path !== null && (within(path, owner.folder) || within(path, engine))) return found;
  throw refusal(owner.scope, specifier, path ?? found.url, owner.folder);
}
