/**
 * Issue 26 #5: an approval is bound to what the owner saw. "Allow once" answered after the hold lets through only a
 * later call with the same arguments (their digest); the card shows the arguments in canonical form (sorted keys),
 * says how many characters it left out, and the whole arguments are on the console (the owner's card) and the card's
 * link page. A real hub over HTTP on 127.0.0.1 with a real SQLite file.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { engine, hubFixture, type Fixture } from "./helpers.js";
import { callBody, toolRules } from "./tool-calls-helpers.js";
import { canonicalJson, toolArgsDigest, toolArgsPreview } from "../src/protocol/tool-calls.js";
import { HubClient } from "../src/protocol/client.js";
import { cardLinkToken } from "../src/kernel/credentials.js";
import { readMasterKey } from "../src/host/home.js";
import type { Job, OwnerCard } from "../src/protocol/responses.js";
import type { ToolCallBody } from "../src/protocol/schema.js";

let claims = 0;
/** Posts an `alert.x` event with `subject` and claims its run as worker w1. */
async function runOf(f: Fixture, subject: string): Promise<Job> {
  claims += 1;
  const posted = await f.call("POST", "/v1/events", f.keys.source, { id: `b${claims}-${subject}`, type: "alert.x", subject });
  assert.equal(posted.status, 200, JSON.stringify(posted.body));
  const job = (await f.call("GET", `/v1/work?claim=b${claims}`, f.keys.worker)).body.job as Job | null;
  assert.ok(job, "a job to claim");
  return job;
}

/** A call of `shell.run` (built in, asked by an approvals entry) as a bridge from before issue 26 sent it. */
function oldBody(a: Record<string, unknown>): ToolCallBody {
  return callBody("shell.run", { builtIn: true, argsDigest: toolArgsDigest(a), preview: toolArgsPreview(a) });
}

/** The same call as the bridge sends it now: the whole canonical arguments and their length come along. */
function body(a: Record<string, unknown>): ToolCallBody {
  const text = canonicalJson(a);
  return { ...oldBody(a), arguments: text, argsLength: [...text].length } as ToolCallBody;
}

async function withHub(fn: (f: Fixture, client: HubClient, owner: HubClient, job: Job) => Promise<void>): Promise<void> {
  const f = await hubFixture(toolRules([{ plugin: "shell", mode: "prompt" }], ["shell.*"], 0));
  try {
    await fn(f, new HubClient(f.url, null), new HubClient(f.url, f.keys.owner), await runOf(f, "s1"));
  } finally {
    await f.close();
  }
}

/** The owner's card `id` as GET /v1/state shows it. */
async function ownerCardOf(f: Fixture, id: number): Promise<OwnerCard & { toolArguments?: string }> {
  const s = await f.state();
  const card = [...s.cards, ...s.recentCards].find((c) => c.id === id);
  assert.ok(card, `card ${id} in the state`);
  return card as OwnerCard & { toolArguments?: string };
}

test("issue 26 #5 (reported case): allow once answered after the hold lets through only the same arguments; `rm -rf ~` asks again", async () => {
  await withHub(async (_f, client, owner, job) => {
    const ls = { cmd: "ls" };
    const first = await client.toolCall(job.run, job.token, oldBody(ls));
    assert.equal(first.decision, "prompt");
    await owner.answer(first.card!, { choice: 0 });
    // Other arguments after the answer: a new card, not the grant of the first.
    const rm = await client.toolCall(job.run, job.token, oldBody({ cmd: "rm -rf ~" }));
    assert.deepEqual([rm.decision, rm.card === first.card], ["prompt", false]);
    // Same values in another key order are the same arguments (canonical JSON): the grant is used once.
    const again = await client.toolCall(job.run, job.token, oldBody({ cmd: "ls" }));
    assert.deepEqual([again.decision, again.card], ["allow", first.card]);
    assert.equal((await client.toolCall(job.run, job.token, oldBody(ls))).decision, "prompt", "allow once is spent by one call");
    // A deny answered after the hold is bound alike: it denies the same arguments only.
    const denied = await client.toolCall(job.run, job.token, oldBody({ cmd: "cat notes", n: 1 }));
    await owner.answer(denied.card!, { choice: 2 });
    assert.equal((await client.toolCall(job.run, job.token, oldBody({ n: 1, cmd: "cat notes" }))).decision, "deny");
    assert.equal((await client.toolCall(job.run, job.token, oldBody({ cmd: "cat notes", n: 2 }))).decision, "prompt");
  });
});

