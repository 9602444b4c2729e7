/**
 * Loaded first by the Node process of a tool plugin that runs without a sandbox (`--require` at the head of its
 * `NODE_OPTIONS`, tools/process.ts), so before any preload of the manifest's (round 44, F44b-2: `node -r dotenv/config`
 * found an agent's `~/package.json` named `dotenv`, as Node runs every `-r` before any `--import`): what the plugin's
 * code imports comes from its own folder or the engine's (import-scope.cts; hostile round 43, F43b-1). The folder and
 * the refusal's text come in the environment. Node runs preloads on its loader thread too: there it only wraps
 * `require` (the hooks are the main thread's to register).
 */
import { register } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { isMainThread } from "node:worker_threads";
import { realOr, wrapRequire, type ImportScope } from "./import-scope.cjs";
import { importFolderVariable, importRefusedVariable } from "./import-variables.cjs";

const folder = process.env[importFolderVariable];
if (folder !== undefined && folder !== "") {
  // This file is <engine>/dist/src/plugins/import-confinement-start.cjs.
  const engine = realOr(join(__dirname, "..", "..", ".."));
  const scope: ImportScope = { roots: [], folders: [realOr(folder)], refused: process.env[importRefusedVariable] ?? "ERR_AGENT_AUTOLOOP_IMPORT_OUTSIDE {folder} {specifier} {found}" };
  wrapRequire([scope], engine);
  if (isMainThread) register(pathToFileURL(join(__dirname, "import-hooks.js")).href, { data: { engine, scopes: [scope] } });
}
