/**
 * Issue 26 rounds 49–51: dependencies a package manager hard-links from a store every project shares are kept
 * read-only where an agent or a sandboxed plugin writes (src/worker/shared-stores.ts). Real folders and hard links;
 * what the sandbox then does with the parts is tested end to end in agent-sandbox-writes and tools-binds-places.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { linkSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { sharedStoreParts } from "../src/worker/shared-stores.js";
import { bindGuards } from "../src/worker/steering.js";

/** Writes `files` under `root` (folders made), each a hard link of `store`'s file of the same name when `linked`. */
function lay(root: string, store: string, files: string[], linked: boolean): void {
  for (const f of files) {
    mkdirSync(join(root, f, ".."), { recursive: true });
    const name = f.replaceAll("/", "_");
    writeFileSync(join(store, name), "{}");
    if (linked) linkSync(join(store, name), join(root, f));
    else writeFileSync(join(root, f), "{}");
  }
}

test("round 51, F51a-4/5 and the layouts of rounds 49–50: found by each package's own file (no number of added files hides one), the folder itself or one above it too; copies are not", () => {
  const base = tempDir("aa-stores-");
  try {
    const store = join(base, "store");
    mkdirSync(store);
    const p = (name: string) => join(base, name);
    // F51a-5: 3,000 empty files an agent left in node_modules/.cache before the owner's install; then a package linked.
    for (let i = 0; i < 3000; i++) lay(p("padded"), store, [`node_modules/.cache/pad/f${i}`], false);
    lay(p("padded"), store, ["node_modules/zz-real/package.json"], true);
    lay(p("scoped"), store, ["node_modules/@scope/pkg/package.json"], true);
    lay(p("pnpm"), store, ["web/node_modules/.pnpm/is-number@7.0.0/node_modules/is-number/package.json"], true);
    lay(p("venv"), store, ["env/lib/python3.12/site-packages/requests-2.0.dist-info/METADATA"], true);
    writeFileSync(join(p("venv"), "env", "pyvenv.cfg"), "home = /usr/bin\n");
    lay(p("copies"), store, ["node_modules/a/package.json", "node_modules/.pnpm/a@1/node_modules/a/package.json"], false);
    assert.deepEqual(
      ["padded", "scoped", "pnpm", "venv", "copies"].map((n) => sharedStoreParts(p(n)).map((x) => x.slice(base.length + 1))),
      [["padded/node_modules"], ["scoped/node_modules"], ["pnpm/web/node_modules"], ["venv/env/lib"], []],
    );
    // F51a-4: the folder given is such a node_modules, or lies in one.
    assert.deepEqual(sharedStoreParts(join(p("scoped"), "node_modules")), [join(p("scoped"), "node_modules")]);
    assert.deepEqual(sharedStoreParts(join(p("padded"), "node_modules", ".cache")), [join(p("padded"), "node_modules")]);
    // A plugin's writable bind of one is refused, naming it; a bind holding one gets it read-only.
    const refused = bindGuards([{ source: join(p("scoped"), "node_modules"), container: "/m" }], "en");
    assert.deepEqual(refused, { ok: false, message: `the writable bind ${join(p("scoped"), "node_modules")} is, or lies in, ${join(p("scoped"), "node_modules")}, whose files are hard links into a package store every project shares (pnpm, bun, uv): what the plugin writes there would change them for every project and trusted plugin. Bind it read-only ("…:ro"), or install it with copies` });
    const held = bindGuards([{ source: p("scoped"), container: "/s" }], "en");
    assert.deepEqual(held.ok && held.guarded.filter((g) => g.path.includes("node_modules")), [{ path: join(p("scoped"), "node_modules"), at: "/s/node_modules", readOnly: true }]);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
