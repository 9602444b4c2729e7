/**
 * The three example plugins installed with `agent-autoloop add` from local git repositories and run through a real
 * hub: a signed order becomes an event (hello-source), hello-agent runs it, hello-channel receives the card. And a
 * plugin author's folder (not a git repository) installed with `add <folder>`, whose code imports `agent-autoloop/sdk`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, execFile } from "node:child_process";
import {
  cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync,
} from "node:fs";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { hubFixture, baseRules, engine, makeHome, serveProcess, tempDir, until, prose } from "./helpers.js";
import { newKey } from "../src/host/home.js";
import { addFolderBytesMax } from "../src/cli/add.js";
import { Worker } from "../src/worker/worker.js";
import { runChannel } from "../src/host/channels.js";
import { PluginLoader } from "../src/plugins/index.js";
import type { EventsAccepted } from "../src/protocol/responses.js";

function gitRepo(from: string, name: string): string {
  const dir = join(tempDir("aa-repo-"), name);
  cpSync(from, dir, { recursive: true });
  for (const args of [["init", "-q"], ["add", "."], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "plugin"]]) execFileSync("git", args, { cwd: dir });
  return dir;
}

function cli(home: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => execFile(process.execPath, [join(engine, "bin", "agent-autoloop.js"), ...args], { env: { ...process.env, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en" } },
    (e, out, err) => resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out: out.trim(), err: err.trim() })));
}

test("agent-autoloop add installs the example plugins by cloning; they run through a real hub", async () => {
  const rules = {
    ...baseRules,
    sources: { ...baseRules.sources, orders: { adapter: "hello-source" } },
    agents: { ...baseRules.agents, hello: { worker: "w1", use: "hello-agent", access: "read" } },
    channels: { ch1: { name: "Hello file" } },
    rules: [{ name: "orders", when: { source: "orders", types: ["order.*"] }, to: "hello", tell: "always", resume: true }],
  };
  const f = await hubFixture(rules, {}, "AGENT_AUTOLOOP_SECRET_ORDERS=shh\n");
  const ac = new AbortController();
  try {
    for (const name of ["hello-agent", "hello-channel", "hello-source"]) {
      const r = await cli(f.home.dir, "add", gitRepo(join(engine, "examples", "plugins", name), name));
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, `installed plugin ${name} in ${join(f.home.plugins, name)}; a running hub imports it within seconds (and at every start), whether or not a rule names it: its code runs in the hub's process, as you, with the keys; use it with "use": "${name}" or "adapter": "${name}" in rules.json`);
    }
    const again = await cli(f.home.dir, "add", gitRepo(join(engine, "examples", "plugins", "hello-agent"), "hello-agent"));
    assert.match(again.err, /plugin hello-agent is already installed/);
    const bad = await cli(f.home.dir, "add", gitRepo(join(engine, "examples", "plugins", "hello-agent"), "Hello_Agent"));
    assert.equal(bad.code, 1);
    assert.equal(bad.err, 'agent-autoloop: plugin names use lowercase letters, digits and -; the repository name gives "hello_agent"');
    assert.equal(existsSync(join(f.home.plugins, "hello_agent")), false);

    const cards = join(f.home.dir, "hello-cards.txt");
    void runChannel("ch1", { use: "hello-channel", key: f.keys.channel, file: cards }, f.url, new PluginLoader(f.home.plugins), ac.signal, () => {});
    const worker = new Worker({ url: f.url, key: f.keys.worker, name: "w1", capacity: 1, home: f.home, lang: "en" });
    void worker.run();
    const body = JSON.stringify({ id: 7, status: "paid" });
    const unsigned = await fetch(`${f.url}/v1/in/orders`, { method: "POST", body });
    assert.deepEqual([unsigned.status, prose(unsigned.status, await unsigned.json())], [401, { error: "not accepted: this address takes only webhooks signed with their source's secret" }], "refused before the body: the plugin declares its signatureHeader");
    const wrong = await fetch(`${f.url}/v1/in/orders`, { method: "POST", body, headers: { "x-shop-signature": "0".repeat(64) } });
    assert.deepEqual([wrong.status, prose(wrong.status, await wrong.json())], [401, { error: "bad x-shop-signature" }]);
    const signed = await fetch(`${f.url}/v1/in/orders`, { method: "POST", body, headers: { "x-shop-signature": createHmac("sha256", "shh").update(body).digest("hex") } });
    assert.deepEqual(((await signed.json()) as EventsAccepted).events.map((e) => e.routed), [["orders"]]);
    const st = await until(async () => {
      const s = (await f.call("GET", "/v1/state", f.keys.owner)).body;
      return s.runs[0]?.state === "done" && s;
    }, 15_000, "the hello run");
    assert.equal(st.runs[0].summary, "Done: said hello.");
    assert.match(st.runs[0].session, /^hello-\d+$/);
    const text = await until(() => (existsSync(cards) ? readFileSync(cards, "utf8") : ""), 10_000, "the card file");
    assert.equal(text, 'card 1 v1: "orders" is done \n');
    worker.stop();
  } finally {
    ac.abort();
    await f.close();
  }
});

/** A plugin author's folder, not a git repository: one plugin of each kind, all importing the SDK at run time. */
function authorFolder(name: string): string {
  const dir = join(tempDir("aa-author-"), name);
  mkdirSync(join(dir, "sub", ".git"), { recursive: true });
  mkdirSync(join(dir, "node_modules", "brought-along"), { recursive: true });
  writeFileSync(join(dir, "agent.ts"), `import { jsonLines, tail, type AgentPlugin } from "agent-autoloop/sdk";
const say = (o: unknown) => "console.log(" + JSON.stringify(JSON.stringify(o)) + ");";
const plugin: AgentPlugin = {
  command: () => [process.execPath, "-e", say({ session: "echo-1" }) + say({ text: "Done: echoed the order." })],
  read(stdout, code, stderr) {
    const lines = jsonLines(stdout);
    const session = lines.find((l) => l.session)?.session;
    if (code === null) return { started: session !== undefined, session };
    if (code !== 0) return { started: true, error: tail(stderr, 200) };
    return { started: true, finished: true, session, text: lines.find((l) => l.text)?.text };
  },
};
export default plugin;
`);
  writeFileSync(join(dir, "source.ts"), `import { neutralise, Refusal, type SourceArgs, type SourceEvent } from "agent-autoloop/sdk";
export default function echo({ headers, body, secret }: SourceArgs): SourceEvent[] {
  if (!secret || headers["x-token"] !== secret) throw new Refusal(403, "wrong x-token");
  const order = JSON.parse(body) as { id: number; note: string };
  return [{ id: "order:" + order.id, type: "order.paid", summary: neutralise(order.note, true) }];
}
`);
  writeFileSync(join(dir, "channel.mjs"), `import { appendFileSync } from "node:fs";
import { cardText, eachCard } from "agent-autoloop/sdk";
export default async function echo({ hub, options, log, signal }) {
  await eachCard(hub, log, signal, async (card) => {
    appendFileSync(options.file, cardText(card, "en") + "\\n--\\n");
    await hub.delivered(card.id, card.version, "echo-" + card.id);
  });
}
`);
  writeFileSync(join(dir, "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
  writeFileSync(join(dir, "sub", "keep.txt"), "kept\n");
  writeFileSync(join(dir, "sub", ".git", "config"), "[core]\n");
  writeFileSync(join(dir, "node_modules", "brought-along", "index.js"), "export default 1;\n");
  symlinkSync("agent.ts", join(dir, "link.ts"));
  return dir;
}

/** The folder's entries (relative, sorted), links marked with their target. */
function tree(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix)).sort().flatMap((n) => {
    const p = prefix ? `${prefix}/${n}` : n;
    const st = lstatSync(join(dir, p));
    if (st.isSymbolicLink()) return [`${p} -> ${readlinkSync(join(dir, p))}`];
    return st.isDirectory() ? [`${p}/`, ...tree(dir, p)] : [p];
  });
}

