/**
 * Every shell line of the docs is run by a test (issue 29): each ```bash block of README.md and of the Markdown under
 * docs/, examples/ and skills/ is either run here, as written, by bash against a real `serve` on a fresh home — a
 * page's blocks in one shell with a HOME of its own, in the page's order, as a person types them into one terminal (a variable set in one
 * block is there in the next), from the checkout, with `agent-autoloop` on PATH as `install` puts it and the hub's
 * address in place of 127.0.0.1:8787 — or named below with the test that runs it (or, for an install step, why no
 * test can). A new block is run here unless
 * it is named, so no block goes unrun by accident. Where a person would wait — for the card before reading
 * cards.txt, for card N before answering it — the script waits the same way; nothing else is added to a block.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { engine, serveProcess, tempDir, until } from "./helpers.js";
import type { State } from "../src/protocol/responses.js";

/** Blocks not run here, by page and first line: the test that runs the same steps, or why none can. */
const elsewhere: Record<string, string> = {
  "README.md: npm ci && npm start": ".ci/run runs npm ci and npm test; every test starts serve as npm start does",
  "docs/guide/setup.md: npm ci && npm start": ".ci/run runs npm ci and npm test; every test starts serve as npm start does",
  "README.md: sudo apt-get install build-essential python3": "installs packages: run by hand, docs/measurements.md (first hour)",
  "docs/guide/setup.md: sudo apt-get install build-essential python3": "installs packages: run by hand, docs/measurements.md (first hour)",
  "docs/guide/service.md: ./install.sh --yes": "tests/service-systemd.test.ts",
  "docs/plugins/code-plugins.md: agent-autoloop add https://example.com/you/my-agent.git": "tests/example-plugins.test.ts",
  "docs/plugins/tool-plugins.md: KEY=$(agent-autoloop key new source lab)": "tests/call-tool-agent.test.ts",
  "docs/plugins/declarative-plugins.md: CHAT_KEY=$(agent-autoloop key new source chat)": "tests/workflows.test.ts",
  "docs/development.md: npm run build": ".ci/run",
  "docs/releases.md: npm run release -- --dry-run": "tests/release.test.ts",
};

/** Lines of a run block that are not run here, and why: the block's other lines are. */
const linesNotRun: [RegExp, string][] = [
  [/plugins invoke weather\.forecast/, "reaches api.open-meteo.com, which this machine cannot: tests/declarative-load.test.ts loads the plugin"],
];

/** The Markdown pages whose shell blocks count: README.md and everything under docs/, examples/ and skills/. */
function pages(): string[] {
  const out = [join(engine, "README.md")];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory()) { if (e.name !== "node_modules") walk(join(dir, e.name)); }
      else if (e.name.endsWith(".md")) out.push(join(dir, e.name));
    }
  };
  for (const d of ["docs", "examples", "skills"]) walk(join(engine, d));
  return out;
}

