/**
 * Loaded first by the Node process of a tool plugin that runs without a sandbox (`--import` in its `NODE_OPTIONS`,
 * tools/process.ts): what the plugin's code imports by name comes from its own folder (import-scope.ts; hostile round
 * 43, F43b-1: a `package.json` an agent wrote in the user's home, named like a package the plugin imports, ran its code
 * in a plugin the owner trusted with "always allow"). The folder and the refusal's text come in the environment.
 */
import { engineDir } from "../common/paths.js";
import { realOr } from "./import-scope.js";
import { confineImports } from "./import-confinement.js";
import { importFolderVariable, importRefusedVariable } from "./import-variables.js";

const folder = process.env[importFolderVariable];
if (folder !== undefined && folder !== "") {
  await confineImports({ roots: [], folders: [realOr(folder)], refused: process.env[importRefusedVariable] ?? "{folder}: {specifier} ({found}) lies outside the plugin's folder" }, realOr(engineDir));
}