test("issue 26 round 57, F57a-2 (reported case: \"deny\" answered after the hold, the plugin trusted with \"always allow\" on another card meanwhile, and the call that came again ran): the owner's deny of that very call stands, once", async () => {
  const f = await hubFixture(toolRules([], ["echo.*"], 0));
  try {
    const [client, owner, job] = [new HubClient(f.url, null), new HubClient(f.url, f.keys.owner), await runOf(f, "s57")];
    const echo = (a: Record<string, unknown>) => callBody("echo.say", { argsDigest: toolArgsDigest(a), preview: toolArgsPreview(a) });
    const held = await client.toolCall(job.run, job.token, echo({ text: "wire money" }));
    const other = await client.toolCall(job.run, job.token, echo({ text: "date" }));
    assert.deepEqual([held.decision, other.decision], ["prompt", "prompt"]);
    await owner.answer(other.card!, { choice: 1 }); // always allow: the plugin is trusted
    await owner.answer(held.card!, { choice: 2 }); // deny
    assert.equal((await client.toolCall(job.run, job.token, echo({ text: "ls" }))).decision, "allow", "trusted");
    const retried = await client.toolCall(job.run, job.token, echo({ text: "wire money" }));
    assert.deepEqual([retried.decision, retried.card], ["deny", held.card]);
    assert.equal((await client.toolCall(job.run, job.token, echo({ text: "wire money" }))).decision, "allow", "the deny was of that call, once");
  } finally {
    await f.close();
  }
});

test("issue 26 #5: the card shows sorted keys and how much it left out; the whole arguments are on the owner's card and the link page; paddings of every kind", async () => {
  await withHub(async (f, client, _owner, job) => {
    const cases: { name: string; args: Record<string, unknown> }[] = [
      // The agent's order put the padding first; sorted, `cmd` comes first and is seen.
      { name: "padding before, sorted after", args: { pad: "x".repeat(600), cmd: "rm -rf ~" } },
      // Padding that sorts first still hides the rest: the card says how much is not shown.
      { name: "padding that sorts first", args: { aaa: "x".repeat(600), cmd: "rm -rf ~" } },
      { name: "nested padding", args: { a: { b: ["y".repeat(700)] }, z: "rm -rf ~" } },
      { name: "wide characters", args: { a: "é".repeat(520), z: "rm -rf ~" } },
      { name: "astral characters", args: { a: "😀".repeat(530), z: "rm -rf ~" } },
    ];
    for (const { name, args } of cases) {
      const text = canonicalJson(args);
      const total = [...text].length;
      const d = await client.toolCall(job.run, job.token, body(args));
      assert.equal(d.decision, "prompt", name);
      const card = await ownerCardOf(f, d.card!);
      const shown = [...text].slice(0, 511).join("");
      assert.ok(card.text.includes(`Arguments (sorted keys): ${shown}…\n`), `${name}: ${card.text}`);
      assert.ok(card.text.includes(`${total - 511} more characters not shown: the whole arguments are on this card's page and in the console.`), `${name}: ${card.text}`);
      assert.equal(card.toolArguments, text, name);
      const token = cardLinkToken(readMasterKey(f.home), card.id, Date.parse(card.at));
      const page = await (await fetch(`${f.url}/c/${card.id}/${token}`)).text();
      const escaped = text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
      assert.ok(page.includes(escaped), `${name}: the link page shows the whole arguments`);
      // Answered (deny), so the run's open approval cards stay under toolApprovalsOpenPerRunMax (issue 26 round 6).
      assert.equal((await f.call("POST", `/v1/cards/${card.id}/answer`, f.keys.owner, { choice: 2 })).status, 200);
    }
    // Short arguments are shown whole, sorted, with nothing said left out.
    const short = await client.toolCall(job.run, job.token, body({ z: 1, a: "b" }));
    const card = await ownerCardOf(f, short.card!);
    assert.ok(card.text.includes(`Arguments (sorted keys): {"a":"b","z":1}\n`), card.text);
    assert.ok(!card.text.includes("not shown"), card.text);
  });
});

