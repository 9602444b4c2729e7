/**
 * How the tool host tells a plugin's Node process what to confine (import-confinement-start.ts): the variables it
 * sets, and the `NODE_OPTIONS` that loads the confinement first.
 */
import { pathToFileURL } from "node:url";
import { join } from "node:path";

/** The plugin's folder, whose code may import by name only what lies inside it. */
export const importFolderVariable = "AGENT_AUTOLOOP_PLUGIN_FOLDER";
/** The refusal's text in the owner's language, with `{specifier}`, `{found}` and `{folder}`. */
export const importRefusedVariable = "AGENT_AUTOLOOP_IMPORT_REFUSED";

/**
 * The variables that confine a Node plugin process started in `folder`: the two above and `NODE_OPTIONS` with the
 * confinement's `--import` first, then `given` (the manifest's own `NODE_OPTIONS`, kept).
 * @param engine the engine's folder; its compiled `dist/src/plugins/import-confinement-start.js` is loaded
 */
export function importConfinementEnv(folder: string, refused: string, engine: string, given: string | undefined): Record<string, string> {
  const start = pathToFileURL(join(engine, "dist", "src", "plugins", "import-confinement-start.js")).href;
  const options = `--import=${start}${given ? ` ${given}` : ""}`;
  return { [importFolderVariable]: folder, [importRefusedVariable]: refused, NODE_OPTIONS: options };
}
