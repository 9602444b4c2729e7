/**
 * The documentation stays true to the code (issue 29): the generated reference pages (docs/reference/: HTTP API from
 * the endpoint table, CLI from --help, limits from kernel/limits.ts) equal what `npm run docs` makes now, and every
 * relative link of README.md and the Markdown files under docs/, examples/ and skills/ resolves to a file or folder
 * of the repository (and a `#fragment` into a Markdown file, to one of its headings).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { engine } from "./helpers.js";
import { pages } from "../scripts/docs.js";

test("docs/reference/*.md equal what npm run docs makes from the code", async () => {
  for (const [path, text] of Object.entries(await pages())) {
    const file = join(engine, path);
    assert.ok(existsSync(file), `${path} is missing: run npm run docs`);
    assert.equal(readFileSync(file, "utf8"), text, `${path} is out of date: run npm run docs`);
  }
});

/** The Markdown files whose links are checked. */
function markdownFiles(): string[] {
  const out = [join(engine, "README.md"), join(engine, "SECURITY.md")];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (name === "node_modules") continue;
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith(".md")) out.push(p);
    }
  };
  for (const d of ["docs", "examples", "skills"]) walk(join(engine, d));
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces as -. */
const anchor = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");

test("every relative link of README.md and the Markdown under docs/, examples/ and skills/ resolves", () => {
  const broken: string[] = [];
  let links = 0;
  for (const file of markdownFiles()) {
    // Links outside code: fenced blocks and inline code are not links.
    const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
      links++;
      const [path, fragment] = target.split("#") as [string, string | undefined];
      const resolved = path === "" ? file : join(dirname(file), decodeURIComponent(path));
      if (!existsSync(resolved)) {
        broken.push(`${relative(engine, file)}: ${target}`);
        continue;
      }
      if (fragment && resolved.endsWith(".md")) {
        const headings = [...readFileSync(resolved, "utf8").matchAll(/^#{1,6}\s+(.+)$/gm)].map((h) => anchor(h[1]!.replace(/`/g, "")));
        if (!headings.includes(decodeURIComponent(fragment))) broken.push(`${relative(engine, file)}: ${target} (no such heading)`);
      }
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(links >= 5, `${links} relative links checked`);
});

test("README.md is at most 300 lines (issue 29, pinned): the rest lives under docs/", () => {
  const lines = readFileSync(join(engine, "README.md"), "utf8").split("\n").length - 1;
  assert.ok(lines <= 300, `README.md has ${lines} lines`);
  // Every page of the guide has its Chinese page beside it in docs/guide/zh/.
  const guide = join(engine, "docs", "guide");
  const pages = readdirSync(guide).filter((f) => f.endsWith(".md"));
  assert.deepEqual(pages.filter((f) => !existsSync(join(guide, "zh", f))), [], "guide pages without a zh page");
});