test("issue 26 #5: arguments holding bidi controls, C1 and line separators travel whole as escaped canonical JSON, one clean line", async () => {
  await withHub(async (f, client, _owner, job) => {
    const args = { cmd: "ls \u202e~ fr- mr", note: "a\u0085b\u2028c\u2066" };
    const text = canonicalJson(args);
    assert.equal(text, '{"cmd":"ls \\u202e~ fr- mr","note":"a\\u0085b\\u2028c\\u2066"}');
    assert.deepEqual(JSON.parse(text), args, "the escaped text parses to the same arguments");
    const d = await client.toolCall(job.run, job.token, body(args));
    assert.equal(d.decision, "prompt");
    assert.equal((await ownerCardOf(f, d.card!)).toolArguments, text);
  });
});

test("issue 26 #5: whole arguments that are not the digested ones, or not canonical, are refused naming the field and record nothing", async () => {
  await withHub(async (f, client, _owner, job) => {
    const a = { cmd: "ls" };
    const wrong = [
      { ...body(a), arguments: canonicalJson({ cmd: "rm -rf ~" }) },
      { ...body(a), arguments: JSON.stringify({ cmd: "ls" }, null, 1) },
      { ...body(a), arguments: "{not json" },
      { ...body(a), argsLength: 3 },
    ];
    for (const b of wrong) {
      const r = await f.call("POST", `/v1/runs/${job.run}/tools/calls`, job.token, b);
      assert.equal(r.status, 400, JSON.stringify(b));
      assert.match(r.body.error, /^(arguments|argsLength): /, r.body.error);
    }
    const ok = await client.toolCall(job.run, job.token, body(a));
    assert.equal(ok.call, 1, "nothing was recorded before");
    // Arguments too long to keep whole: the card says so and how long they are.
    const long = { pad: "q".repeat(40_000) };
    const text = canonicalJson(long);
    const b = { ...oldBody(long), argsLength: [...text].length } as ToolCallBody;
    const d = await client.toolCall(job.run, job.token, b);
    const card = await ownerCardOf(f, d.card!);
    assert.ok(card.text.includes(`${[...text].length - 511} more characters not shown: the arguments are too long to keep whole (over 32768 characters); deny unless you can check them another way.`), card.text);
    assert.equal(card.toolArguments, undefined);
  });
});

test("issue 26 #3: the approval card lists the sandbox's binds as they really are, broad ones with a warning, at most 8", async () => {
  await withHub(async (f, client, _owner, job) => {
    const binds: NonNullable<ToolCallBody["binds"]> = [
      { source: "/etc", container: "/etc2", readOnly: true, broad: "topLevel" },
      { source: "/srv/out", container: "/out", readOnly: false, broad: "writable" },
      { source: "/root/.npmrc", container: "/npmrc", readOnly: true, broad: "inHome" },
      { source: "/opt/plugins/p/data", container: "/data", readOnly: false },
    ];
    const d = await client.toolCall(job.run, job.token, { ...body({ cmd: "ls" }), binds });
    const card = await ownerCardOf(f, d.card!);
    assert.ok(card.text.includes("\nSandbox binds: /etc → /etc2 (read-only) ⚠ broad: a whole top-level folder; /srv/out → /out (writable) ⚠ broad: writable outside the plugin's folder; "
      + "/root/.npmrc → /npmrc (read-only) ⚠ broad: right in the user's home (like ~/.ssh, ~/.npmrc); /opt/plugins/p/data → /data (writable)\n"), card.text);
    const many = Array.from({ length: 11 }, (_, i) => ({ source: `/srv/d${i}`, container: `/d${i}`, readOnly: true }));
    const card2 = await ownerCardOf(f, (await client.toolCall(job.run, job.token, { ...body({ cmd: "pwd" }), binds: many })).card!);
    assert.ok(card2.text.includes("/srv/d7 → /d7 (read-only); 3 more (see plugins inspect)\n"), card2.text);
    assert.ok(!card2.text.includes("/srv/d8"), card2.text);
  });
});

