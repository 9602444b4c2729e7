/**
 * The `agent-autoloop` command line (DESIGN.md 接口): init, serve, status, answer, resolve, stop, key, check,
 * --version. Every command but init, serve, check and key (while no hub runs) talks to the hub over HTTP, and only
 * to this home's hub (connect.ts); everything it prints goes through print.ts.
 */
import { Command, CommanderError } from "commander";
import { readFileSync, existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { releaseSync } from "../host/version.js";
import { homePaths, readConfig, writeFileAtomic, ownerKeyName, type Config, type Home } from "../host/home.js";
import { initialize, registerKeysLocally, removeKeyLocally, startServe } from "../host/serve.js";
import { HubClient } from "../protocol/client.js";
import { isName, isOldKeyName, reservedSources } from "../kernel/rules.js";
import { readRulesInput } from "../host/rules-file.js";
import { keyKinds, type KeyKind } from "../kernel/types.js";
import { newKey } from "../host/home.js";
import { langFromEnv, t } from "../i18n/messages.js";
import { formatStatus, stateOfRule } from "./status.js";
import { keyNameNote } from "./key-note.js";
import { timeline } from "./why.js";
import { conformance, type ConformanceConfig } from "../protocol/conformance.js";
import { own } from "../kernel/own.js";
import { CliError, call as callHub, changeKeys, hubUrl } from "./connect.js";
import { fileErrorMessage } from "../host/home-files.js";
import { printable, say, sayError } from "./print.js";
import { addPlugin } from "./add.js";

const lang = langFromEnv(process.env);

function home(): Home {
  return homePaths();
}

/** A client of this home's hub with the owner key, once the hub answered with this home's id. */
async function ownerClient(): Promise<HubClient> {
  const h = home();
  if (!existsSync(h.config)) throw new CliError(t(lang, "cli.noHome", { home: h.dir }));
  return new HubClient(await hubUrl(h, lang), readConfig(h).owner);
}

/** Runs an owner call on this home's hub (see connect.ts `call`). */
async function call<T>(client: HubClient | Promise<HubClient>, f: (c: HubClient) => Promise<T>): Promise<T> {
  return callHub(await client, f, lang);
}

function version(): string {
  const { tag, commit } = releaseSync();
  return `${tag ?? t(lang, "cli.unreleased")}${commit ? ` (${commit})` : ""}`;
}

/**
 * The command line. `argv` (process.argv form) only decides whether the version is read: that takes two `git`
 * processes (~0.1 s), which every other command, `serve` included, would wait for at start.
 */
export function program(argv: readonly string[] = process.argv): Command {
  const p = new Command("agent-autoloop");
  // Commander reads "-Vh" as -V then -h: any argument that starts with -V asks for the version.
  const asksVersion = argv.slice(2).some((a) => a === "--version" || a.startsWith("-V"));
  p.description("A self-hosted hub that turns events into coding-agent runs and brings you only what needs a human.")
    .version(asksVersion ? version() : "", "-V, --version")
    .exitOverride()
    .configureOutput({ writeOut: (s) => process.stdout.write(printable(s)), writeErr: (s) => sayError(s) });

  p.command("init").description("create the home directory (rules.json, config.json, keys)").action(() => {
    const h = home();
    const created = initialize(h, lang);
    say(t(lang, created ? "cli.init.created" : "cli.init.exists", { home: h.dir }));
  });

  p.command("serve")
    .description("run the hub, the local worker and the channels in one process")
    .option("--listen <host:port>", "listen address (port 0 picks a free port)")
    .action(async (o: { listen?: string }) => {
      // The hub's log lines carry text from outside too (a channel's or a webhook's error, a rules file's content).
      const running = await startServe(home(), { listen: o.listen, lang, log: (line) => sayError(line + "\n") });
      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        void running.close().then(() => process.exit(0));
      };
      process.on("SIGTERM", stop);
      process.on("SIGINT", stop);
      // Only now: whoever waits for this line may send SIGTERM at once, which must find the handler in place.
      say(t(lang, "serve.listening", { url: running.url }));
    });

  p.command("status")
    .description("cards, runs, rules, workers and unrouted events at a glance")
    .option("--json", "print the raw /v1/state answer")
    .option("--before <run>", "older runs, before this run id")
    .option("--rule <name>", "only this rule's runs")
    .action(async (o: { json?: boolean; before?: string; rule?: string }) => {
      if (o.before !== undefined && !/^[1-9]\d{0,14}$/.test(o.before)) throw new CliError(t(lang, "notFound.run", { id: o.before }));
      const client = await ownerClient();
      const before = o.before ? Number(o.before) : undefined;
      const state = o.rule === undefined
        ? await call(client, (c) => c.state(before))
        : await stateOfRule((b) => call(client, (c) => c.state(b)), o.rule, before);
      if (state === null) throw new CliError(t(lang, "notFound.rule", { name: o.rule! }));
      const localChannels = Object.keys(readConfig(home()).channels);
      say(o.json ? JSON.stringify(state, null, 2) : formatStatus(state, lang, client.url, { localChannels, rule: o.rule ?? null }));
    });

  p.command("answer")
    .description("answer a card: the number of an option (0, 1, …), or --text")
    .argument("<card>", "card id")
    .argument("[choice]", "option number")
    .option("--text <text>", "an answer in your own words")
    .action(async (card: string, choice: string | undefined, o: { text?: string }) => {
      if (choice === undefined && o.text === undefined) throw new CliError(t(lang, "card.choiceOrText"));
      if (choice !== undefined && !/^\d{1,6}$/.test(choice)) throw new CliError(t(lang, "cli.choice"));
      const body: { choice?: number; text?: string } = {};
      if (choice !== undefined) body.choice = Number(choice);
      if (o.text !== undefined) body.text = o.text;
      const res = await call(ownerClient(), (c) => c.answer(cardId(card), body));
      say(`card ${card}: ${res.card.state} — ${res.card.title}`);
    });

  p.command("resolve")
    .description("close a card: no decision needed any more")
    .argument("<card>", "card id")
    .argument("[reason...]", "why")
    .action(async (card: string, reason: string[]) => {
      const res = await call(ownerClient(), (c) => c.resolve(cardId(card), reason.join(" ") || undefined));
      say(`card ${card}: ${res.changed ? "closed" : "already closed"}`);
    });

  p.command("stop")
    .description("stop a run")
    .argument("<run>", "run id")
    .action(async (run: string) => {
      if (!/^[1-9]\d{0,14}$/.test(run)) throw new CliError(t(lang, "notFound.run", { id: run }));
      const res = await call(ownerClient(), (c) => c.cancel(Number(run)));
      say(`run ${run}: ${res.state}`);
    });

  p.command("pause")
    .description("pause a rule: cron times are skipped, events are not taken, queued runs wait")
    .argument("<rule>", "rule name")
    .option("--reason <text>", "why")
    .option("--until <time>", "resume by itself then (ISO time with a zone, e.g. 2026-11-07T09:00:00+08:00)")
    .action(async (rule: string, o: { reason?: string; until?: string }) => {
      const res = await call(ownerClient(), (c) => c.pause(rule, { ...(o.reason ? { reason: o.reason } : {}), ...(o.until ? { until: o.until } : {}) }));
      say(`${rule}: ${res.changed ? "paused" : "already paused"}${res.paused.until ? ` until ${res.paused.until}` : ""}`);
    });

  p.command("resume")
    .description("resume a paused rule (missed cron times are not made up)")
    .argument("<rule>", "rule name")
    .action(async (rule: string) => {
      const res = await call(ownerClient(), (c) => c.resume(rule));
      say(`${rule}: ${res.changed ? "resumed" : "was not paused"}`);
    });

  p.command("run")
    .description("run a rule now, through normal dispatch")
    .argument("<rule>", "rule name")
    .option("--subject <subject>", "the subject (the lane of a parallel rule)")
    .option("--reason <text>", "why (the event's detail)")
    .action(async (rule: string, o: { subject?: string; reason?: string }) => {
      const res = await call(ownerClient(), (c) => c.runNow(rule, { ...(o.subject ? { subject: o.subject } : {}), ...(o.reason ? { reason: o.reason } : {}) }));
      say(`${rule}: event ${res.event}, run ${res.run}`);
    });

  p.command("why")
    .description("how a run came about and what it did, from the fact log")
    .argument("<run>", "run id")
    .option("--json", "print the raw facts")
    .action(async (run: string, o: { json?: boolean }) => {
      if (!/^[1-9]\d{0,14}$/.test(run)) throw new CliError(t(lang, "notFound.run", { id: run }));
      const res = await call(ownerClient(), (c) => c.why(Number(run)));
      say(o.json ? JSON.stringify(res.facts, null, 2) : timeline(Number(run), res.facts).join("\n"));
    });

  p.command("add")
    .description("install a plugin: clone a git repository, or copy a local folder, into the plugins folder (no install scripts, no updates)")
    .argument("<repo>", "a git URL, a local git repository, or a local folder (copied without .git and node_modules)")
    .option("--replace", "install it even when a built-in plugin has that name (it is then used in place of the built-in one)")
    .action((repo: string, o: { replace?: boolean }) => {
      say(addPlugin(home(), repo, o.replace === true, lang));
    });

  p.command("doctor")
    .description("check that the agents of this computer's worker can run, and say what to do next")
    .action(async () => {
      const h = home();
      if (!existsSync(h.config)) throw new CliError(t(lang, "cli.noHome", { home: h.dir }));
      const { doctor } = await import("./doctor.js"); // loaded on use: `serve` starts without it
      const findings = await doctor(h, readConfig(h));
      for (const f of findings) say(`${f.ok ? "ok  " : "FIX "} ${f.line}`);
      if (findings.some((f) => !f.ok)) process.exitCode = 1;
    });

  p.command("conformance")
    .description("check a hub for testing against the protocol over real HTTP (writes events and cards)")
    .argument("<url>", "the hub's URL")
    .requiredOption("--config <file>", 'JSON: { "keys": { "source", "worker", "channel", "owner" }, "eventType", "answerer" }')
    .action(async (url: string, o: { config: string }) => {
      let cfg: ConformanceConfig;
      try {
        cfg = JSON.parse(readFileSync(o.config, "utf8")) as ConformanceConfig;
      } catch (e) {
        throw new CliError(`${o.config}: ${(e as Error).message}`);
      }
      if (!cfg?.keys?.source || !cfg.keys.worker || !cfg.keys.channel || !cfg.keys.owner || !cfg.eventType || !cfg.answerer) {
        throw new CliError(`${o.config}: needs keys.source, keys.worker, keys.channel, keys.owner, eventType and answerer`);
      }
      const checks = await conformance(url, cfg);
      for (const c of checks) say(`${c.ok ? "ok  " : "FAIL"} ${c.name}${c.detail ? ` — ${c.detail}` : ""}`);
      const failed = checks.filter((c) => !c.ok).length;
      say(`${checks.length - failed} passed, ${failed} failed`);
      if (failed > 0) process.exitCode = 1;
    });

  p.command("mcp")
    .description("a stdio MCP server whose tools call this hub (status, why, answer, resolve, stop, emit, tell)")
    .action(async () => {
      const h = home();
      if (!existsSync(h.config)) throw new CliError(t(lang, "cli.noHome", { home: h.dir }));
      const config = readConfig(h);
      const { runMcp, sourceFromConfig } = await import("./mcp.js"); // the MCP SDK and zod: loaded on use only
      // The hub is looked for (and its home id checked) at each tool call's need, so mcp may start before the hub.
      await runMcp({
        hub: () => hubUrl(h, lang), owner: config.owner || null, source: sourceFromConfig(h.config), version: version(),
        lang, localChannels: Object.keys(config.channels),
      });
    });

  const key = p.command("key").description("create or remove access keys");
  key.command("new")
    .description("create a key and print it (replaces an earlier key of the same kind and name)")
    .argument("<kind>", "source | worker | channel | owner")
    .argument("<name>", "the name in rules.json (source, worker or channel name)")
    .action(async (given: string, name: string) => {
      const kind = checkKey(given, name);
      const h = home();
      if (!existsSync(h.config)) throw new CliError(t(lang, "cli.noHome", { home: h.dir }));
      const k = await changeKeys(h, lang, async (c) => (await c.keyNew(kind, name)).key, () => {
        const made = newKey();
        registerKeysLocally(h, [{ kind, name, key: made }], lang);
        return made;
      });
      // A key config.json holds is rotated there too, or the CLI, the local worker or a channel would be locked out.
      const what = updateConfigKey(h, kind, name, k);
      say(k);
      if (what && kind !== "owner") sayError(t(lang, "cli.keyConfig", { what }) + "\n");
      const note = keyNameNote(h.rules, kind as KeyKind, name, lang);
      if (note) sayError(note + "\n");
    });
  key.command("remove")
    .description("remove a key: its long polls and streams end at once")
    .argument("<kind>", "source | worker | channel | owner")
    .argument("<name>", "its name")
    .action(async (given: string, name: string) => {
      const kind = checkKey(given, name, true);
      const h = home();
      if (!existsSync(h.config)) throw new CliError(t(lang, "cli.noHome", { home: h.dir }));
      const changed = await changeKeys(h, lang, async (c) => (await c.keyRemove(kind, name)).changed, () => removeKeyLocally(h, kind, name, lang));
      say(changed ? "removed" : "no such key");
      const what = configHolds(readConfig(h), kind, name);
      if (changed && what) sayError(t(lang, "cli.keyConfigRemoved", { what }) + "\n");
    });

  p.command("check")
    .description("validate a rules file without touching the hub (default: rules.json)")
    .argument("[file]", "rules file")
    .action((file: string | undefined) => {
      const f = file ?? home().rules;
      // What the hub would load, read the same way: check says what the hub would say.
      const r = readRulesInput(f, lang);
      if (r.kind === "rulesError") throw new CliError(file === undefined && !existsSync(f) ? t(lang, "cli.check.noFile", { error: r.error }) : r.error);
      say(t(lang, "cli.check.ok", {
        file: f, rules: r.rules.rules.length, agents: Object.keys(r.rules.agents).length,
        sources: Object.keys(r.rules.sources).length, channels: Object.keys(r.rules.channels).length, elsewhere: r.rules.elsewhere.length,
      }));
    });
  return p;
}

