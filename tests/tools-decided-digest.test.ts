/**
 * Issue 26 hostile round 24, F24-2: an approval answers one digest and the held call ran another — a `[sandbox]`
 * removed from a tool plugin's manifest while the card waited ran the allowed call unsandboxed; a declarative tool's
 * URL and `requires.network` changed meanwhile sent the credential to a host the card never named. The kind: what
 * runs after a decision must be what was decided. A call carries the digest it was decided at (`decidedDigest`); a
 * plugin whose files or definition have another one by then is refused and nothing of it starts. Real tool host,
 * real plugin folders and declarative catalog, a local server on 127.0.0.1 counting requests.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ToolHost, ToolRegistry } from "../src/tools/index.js";
import { DeclarativeCatalog } from "../src/declarative/index.js";
import { localServer, minimalManifest, writeFiles } from "./declarative-helpers.js";
import { tempDir } from "./helpers.js";
import { hostFixture, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";

const cleanup: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

test("issue 26 r24 F24-2 (reported case: [sandbox] removed, the entry point changed while the call waited): the call decided at the old digest is refused and nothing starts; decided at the new one it runs", async () => {
  const f = hostFixture();
  cleanup.push(() => f.close());
  const marker = join(f.root, "ran");
  const main = `const fs = require("fs");
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const req = JSON.parse(line);
  fs.appendFileSync(${JSON.stringify(marker)}, "ran\\n");
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result: "ok" }) + "\\n");
});`;
  const dir = writePlugin(f.root, "spy", syncManifest("spy", process.execPath, ["main.js"], toolToml("sh")), { "main.js": main });
  for (const change of [
    () => writeFileSync(join(dir, "manifest.toml"), syncManifest("spy", process.execPath, ["main.js"], toolToml("sh") + "\n# no [sandbox] any more\n")),
    () => writeFileSync(join(dir, "main.js"), main + "\n// changed after the card was shown\n"),
  ]) {
    f.registry.rescan();
    const decided = await f.host.check("spy.sh", {});
    assert.ok(decided.ok, JSON.stringify(decided));
    change();
    const out = await f.host.call("spy.sh", {}, { sessionKey: "s", decidedDigest: decided.digest });
    assert.equal(out.status, "refused");
    assert.equal((out as { code: string }).code, "tools.changed");
    assert.match((out as { message: string }).message, new RegExp(`^spy\\.sh did not run: the plugin changed while the call waited for your answer \\(approved at sha256 ${decided.digest.slice(0, 12)}…, now [0-9a-f]{12}…\\); call it again to be asked about the new version$`));
    assert.equal(existsSync(marker), false, "nothing of the plugin ran");
  }
  f.registry.rescan();
  const now = await f.host.check("spy.sh", {});
  assert.ok(now.ok);
  assert.equal((await f.host.call("spy.sh", {}, { sessionKey: "s", decidedDigest: now.digest })).status, "ok");
  assert.equal(existsSync(marker), true);
});

test("issue 26 r24 F24-2 (reported case: a declarative tool's url and requires.network changed while the call waited): the call is refused and no request leaves, the credential reaches no host", async () => {
  const hits: string[] = [];
  const server = await localServer((req, res) => {
    hits.push(`${req.url} ${String(req.headers["x-key"] ?? "")}`);
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
  });
  cleanup.push(() => server.close());
  const root = tempDir("aa-decided-");
  cleanup.push(() => rmSync(root, { recursive: true, force: true }));
  const tool = (path: string) => ({ name: "get", parameters: { type: "object" }, http: { url: `${server.url}${path}`, headers: { "X-Key": "{{auth}}" }, authRef: "env:DX_TOKEN" } });
  const write = (path: string) => writeFiles(join(root, "dx"), {
    "plugin.json": minimalManifest("dx", { requires: { network: [`127.0.0.1:${server.port}`] }, provides: { tools: ["get"] } }),
    "tools/get.json": tool(path),
  });
  write("/approved");
  const catalog = new DeclarativeCatalog({ roots: [{ dir: root, origin: "home" }], lang: "en", env: { DX_TOKEN: "SECRET-dx" } });
  assert.deepEqual((await catalog.reload()).loaded, ["dx"]);
  const host = new ToolHost(new ToolRegistry([], "en"), { lang: "en", data: catalog });
  cleanup.push(() => host.close());
  const decided = await host.check("dx.get", {});
  assert.ok(decided.ok, JSON.stringify(decided));
  write("/NOT-ON-THE-CARD");
  await catalog.reload();
  const out = await host.call("dx.get", {}, { sessionKey: "s", decidedDigest: decided.digest });
  assert.equal(out.status, "refused");
  assert.equal((out as { code: string }).code, "tools.changed");
  assert.deepEqual(hits, []);
  const now = await host.check("dx.get", {});
  assert.ok(now.ok);
  assert.equal((await host.call("dx.get", {}, { sessionKey: "s", decidedDigest: now.digest })).status, "ok");
  assert.deepEqual(hits, ["/NOT-ON-THE-CARD SECRET-dx"]);
});
