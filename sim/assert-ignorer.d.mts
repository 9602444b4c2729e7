/** Types of sim/assert-ignorer.mjs (a StrykerJS ignorer plugin). */
export declare const assertIgnoredReason: string;
export declare class AssertIgnorer {
  shouldIgnore(path: { node: { type: string } }): string | undefined;
}
export declare const strykerPlugins: unknown[];