test("add <folder> copies a plugin folder that is not a git repository; its agent, source and channel import agent-autoloop/sdk and run in serve", async () => {
  const cards = join(tempDir("aa-cards-"), "cards.txt");
  const rules = {
    timezone: "UTC",
    sources: { orders: { adapter: "sdk-echo" } },
    agents: { echo: { worker: "local", use: "sdk-echo" } },
    channels: { echo: { name: "Echo" } },
    rules: [{ name: "orders", when: { source: "orders", types: ["order.*"] }, to: "echo", tell: "always" }],
  };
  const { dir, home, keys } = makeHome(rules, {
    worker: { name: "local", key: newKey(), capacity: 1 },
    channels: { echo: { use: "sdk-echo", key: newKey(), file: cards } },
  }, "AGENT_AUTOLOOP_SECRET_ORDERS=shh\n");
  const folder = authorFolder("sdk-echo");
  const r = await cli(dir, "add", folder);
  assert.deepEqual([r.code, r.err, r.out], [0, "", `installed plugin sdk-echo in ${join(home.plugins, "sdk-echo")}; a running hub imports it within seconds (and at every start), whether or not a rule names it: its code runs in the hub's process, as you, with the keys; use it with "use": "sdk-echo" or "adapter": "sdk-echo" in rules.json`]);
  const installed = join(home.plugins, "sdk-echo");
  // Its node_modules is what it brings along (hostile round 43, F43b-2: left out, its packages were looked for above the home).
  assert.deepEqual(tree(installed), ["agent.ts", "channel.mjs", "link.ts -> agent.ts", "node_modules/", "node_modules/brought-along/", "node_modules/brought-along/index.js", "run.sh", "source.ts", "sub/", "sub/keep.txt"], "no .git; node_modules kept");
  assert.equal(statSync(join(installed, "run.sh")).mode & 0o777, 0o755);
  assert.deepEqual(readdirSync(home.plugins), ["sdk-echo"], "no temporary folder left");
  const link = join(home.dir, "node_modules", "agent-autoloop");
  assert.equal(readlinkSync(link), engine);
  // A home whose link went missing (made before the SDK, or cleaned up): the hub makes it again when it loads the plugin.
  rmSync(join(home.dir, "node_modules"), { recursive: true });

  const hub = await serveProcess(dir);
  try {
    const body = JSON.stringify({ id: 7, note: "paid\u202E in full" });
    const wrong = await fetch(`${hub.url}/v1/in/orders`, { method: "POST", body, headers: { "x-token": "nope" } });
    assert.deepEqual([wrong.status, await wrong.json()], [403, { error: "wrong x-token", code: "foreign.text", params: { text: "wrong x-token" } }], "the SDK's Refusal carries the status");
    const right = await fetch(`${hub.url}/v1/in/orders`, { method: "POST", body, headers: { "x-token": "shh" } });
    assert.deepEqual((await right.json()).events.map((e: { routed: string[] }) => e.routed), [["orders"]]);
    const owner = { authorization: `Bearer ${keys.owner}` };
    const st = await until(async () => {
      const s = await (await fetch(`${hub.url}/v1/state`, { headers: owner })).json();
      return s.runs[0]?.state === "done" && s;
    }, 20_000, "the echo run");
    assert.deepEqual([st.runs[0].summary, st.runs[0].session], ["Done: echoed the order.", "echo-1"], "command and read (in the output thread) ran");
    const text = await until(() => (existsSync(cards) ? readFileSync(cards, "utf8") : ""), 10_000, "the card file");
    assert.equal(text, '[FYI] "orders" is done · orders\nDone: echoed the order.\n--\n', "the card's text projection (SDK cardText)");
    assert.equal(readlinkSync(link), engine);
  } finally {
    await hub.stop();
  }
  assert.doesNotMatch(hub.output(), /error|cannot find/i, hub.output());
});