test("issue 26 round 2: a card with binds always says why it asks — long binds, long arguments and an HTTP tool's reach never push the why line out of the card", async () => {
  await withHub(async (f, client, _owner, job) => {
    const why = "approvals[0] of rules.json asks you before each call.";
    // The reported shape: eight binds with long real paths, all broad, and arguments longer than the preview.
    const long = (i: number, side: string) => `/srv/${side}${i}/${"p".repeat(200)}`;
    const binds: NonNullable<ToolCallBody["binds"]> = Array.from({ length: 9 }, (_, i) => ({ source: long(i, "s"), container: long(i, "c"), readOnly: false, broad: "writable" as const }));
    const cases: [string, ToolCallBody][] = [
      ["binds alone", { ...body({ cmd: "ls" }), binds: binds.slice(0, 2) }],
      ["eight long binds and more", { ...body({ cmd: "ls -la" }), binds }],
      ["long binds and long arguments", { ...body({ cmd: "x".repeat(3000) }), binds }],
      ["long binds, long arguments and an HTTP tool's reach", { ...body({ cmd: "y".repeat(3000) }), binds, http: { network: Array.from({ length: 9 }, (_, i) => `h${i}-${"n".repeat(150)}.example`), authRef: "a".repeat(200), anyUrl: false } } as ToolCallBody],
    ];
    for (const [what, b] of cases) {
      const d = await client.toolCall(job.run, job.token, b);
      assert.equal(d.decision, "prompt", what);
      const card = await ownerCardOf(f, d.card!);
      assert.ok(card.text.endsWith(`\n${why}`), `${what}: ${card.text.slice(-300)}`);
      assert.ok(card.text.includes("\nSandbox binds: /srv/s0/"), what);
      assert.ok([...card.text].length <= 4000, what);
    }
  });
});

test("issue 26 round 2: `status` shows an open approval card whole — the binds, the cut note and the line that says why it asks, not only its first lines", async () => {
  await withHub(async (f, client, _owner, job) => {
    const binds: NonNullable<ToolCallBody["binds"]> = [{ source: "/srv/out", container: "/out", readOnly: false, broad: "writable" }];
    const cases: [string, ToolCallBody][] = [
      ["binds", { ...body({ cmd: "ls" }), binds }],
      ["binds and arguments cut", { ...body({ cmd: "z".repeat(700) }), binds }],
    ];
    for (const [what, b] of cases) {
      const d = await client.toolCall(job.run, job.token, b);
      const card = await ownerCardOf(f, d.card!);
      const out = await new Promise<string>((resolve) => {
        execFile(process.execPath, [join(engine, "bin", "agent-autoloop.js"), "status"], {
          env: { ...process.env, AGENT_AUTOLOOP_HOME: f.home.dir, AGENT_AUTOLOOP_LANG: "en", AGENT_AUTOLOOP_URL: f.url, TZ: "UTC" }, encoding: "utf8",
        }, (_e, stdout) => resolve(stdout));
      });
      const lines = out.split("\n");
      const at = lines.indexOf(`  #${card.id} ask [alerts s1] Allow shell.run?`);
      assert.ok(at >= 0, out);
      assert.deepEqual(lines.slice(at + 1, at + 1 + card.text.split("\n").length + 1), [...card.text.split("\n").map((l) => `      ${l}`), "      0) allow once"], what);
      assert.equal(lines[at + card.text.split("\n").length], "      approvals[0] of rules.json asks you before each call.", what);
    }
  });
});

test("issue 26 round 18 (reported by reading): a card link cannot give a tool call's \"always allow\" — the page does not offer it, a post of it is refused with why and trusts nothing; once and deny still work from the link", async () => {
  await withHub(async (f, client, _owner, job) => {
    const d = await client.toolCall(job.run, job.token, body({ cmd: "ls" }));
    assert.equal(d.decision, "prompt");
    const card = await ownerCardOf(f, d.card!);
    const token = cardLinkToken(readMasterKey(f.home), card.id, Date.parse(card.at));
    const url = `${f.url}/c/${card.id}/${token}`;
    const page = await (await fetch(url)).text();
    assert.deepEqual([...page.matchAll(/<button name="choice" value="(\d+)">/g)].map((m) => m[1]), ["0", "2"]);
    const always = await fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "choice=1", redirect: "manual" });
    assert.equal(always.status, 403);
    assert.ok((await always.text()).includes("a card link can allow this tool call once or deny it; to always allow the plugin, answer in the console or with the CLI"));
    assert.equal((await ownerCardOf(f, card.id)).state, "open");
    const once = await fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "choice=0", redirect: "manual" });
    assert.equal(once.status, 303);
    assert.equal((await client.toolCall(job.run, job.token, body({ cmd: "ls" }))).decision, "allow");
    assert.equal((await client.toolCall(job.run, job.token, body({ cmd: "ls" }))).decision, "prompt", "no trust was given");
  });
});

