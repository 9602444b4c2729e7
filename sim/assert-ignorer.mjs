/**
 * A StrykerJS ignorer plugin, "assert" (stryker.config.mjs `ignorers`): leaves every `assert(…);` statement of the
 * kernel (src/kernel/assert.ts) out of mutation. An assert that never fires leaves its mutants alive whatever the
 * tests do; the guard stays and the simulation (sim/simulation.ts) is what shows it holds (STYLE.md: never delete a
 * guard to raise the score). The statements around it, and `assert` itself, are mutated as usual.
 * Plain JavaScript: Stryker imports its plugins without a TypeScript loader.
 */
import { PluginKind, declareClassPlugin } from "@stryker-mutator/api/plugin";

/** Why Stryker shows these mutants as ignored. */
export const assertIgnoredReason = "an invariant check (assert): kept, not mutated; the simulation shows it holds";

export class AssertIgnorer {
  /**
   * @param {import("@babel/core").NodePath} path a node of the file being instrumented (Babel).
   * @returns {string | undefined} the reason when the node is a statement calling `assert(…)`, else undefined.
   */
  shouldIgnore(path) {
    const node = path.node;
    if (node.type !== "ExpressionStatement") return undefined;
    const call = node.expression;
    return call.type === "CallExpression" && call.callee.type === "Identifier" && call.callee.name === "assert" ? assertIgnoredReason : undefined;
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Ignore, "assert", AssertIgnorer)];