type Block = { page: string; first: string; text: string };
const blocks: Block[] = pages().flatMap((file) =>
  [...readFileSync(file, "utf8").matchAll(/^```(?:bash|sh|shell)\n([\s\S]*?)^```$/gm)].map((m) => {
    const text = m[1]!;
    const first = text.split("\n").find((l) => l.trim() !== "" && !l.startsWith("#"))!.replace(/\s+#.*$/, "").trim();
    return { page: relative(engine, file), first, text };
  }),
);
const keyOf = (b: Block) => `${b.page}: ${b.first}`;

const root = tempDir("aa-docs-shell-");
after(() => rmSync(root, { recursive: true, force: true }));

test("every named block exists, and names a test file that exists", () => {
  const keys = new Set(blocks.map(keyOf));
  for (const [key, by] of Object.entries(elsewhere)) {
    assert.ok(keys.has(key), `no block starts so any more: ${key}`);
    const file = /^(tests\/\S+\.ts|\.ci\/run)/.exec(by)?.[1];
    if (file) assert.ok(existsSync(join(engine, file)), `${key}: ${file} does not exist`);
  }
  assert.ok(blocks.length >= 20, `${blocks.length} blocks`);
});

test("every other shell block of the docs runs as written against a real hub on a fresh home", async () => {
  const home = join(root, "aa");
  const bin = join(root, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "agent-autoloop"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(engine, "bin", "agent-autoloop.js"))} "$@"\n`);
  chmodSync(join(bin, "agent-autoloop"), 0o755);
  const env = {
    ...process.env, HOME: root, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "",
    PATH: `${bin}:${process.env.PATH}`,
  };
  delete (env as Record<string, string | undefined>).AGENT_AUTOLOOP_URL;
  const hub = await serveProcess(home, undefined, env);
  const hostPort = hub.url.replace(/^http:\/\//, "");
  // The waits a person makes: the card before reading cards.txt, card N before answering it.
  const prelude = [
    "set -eo pipefail",
    // GET /v1/state's cards, as `status --json` prints them (a person reads `status`).
    `aa_has_card() { agent-autoloop status --json | ${JSON.stringify(process.execPath)} -e 'const s = JSON.parse(require("fs").readFileSync(0, "utf8")); process.exit(s.cards.some((c) => c.id === Number(process.argv[1])) ? 0 : 1)' "$1"; }`,
    `aa_wait_card() { for _ in $(seq 150); do aa_has_card "$1" && return 0; sleep 0.2; done; echo "card $1 never came" >&2; return 1; }`,
  ].join("\n");
  const ran: string[] = [];
  try {
    const byPage = new Map<string, Block[]>();
    for (const b of blocks.filter((x) => !(keyOf(x) in elsewhere))) byPage.set(b.page, [...(byPage.get(b.page) ?? []), b]);
    for (const [i, [page, own]] of [...byPage].entries()) {
      // Each page in a terminal of its own: its own HOME (its ~/.agent-autoloop-backups, its recipes' work folders), the same hub.
      const pageHome = join(root, `home-${i}`);
      mkdirSync(pageHome);
      const lines = own.map((b) => b.text).join("\n").split("\n").map((line) => {
        if (linesNotRun.some(([re]) => re.test(line))) return `: not run here: ${JSON.stringify(line)}`;
        const answer = /^\s*(?:agent-autoloop|node bin\/agent-autoloop\.js) answer (\d+)/.exec(line);
        if (answer) return `aa_wait_card ${answer[1]}\n${line}`;
        if (/^cat "\$\{AGENT_AUTOLOOP_HOME[^"]*\/cards\.txt"$/.test(line)) return `aa_wait_card 1\n${line}`;
        return line;
      });
      const script = `${prelude}\n${lines.join("\n")}`.replaceAll("127.0.0.1:8787", hostPort).replaceAll("localhost:8787", hostPort);
      const r = spawnSync("bash", ["-c", script], { cwd: engine, env: { ...env, HOME: pageHome }, encoding: "utf8", timeout: 240_000 });
      assert.equal(r.status, 0, `${page} failed (${r.status}):\n${r.stdout}\n${r.stderr}\nhub: ${hub.output()}`);
      ran.push(...own.map(keyOf));
    }
    // The README's walkthrough reached its end: card 1 answered, and the lane's next run done with the owner's choice.
    const owner = (JSON.parse(readFileSync(join(home, "config.json"), "utf8")) as { owner: string }).owner;
    const done = await until(async () => {
      const s = (await (await fetch(`${hub.url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as State;
      return s.runs.find((r) => r.rule === "demo" && r.state === "done" && r.summary === 'Done: the owner chose "Fix it now" for card 1.');
    }, 60_000, () => `the walkthrough's second run: ${hub.output()}`);
    assert.equal(done.rule, "demo");
  } finally {
    await hub.stop();
  }
  assert.ok(ran.length >= 20, ran.join("\n"));
});
