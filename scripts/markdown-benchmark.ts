/**
 * Part of `npm run benchmark` (alone: `npm run benchmark -- markdown`): reading a card template's Markdown, the
 * longest a plugin may write (`pluginMarkdownMaxChars`), as the link page renders it (tokens, then HTML) and as a text
 * channel shows it (`markdownLines`): a page of ordinary prose, and the hostile lines that made the patterns before
 * the SDK's tokenizer backtrack quadratically (runs of `[` or backticks, `[a](` again and again, a line of white
 * space ended by a line separator). Medians of 7 runs, in ms; nothing asserted.
 */
import { templateHtml } from "../src/host/template-html.js";
import { pluginMarkdownMaxChars } from "../src/protocol/plugin-limits.js";
import { markdownLines } from "../src/sdk/index.js";
import { median } from "./measure.js";

const runs = 7;

/** The texts measured, each `pluginMarkdownMaxChars` long (or about). */
function texts(): [string, string][] {
  const n = pluginMarkdownMaxChars;
  const prose = "Ship **v2** today: see [the plan](https://example.com/plan), run `npm test`, and *tell* the _team_.\n";
  return [
    ["prose", prose.repeat(Math.floor(n / prose.length))],
    ["[ × 65,536", "[".repeat(n)],
    ["` × 65,535 after a letter", `x${"`".repeat(n - 1)}`],
    ["[a]( × 16,384", "[a](".repeat(n / 4)],
    ["**a × 21,845", "**a".repeat(Math.floor(n / 3))],
    ["- then spaces, a, U+2028", `-${" ".repeat(n - 4)}a\u2028b`],
  ];
}

/** Measures and reports each figure through `say`. */
export async function measureMarkdown(say: (k: string, v: string) => void): Promise<void> {
  for (const [name, markdown] of texts()) {
    const ms = (f: () => unknown) => median(Array.from({ length: runs }, () => {
      const t = performance.now();
      f();
      return performance.now() - t;
    }));
    const html = ms(() => templateHtml({ title: null, data: [{ type: "markdown", markdown }] }, "en"));
    const lines = ms(() => markdownLines(markdown));
    say(`markdown ${name}: link page HTML / chat text`, `${html.toFixed(1)} / ${lines.toFixed(1)} ms`);
  }
}
