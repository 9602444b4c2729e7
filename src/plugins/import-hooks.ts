/**
 * Module resolution hooks that keep what a plugin's code imports inside its folder (import-scope.cts says why). They
 * run on Node's loader thread, registered with `module.register`: by the hub (import-confinement.ts), whose scopes
 * arrive on a port, each acknowledged before the thread that sent it imports a plugin; by a tool plugin's preload
 * (import-confinement-start.cts), whose one scope comes with the registration. Other modules resolve as Node resolves.
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import type { MessagePort } from "node:worker_threads";
import { looksUp, namesEngine, ownFile, pluginFolderOf, realOr, refusal, type ImportScope } from "./import-scope.cjs";

/** What the registering thread gives: the engine's folder (real path), scopes, and the port more scopes arrive on. */
interface HooksData { engine: string; scopes?: ImportScope[]; port?: MessagePort }
/** A scope sent on the port, with the number the acknowledgement carries back. */
interface ScopeMessage { id: number; scope: ImportScope }

interface ResolveContext { parentURL?: string; conditions?: string[]; importAttributes?: Record<string, string> }
interface ResolveResult { url: string; format?: string | null; shortCircuit?: boolean }
type NextResolve = (specifier: string, context?: ResolveContext) => Promise<ResolveResult>;

// The hooks are this registration's: they live as long as the loader thread.
const scopes: ImportScope[] = [];
let engine = "";
let engineParent = "";

/** Takes the engine's folder and the scopes, and listens for more (Node calls this once, on the loader thread). */
export function initialize(data: HooksData): void {
  engine = data.engine;
  engineParent = pathToFileURL(`${data.engine}/package.json`).href;
  scopes.push(...(data.scopes ?? []));
  const port = data.port;
  if (port === undefined) return;
  port.on("message", (m: ScopeMessage) => {
    scopes.push(m.scope);
    port.postMessage(m.id);
  });
  port.unref();
}

/**
 * Resolves as Node (and the hooks registered after these: tsx) would, then, for a module inside a confined plugin
 * folder (or an `--import` by name from it as the working folder), lets the result through only when it is a
 * built-in module or a file inside the folder or the engine's;
 * `agent-autoloop/…` resolves from the engine. A `data:` URL passes only as written by the module itself.
 * @throws Error (code `ERR_AGENT_AUTOLOOP_IMPORT_OUTSIDE`) naming the import, what it resolved to and the folder.
 */
export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<ResolveResult> {
  const parent = context.parentURL;
  if (scopes.length === 0 || parent === undefined || !parent.startsWith("file:")) return next(specifier, context);
  const owner = pluginFolderOf(realOr(fileURLToPath(parent)), scopes);
  if (owner === null) return next(specifier, context);
  if (namesEngine(specifier)) return next(specifier, { ...context, parentURL: engineParent });
  // The working folder is the parent of `--import`s: a path there is the command line's, which the manifest wrote.
  if (parent.endsWith("/") && !looksUp(specifier)) return next(specifier, context);
  const found = await next(specifier, context);
  if (found.url.startsWith("node:")) return found;
  if (found.url.startsWith("data:") && found.url === specifier) return found;
  const path = found.url.startsWith("file:") ? realOr(fileURLToPath(found.url)) : null;
  if (path !== null && ownFile(path, owner.folder, engine)) return found;
  throw refusal(owner.scope, specifier, path ?? found.url, owner.folder);
}