test("add <folder> refuses a bad name, a built-in name, a second install, something other than files, folders and links, and a folder over its limits, leaving nothing", async () => {
  const home = tempDir("aa-add-home-");
  assert.equal((await cli(home, "init")).code, 0);
  const plugins = join(home, "plugins");
  const add = (folder: string) => cli(home, "add", folder);
  const named = (name: string) => {
    const dir = join(tempDir("aa-author-"), name);
    mkdirSync(dir);
    writeFileSync(join(dir, "agent.ts"), "export default {};\n");
    return dir;
  };
  assert.deepEqual(await add(named("My_Plugin")), { code: 1, out: "", err: 'agent-autoloop: plugin names use lowercase letters, digits and -; the folder name gives "my_plugin"' });
  const file = named("file");
  assert.deepEqual(await add(file), { code: 1, out: "", err: `agent-autoloop: file is a built-in plugin: installing ${file} would replace it wherever "file" is used; add --replace to do that` });

  const fifo = named("with-fifo");
  execFileSync("mkfifo", [join(fifo, "pipe")]);
  assert.deepEqual(await add(fifo), { code: 1, out: "", err: `agent-autoloop: ${join(fifo, "pipe")} is not a file, folder or link, which is all a plugin folder may hold; nothing was installed` });

  const large = named("too-large");
  truncateSync(join(large, "agent.ts"), addFolderBytesMax + 1); // sparse: nothing is written
  assert.deepEqual(await add(large), { code: 1, out: "", err: `agent-autoloop: ${large} holds more than 10000 entries or 100 MiB (without .git and node_modules): not a plugin folder? Nothing was installed` });
  assert.equal(existsSync(plugins) ? readdirSync(plugins).length : 0, 0, "nothing installed, no temporary folder left");

  const ok = named("twice");
  assert.equal((await add(ok)).code, 0);
  assert.deepEqual(await add(ok), { code: 1, out: "", err: `agent-autoloop: plugin twice is already installed: ${join(plugins, "twice")}` });
  assert.deepEqual(readdirSync(plugins), ["twice"]);
});