/** Which local part of config.json uses the key of this kind and name ("owner", "worker local", "channel file"), or null. */
function configHolds(config: Config, kind: KeyKind, name: string): string | null {
  if (kind === "owner" && name === ownerKeyName) return "owner";
  if (kind === "worker" && config.worker?.name === name) return `worker ${name}`;
  if (kind === "channel" && own(config.channels, name)) return `channel ${name}`;
  return null;
}

/** Writes a rotated key into config.json when config.json holds that key. @returns what holds it, or null. */
function updateConfigKey(h: Home, kind: KeyKind, name: string, key: string): string | null {
  const config = readConfig(h);
  const what = configHolds(config, kind, name);
  if (!what) return null;
  const raw = JSON.parse(readFileSync(h.config, "utf8")) as Config;
  if (kind === "owner") raw.owner = key;
  else if (kind === "worker" && raw.worker) raw.worker.key = key;
  else if (kind === "channel" && own(raw.channels, name)) raw.channels[name]!.key = key;
  writeFileAtomic(h.config, JSON.stringify(raw, null, 2) + "\n", 0o600);
  return what;
}

function cardId(s: string): number {
  if (!/^[1-9]\d{0,14}$/.test(s)) throw new CliError(t(lang, "notFound.card", { id: s }));
  return Number(s);
}

/** Refuses a bad kind, or a name a new key cannot have (`remove`: a name no key, however old, can have). */
/** Checks a key's kind and name as the hub does. @returns the kind. @throws CliError naming what is wrong. */
function checkKey(kind: string, name: string, remove = false): KeyKind {
  const known = keyKinds.find((k) => k === kind);
  if (!known) throw new CliError(t(lang, "key.kind"));
  if (remove ? !isOldKeyName(name) : !isName(name)) throw new CliError(t(lang, remove ? "key.oldName" : "key.name"));
  if (!remove && kind === "source" && reservedSources.includes(name)) throw new CliError(t(lang, "key.reserved", { name }));
  return known;
}

/** Runs the CLI with `argv` (process.argv form). Exits non-zero with one line on stderr when a command fails. */
export async function main(argv: string[]): Promise<void> {
  try {
    await program(argv).parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) process.exit(e.exitCode);
    // A file system error names a temporary file and no remedy: said as the file, what is wrong and what to do.
    sayError(`agent-autoloop: ${fileErrorMessage(e, lang) ?? (e as Error).message}\n`);
    process.exit(e instanceof CliError ? e.code : 1);
  }
}