test("issue 26 r25 F25b-4 (reported case: the card asking again after [sandbox] was removed said only which file changed): the approval card says whether the plugin runs in its sandbox; the tool host says it in the call's body", async () => {
  await withHub(async (f, client, _owner, job) => {
    const without = await ownerCardOf(f, (await client.toolCall(job.run, job.token, { ...body({ cmd: "id" }), sandboxed: false })).card!);
    assert.ok(without.text.includes("\nRuns WITHOUT a sandbox, with your user's rights: it can read and write all you can (no [sandbox] in its manifest)\n"), without.text);
    const within = await ownerCardOf(f, (await client.toolCall(job.run, job.token, { ...body({ cmd: "pwd" }), sandboxed: true, binds: [{ source: "/srv/d", container: "/d", readOnly: true }] })).card!);
    assert.ok(within.text.includes("\nRuns in the plugin sandbox ([sandbox] in its manifest)\nSandbox binds: /srv/d → /d (read-only)\n"), within.text);
  });
  const { hostFixture, syncManifest, toolToml, writePlugin } = await import("./tools-helpers.js");
  const h = hostFixture();
  try {
    writePlugin(h.root, "open", syncManifest("open", "true", [], toolToml("t")));
    writePlugin(h.root, "boxed", syncManifest("boxed", "true", [], toolToml("t") + "\n[sandbox]\nnetwork = \"none\"\n"));
    h.registry.rescan();
    const open = await h.host.check("open.t", {});
    const boxed = await h.host.check("boxed.t", {});
    assert.deepEqual([open.ok && open.sandboxed, boxed.ok && boxed.sandboxed], [false, true]);
  } finally {
    await h.close();
  }
});

test("issue 26 r28 F28b-2 (reported case: zero-width spaces and tag characters hid `and rm -rf ~` in arguments the card showed as {\"name\":\"Ada\"}): every character no reader sees is written as an escape, and the text parses to the same value", () => {
  const tags = [..."and rm -rf ~"].map((c) => String.fromCodePoint(0xe0000 + c.codePointAt(0)!)).join("");
  const args = { name: `Ada\u200b${tags}\u2060\ufeff\u00ad\u180e\u3164` };
  const text = canonicalJson(args);
  assert.equal(/[^\x20-\x7e]/u.test(text), false, text);
  assert.equal(text.startsWith('{"name":"Ada\\u200b\\udb40\\udc61\\udb40\\udc6e\\udb40\\udc64'), true, text);
  assert.deepEqual(JSON.parse(text), args);
  assert.equal(toolArgsPreview(args).includes("\\udb40\\udc61"), true, "the card's preview shows them too");
  // Text people read is kept as it is: letters of any script, an emoji (its joiner escaped).
  assert.equal(canonicalJson({ t: "Grüße 你好 👍" }), '{"t":"Grüße 你好 👍"}');
});

test("issue 26 r30 F30b-2 (reported case: a sandboxed plugin with network = \"host\" had the same card as one with no network, and reached a service on 127.0.0.1 after \"allow once\"): the card says the sandbox shares this computer's network; the tool host says it in the call's body", async () => {
  await withHub(async (f, client, _owner, job) => {
    const host = await ownerCardOf(f, (await client.toolCall(job.run, job.token, { ...body({ cmd: "id" }), sandboxed: true, sandboxNetwork: "host" })).card!);
    assert.ok(host.text.includes("\nRuns in the plugin sandbox ([sandbox] in its manifest)\nNetwork: shared with this computer (network = \"host\" in its manifest): it reaches the internet and every service on this computer's 127.0.0.1\n"), host.text);
    const none = await ownerCardOf(f, (await client.toolCall(job.run, job.token, { ...body({ cmd: "pwd" }), sandboxed: true })).card!);
    assert.equal(none.text.includes("Network:"), false, none.text);
  });
  const { hostFixture, syncManifest, toolToml, writePlugin } = await import("./tools-helpers.js");
  const h = hostFixture();
  try {
    for (const network of ["none", "bridge", "host"]) writePlugin(h.root, `n${network}`, syncManifest(`n${network}`, "true", [], toolToml("t") + `\n[sandbox]\nnetwork = "${network}"\n`));
    h.registry.rescan();
    const said = [];
    for (const network of ["none", "bridge", "host"]) {
      const c = await h.host.check(`n${network}.t`, {});
      said.push(c.ok ? c.sandboxNetwork ?? null : c.message);
    }
    assert.deepEqual(said, [null, "bridge", "host"]);
  } finally {
    await h.close();
  }
});
