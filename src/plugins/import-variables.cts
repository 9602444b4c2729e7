/**
 * How the tool host tells a plugin's Node process what to confine (import-confinement-start.cts): the variables it
 * sets, and the `NODE_OPTIONS` that loads the confinement first. CommonJS: the preload reads these names too.
 */
import { join } from "node:path";

/** The plugin's folder, whose code may import only what lies inside it (or the engine's). */
export const importFolderVariable = "AGENT_AUTOLOOP_PLUGIN_FOLDER";
/** The refusal's text in the owner's language, with `{specifier}`, `{found}` and `{folder}`. */
export const importRefusedVariable = "AGENT_AUTOLOOP_IMPORT_REFUSED";

/**
 * The variables that confine a Node plugin process started in `folder`: the two above and `NODE_OPTIONS` with the
 * confinement's `--require` first — before the manifest's own `NODE_OPTIONS` (`given`, kept) and its command line's
 * preloads, which Node runs after those of `NODE_OPTIONS`.
 * @param engine the engine's folder; its compiled `dist/src/plugins/import-confinement-start.cjs` is loaded
 */
export function importConfinementEnv(folder: string, refused: string, engine: string, given: string | undefined): Record<string, string> {
  const start = join(engine, "dist", "src", "plugins", "import-confinement-start.cjs");
  // NODE_OPTIONS splits on spaces outside double quotes, in which \" and \\ are escapes.
  const options = `--require="${start.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"${given ? ` ${given}` : ""}`;
  return { [importFolderVariable]: folder, [importRefusedVariable]: refused, NODE_OPTIONS: options };
}
