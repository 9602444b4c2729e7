/**
 * The `agent-autoloop` command line (DESIGN.md 接口): init, serve, status, answer, resolve, stop, key, check,
 * plugins, --version. Every command but init, serve, check, plugins and key (while no hub runs) talks to the hub
 * over HTTP, and only to this home's hub (connect.ts); everything it prints goes through print.ts, in the language of
 * the message catalog (`AGENT_AUTOLOOP_LANG`, else `LANG`).
 *
 * Start-up time: this module loads only commander, the catalog and print.ts. Each command loads what it uses when it
 * runs (`import()` in its action), so `--help`, `--version`, `status` and `answer` never load the hub, SQLite or
 * the worker; `npm run benchmark` measures `--help` against a bare `node -e 0`.
 */
import { Command, CommanderError } from "commander";
import { langFromEnv, t, type MessageId, render } from "../i18n/messages.js";
import { commanderText } from "./commander-text.js";
import { CliError, printable, say, sayError } from "./print.js";
import type { ConsoleOptions } from "./console.js";
import { exitWhenOutputBreaks, type OutputGuard } from "./log-streams.js";
import { registerHomeCommands } from "./home-commands.js";
import { fixedPath } from "../common/paths.js";
import type { Config, Home } from "../host/home.js";
import type { HubClient, HubError } from "../protocol/client.js";
import type { ConformanceConfig } from "../protocol/conformance.js";
import type { KeyKind } from "../kernel/types.js";

const lang = langFromEnv(process.env);
/** What a failed write of stdout or stderr does: a command ends quietly on a closed pipe; `serve` exits (issue 33). */
let output: OutputGuard | null = null;

async function home(): Promise<Home> {
  const { homePaths } = await import("../host/home.js");
  return homePaths();
}

/** This home, with its config.json read. @throws CliError when the home is not set up yet. */
async function setUpHome(): Promise<{ h: Home; config: Config }> {
  const [{ existsSync }, { homePaths, readConfig }] = await Promise.all([import("node:fs"), import("../host/home.js")]);
  const h = homePaths();
  if (!existsSync(h.config)) throw new CliError(t(lang, "cli.noHome", { home: h.dir }));
  return { h, config: readConfig(h, lang) };
}

/** A client of this home's hub with the owner key, once the hub answered with this home's id and proved it holds its master key. */
async function ownerClient(): Promise<HubClient> {
  const [{ h, config }, { hubUrl }, { HubClient }] = await Promise.all([setUpHome(), import("./connect.js"), import("../protocol/client.js")]);
  return new HubClient(await hubUrl(h, lang), config.owner);
}

/** Runs an owner call on this home's hub (see connect.ts `call`). */
async function call<T>(client: HubClient | Promise<HubClient>, f: (c: HubClient) => Promise<T>): Promise<T> {
  // Both at once: a client that fails (no home, no hub) is handled here, never left as an unhandled rejection.
  const [c, { call: callHub }] = await Promise.all([client, import("./connect.js")]);
  return callHub(c, f, lang);
}

async function version(): Promise<string> {
  const { releaseSync } = await import("../host/version.js");
  const { tag, commit } = releaseSync();
  return `${tag ?? t(lang, "cli.unreleased")}${commit ? ` (${commit})` : ""}`;
}

/** Commander's own headings, as its help calls `styleTitle` with them, in the catalog's words. */
const helpTitles: Record<string, MessageId> = {
  "Usage:": "cli.help.usage", "Options:": "cli.help.options", "Commands:": "cli.help.commands",
  "Arguments:": "cli.help.arguments", "Global Options:": "cli.help.globalOptions",
};

/**
 * The command line. `argv` (process.argv form) only decides whether the version is read: that takes two `git`
 * processes (~0.1 s), which every other command, `serve` included, would wait for at start.
 */
export async function program(argv: readonly string[] = process.argv): Promise<Command> {
  const p = new Command("agent-autoloop");
  // Commander reads "-Vh" as -V then -h: any argument that starts with -V asks for the version.
  const asksVersion = argv.slice(2).some((a) => a === "--version" || a.startsWith("-V"));
  // Set before any subcommand is made: subcommands copy the help and output settings of their parent when made.
  p.configureHelp({ styleTitle: (title) => { const id = helpTitles[title]; return id ? render(lang, { id }) : title; } })
    .helpOption("-h, --help", t(lang, "cli.desc.help"))
    .helpCommand("help [command]", t(lang, "cli.desc.help"))
    .configureOutput({
      writeOut: (s) => process.stdout.write(printable(s)),
      writeErr: (s) => sayError(s),
      // Commander words its own errors in English ("error: unknown command 'x'"): shown in the user's language.
      outputError: (s, write) => write(commanderText(s, lang)),
    })
    .exitOverride();
  p.description(t(lang, "cli.desc.program"))
    .version(asksVersion ? await version() : "", "-V, --version", t(lang, "cli.desc.version"));

  p.command("init").description(t(lang, "cli.desc.init")).action(async () => {
    const h = await home();
    const { initialize } = await import("../host/serve.js");
    const created = initialize(h, lang);
    say(t(lang, created ? "cli.init.created" : "cli.init.exists", { home: h.dir }));
  });

  p.command("serve")
    .description(t(lang, "cli.desc.serve"))
    .option("--listen <host:port>", t(lang, "cli.desc.listen"))
    // No default value given to commander: it would print its own "(default: [])" after our text (issue 15).
    .option("--plugins <dir>", t(lang, "cli.desc.servePlugins"), (dir: string, dirs: string[] = []) => [...dirs, dir])
    .action(async (o: { listen?: string; plugins?: string[] }) => {
      // A hub whose log cannot be written exits for its service manager to restart it, never spins (issue 33).
      if (output) output.policy = "service";
      const { startServe } = await import("../host/serve.js");
      // The hub's log lines carry text from outside too (a channel's or a webhook's error, a rules file's content).
      const running = await startServe(await home(), { listen: o.listen, lang, log: (line) => sayError(line + "\n"), pluginDirs: o.plugins ?? [] });
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
    .description(t(lang, "cli.desc.status"))
    .option("--json", t(lang, "cli.desc.statusJson"))
    .option("--before <run>", t(lang, "cli.desc.before"))
    .option("--rule <name>", t(lang, "cli.desc.statusRule"))
    .action(async (o: { json?: boolean; before?: string; rule?: string }) => {
      if (o.before !== undefined && !/^[1-9]\d{0,14}$/.test(o.before)) throw new CliError(t(lang, "notFound.run", { id: o.before }));
      const client = await ownerClient();
      const before = o.before ? Number(o.before) : undefined;
      const [{ formatStatus, stateOfRule }, { readConfig }, { channelProblems }] = await Promise.all([import("./status.js"), import("../host/home.js"), import("./config-keys.js")]);
      const state = o.rule === undefined
        ? await call(client, (c) => c.state(before))
        : await stateOfRule((b) => call(client, (c) => c.state(b)), o.rule, before);
      if (state === null) throw new CliError(t(lang, "notFound.rule", { name: o.rule! }));
      if (o.json) return say(JSON.stringify(state, null, 2));
      const h = await home();
      const config = readConfig(h, lang);
      const localChannels = Object.keys(config.channels);
      say(formatStatus(state, lang, client.url, { localChannels, channelProblems: await channelProblems(h, config, lang), rule: o.rule ?? null }));
    });

  p.command("answer")
    .description(t(lang, "cli.desc.answer"))
    .argument("<card>", t(lang, "cli.arg.card"))
    .argument("[choice]", t(lang, "cli.arg.choice"))
    .option("--text <text>", t(lang, "cli.desc.text"))
    .action(async (card: string, choice: string | undefined, o: { text?: string }) => {
      if (choice === undefined && o.text === undefined) throw new CliError(t(lang, "card.choiceOrText"));
      if (choice !== undefined && !/^\d{1,6}$/.test(choice)) throw new CliError(t(lang, "cli.choice"));
      const body: { choice?: number; text?: string } = {};
      if (choice !== undefined) body.choice = Number(choice);
      if (o.text !== undefined) body.text = o.text;
      const res = await call(ownerClient(), (c) => c.answer(cardId(card), body));
      say(t(lang, "cli.answered", { card, state: res.card.state, title: res.card.title }));
    });

  p.command("resolve")
    .description(t(lang, "cli.desc.resolve"))
    .argument("<card>", t(lang, "cli.arg.card"))
    .argument("[reason...]", t(lang, "cli.desc.reason"))
    .action(async (card: string, reason: string[]) => {
      const res = await call(ownerClient(), (c) => c.resolve(cardId(card), reason.join(" ") || undefined));
      say(t(lang, res.changed ? "cli.resolved" : "cli.resolvedAlready", { card }));
    });

  p.command("stop")
    .description(t(lang, "cli.desc.stop"))
    .argument("<run>", t(lang, "cli.arg.run"))
    .action(async (run: string) => {
      if (!/^[1-9]\d{0,14}$/.test(run)) throw new CliError(t(lang, "notFound.run", { id: run }));
      const res = await call(ownerClient(), (c) => c.cancel(Number(run)));
      say(t(lang, "cli.stopped", { run, state: res.state }));
    });

  p.command("pause")
    .description(t(lang, "cli.desc.pause"))
    .argument("<rule>", t(lang, "cli.arg.rule"))
    .option("--reason <text>", t(lang, "cli.desc.reason"))
    .option("--until <time>", t(lang, "cli.desc.until"))
    .action(async (rule: string, o: { reason?: string; until?: string }) => {
      const res = await call(ownerClient(), (c) => c.pause(rule, { ...(o.reason ? { reason: o.reason } : {}), ...(o.until ? { until: o.until } : {}) }));
      const until = res.paused.until ? String(res.paused.until) : null;
      say(until
        ? t(lang, res.changed ? "cli.pausedUntil" : "cli.pausedAlreadyUntil", { rule, until })
        : t(lang, res.changed ? "cli.paused" : "cli.pausedAlready", { rule }));
    });

  p.command("resume")
    .description(t(lang, "cli.desc.resume"))
    .argument("<rule>", t(lang, "cli.arg.rule"))
    .action(async (rule: string) => {
      const res = await call(ownerClient(), (c) => c.resume(rule));
      say(t(lang, res.changed ? "cli.resumed" : "cli.notPaused", { rule }));
    });

  p.command("run")
    .description(t(lang, "cli.desc.run"))
    .argument("<rule>", t(lang, "cli.arg.rule"))
    .option("--subject <subject>", t(lang, "cli.desc.subject"))
    .option("--reason <text>", t(lang, "cli.desc.runReason"))
    .action(async (rule: string, o: { subject?: string; reason?: string }) => {
      const res = await call(ownerClient(), (c) => c.runNow(rule, { ...(o.subject ? { subject: o.subject } : {}), ...(o.reason ? { reason: o.reason } : {}) }));
      say(t(lang, "cli.ran", { rule, event: res.event, run: res.run }));
    });

  p.command("why")
    .description(t(lang, "cli.desc.why"))
    .argument("<run>", t(lang, "cli.arg.run"))
    .option("--json", t(lang, "cli.desc.whyJson"))
    .action(async (run: string, o: { json?: boolean }) => {
      if (!/^[1-9]\d{0,14}$/.test(run)) throw new CliError(t(lang, "notFound.run", { id: run }));
      const client = await ownerClient();
      const res = await call(client, (c) => c.why(Number(run)));
      if (o.json) return say(JSON.stringify(res.facts, null, 2));
      const { timeline } = await import("./why.js");
      // Then the files its workflow sent (issue 18), each with the address that serves it to the owner.
      const files = (res.artifacts ?? []).map((a) => t(lang, "why.artifact", { file: a.file, bytes: a.bytes, path: client.url.replace(/\/$/, "") + a.path }));
      say([...timeline(Number(run), res.facts, lang), ...files].join("\n"));
    });

  p.command("console")
    .description(t(lang, "cli.desc.console"))
    .option("--end [session]", t(lang, "cli.desc.consoleEnd"))
    .option("--sessions", t(lang, "cli.desc.consoleSessions"))
    .option("--no-open", t(lang, "cli.desc.consoleNoOpen"))
    .action(async (o: ConsoleOptions) => {
      const { consoleCommand } = await import("./console.js");
      say(await consoleCommand(o, lang, (f) => call(ownerClient(), f), (await home()).consoleLinks));
    });

  p.command("add")
    .description(t(lang, "cli.desc.add"))
    .argument("<repo>", t(lang, "cli.arg.repo"))
    .option("--replace", t(lang, "cli.desc.replace"))
    .action(async (repo: string, o: { replace?: boolean }) => {
      // A home that is not set up is refused as by every other command: add would make it without init's modes.
      const [{ h }, { addPlugin }] = await Promise.all([setUpHome(), import("./add.js")]);
      say(addPlugin(h, repo, o.replace === true, lang));
    });

  // The service (issue 28): install, uninstall and update print as they go; their exit code says how it ended.
  const service = async (which: "install" | "uninstall" | "update", yes: boolean) => {
    const h = await home();
    const sayLine = (line: string) => say(line);
    if (which === "update") {
      const { update } = await import("./service/update.js");
      process.exitCode = await update({ home: h, lang, yes, say: sayLine });
      return;
    }
    const mod = await import("./service/install.js");
    process.exitCode = await mod[which]({ home: h, lang, yes, say: sayLine });
  };
  p.command("install").description(t(lang, "cli.desc.install"))
    .option("-y, --yes", t(lang, "cli.desc.yes"))
    .action((o: { yes?: boolean }) => service("install", o.yes === true));
  p.command("uninstall").description(t(lang, "cli.desc.uninstall"))
    .option("-y, --yes", t(lang, "cli.desc.yes"))
    .action((o: { yes?: boolean }) => service("uninstall", o.yes === true));
  p.command("update").description(t(lang, "cli.desc.update"))
    .option("-y, --yes", t(lang, "cli.desc.yes"))
    .action((o: { yes?: boolean }) => service("update", o.yes === true));

  p.command("doctor")
    .description(t(lang, "cli.desc.doctor"))
    .action(async () => {
      const { h, config } = await setUpHome();
      const { doctor } = await import("./doctor.js");
      const findings = await doctor(h, config, lang);
      for (const f of findings) say(t(lang, f.ok ? "cli.doctor.ok" : "cli.doctor.fix", { line: f.line }));
      if (findings.some((f) => !f.ok)) process.exitCode = 1;
    });

  p.command("conformance")
    .description(t(lang, "cli.desc.conformance"))
    .argument("<url>", t(lang, "cli.arg.url"))
    .requiredOption("--config <file>", t(lang, "cli.desc.config"))
    .action(async (url: string, o: { config: string }) => {
      const [{ readFileSync }, { conformance }] = await Promise.all([import("node:fs"), import("../protocol/conformance.js")]);
      let cfg: ConformanceConfig;
      try {
        cfg = JSON.parse(readFileSync(o.config, "utf8")) as ConformanceConfig;
      } catch (e) {
        const { fileErrorMessage } = await import("../host/home-files.js");
        throw new CliError(fileErrorMessage(e, lang) ?? `${o.config}: ${(e as Error).message}`);
      }
      if (!cfg?.keys?.source || !cfg.keys.worker || !cfg.keys.channel || !cfg.keys.owner || !cfg.eventType || !cfg.answerer) {
        throw new CliError(t(lang, "cli.conformance.config", { file: o.config }));
      }
      const checks = await conformance(url, cfg);
      for (const c of checks) say(t(lang, c.ok ? "cli.conformance.pass" : "cli.conformance.fail", { check: `${c.name}${c.detail ? ` — ${c.detail}` : ""}` }));
      const failed = checks.filter((c) => !c.ok).length;
      say(t(lang, "cli.conformance.summary", { passed: checks.length - failed, failed }));
      if (failed > 0) process.exitCode = 1;
    });

  p.command("mcp")
    .description(t(lang, "cli.desc.mcp"))
    .action(async () => {
      const { h, config } = await setUpHome();
      const [{ runMcp, sourceFromConfig }, { hubUrl }] = await Promise.all([import("./mcp.js"), import("./connect.js")]);
      // The hub is looked for (and its home id checked) at each tool call's need, so mcp may start before the hub.
      await runMcp({
        hub: () => hubUrl(h, lang), owner: config.owner || null, source: sourceFromConfig(h.config), version: await version(),
        lang, localChannels: Object.keys(config.channels),
      });
    });

  // A run's tools for its agent (issue 16): the relay to the worker's socket of the run, as a stdio MCP server.
  p.command("tools").description(t(lang, "cli.desc.tools"))
    .command("mcp")
    .description(t(lang, "cli.desc.toolsMcp"))
    .requiredOption("--socket <path>", t(lang, "cli.desc.toolsSocket"))
    // The worker names the language on the command line: an agent CLI passes its MCP servers only some variables.
    .option("--lang <lang>", t(lang, "cli.desc.toolsLang"))
    .action(async (o: { socket: string; lang?: string }) => {
      if (o.lang !== undefined && o.lang !== "zh" && o.lang !== "en") throw new CliError(t(lang, "cli.tools.lang", { value: o.lang }));
      const { runRelay } = await import("../worker/tool-relay.js");
      await runRelay(o.socket, o.lang ?? lang);
    });

  // Plugins of this home (issue 27): the running hub's records, else read here by the same loaders (cli/plugin-home.ts).
  const plugins = p.command("plugins").description(t(lang, "cli.desc.plugins"));
  plugins.command("list")
    .description(t(lang, "cli.desc.pluginsList"))
    .option("--json", t(lang, "cli.desc.pluginsJson"))
    .action(async (o: { json?: boolean }) => {
      const [{ h }, { listPlugins }] = await Promise.all([setUpHome(), import("./plugins.js")]);
      print(await listPlugins(h, lang, o.json === true));
    });
  plugins.command("inspect")
    .description(t(lang, "cli.desc.pluginsInspect"))
    .argument("<name>", t(lang, "cli.arg.plugin"))
    .option("--json", t(lang, "cli.desc.pluginsJson"))
    .option("--run", t(lang, "cli.desc.pluginsInspectRun"))
    .action(async (name: string, o: { json?: boolean; run?: boolean }) => {
      const [{ h }, { inspectPlugin }] = await Promise.all([setUpHome(), import("./plugins.js")]);
      print(await inspectPlugin(h, name, lang, o.json === true, o.run === true));
    });
  plugins.command("doctor")
    .description(t(lang, "cli.desc.pluginsDoctor"))
    .action(async () => {
      const [{ h }, { doctorPlugins }] = await Promise.all([setUpHome(), import("./plugins.js")]);
      print(await doctorPlugins(h, lang));
    });
  // Declarative plugins (plugin.json) are loaded by the hub: reload asks it to rescan their folders.
  plugins.command("reload")
    .description(t(lang, "cli.desc.pluginsReload"))
    .option("--json", t(lang, "cli.desc.pluginsJson"))
    .action(async (o: { json?: boolean }) => {
      const report = await call(ownerClient(), (c) => c.pluginsReload());
      const { formatReload } = await import("./declarative.js");
      print(formatReload(report, lang, o.json === true));
    });
  plugins.command("settings")
    .description(t(lang, "cli.desc.pluginsSettings"))
    .argument("<id>", t(lang, "cli.arg.plugin"))
    .option("--json", t(lang, "cli.desc.pluginsJson"))
    .action(async (id: string, o: { json?: boolean }) => {
      const r = await call(ownerClient(), (c) => c.pluginSettings(id));
      const { formatSettings } = await import("./declarative.js");
      print(formatSettings(r, lang, o.json === true));
    });
  plugins.command("set")
    .description(t(lang, "cli.desc.pluginsSet"))
    .argument("<id>", t(lang, "cli.arg.plugin"))
    .argument("<key>", t(lang, "cli.arg.settingKey"))
    .argument("[value]", t(lang, "cli.arg.settingValue"))
    .option("--unset", t(lang, "cli.desc.pluginsUnset"))
    .action(async (id: string, key: string, given: string | undefined, o: { unset?: boolean }) => {
      // A secret typed on the command line stays in the shell's history: "-" (or no value) reads it from stdin.
      let value: string | null = null;
      if (!o.unset) value = given === undefined || given === "-" ? (await readStdin()).replace(/\r?\n$/, "") : given;
      const r = await call(ownerClient(), (c) => c.pluginSettingSet(id, key, value));
      const { formatSettingSet } = await import("./declarative.js");
      print(formatSettingSet(r, lang));
    });

  plugins.command("invoke")
    .description(t(lang, "cli.desc.pluginsInvoke"))
    .argument("<tool>", t(lang, "cli.arg.tool"))
    // The default "{}" is applied here, not given to commander, whose "(default: …)" would follow our text's own.
    .option("--args <json>", t(lang, "cli.desc.invokeArgs"))
    .option("--json", t(lang, "cli.desc.invokeJson"))
    .action(async (tool: string, o: { args?: string; json?: boolean }) => {
      const [{ h, config }, { invokeTool }] = await Promise.all([setUpHome(), import("./invoke.js")]);
      process.exitCode = await invokeTool(h, config, tool, o.args ?? "{}", o.json === true, lang, { out: say, err: (line) => sayError(line + "\n") });
    });
  plugins.command("conformance")
    .description(t(lang, "cli.desc.pluginsConformance"))
    .argument("<folder>", t(lang, "cli.arg.folder"))
    .option("--args <json>", t(lang, "cli.desc.conformanceArgs"))
    .action(async (folder: string, o: { args?: string }) => {
      const [{ pluginConformance }, h] = await Promise.all([import("./plugins.js"), home()]);
      print(await pluginConformance(folder, o.args, lang, h));
    });

  const key = p.command("key").description(t(lang, "cli.desc.key"));
  key.command("new")
    .description(t(lang, "cli.desc.keyNew"))
    .argument("<kind>", t(lang, "cli.arg.kind"))
    .argument("<name>", t(lang, "cli.arg.keyName"))
    .action(async (given: string, name: string) => {
      const kind = await checkKey(given, name);
      const { h } = await setUpHome();
      const [{ changeKeys }, { newKey }, { registerKeysLocally }] = await Promise.all([import("./connect.js"), import("../host/home.js"), import("../host/serve.js")]);
      const [{ keyNameNote }, { updateConfigKey }] = await Promise.all([import("./key-note.js"), import("./config-keys.js")]);
      const k = await changeKeys(h, lang, async (c) => (await c.keyNew(kind, name)).key, () => {
        const made = newKey();
        registerKeysLocally(h, [{ kind, name, key: made }], lang);
        return made;
      });
      // A key config.json holds is rotated there too, or the CLI, the local worker or a channel would be locked out.
      const what = await updateConfigKey(h, kind, name, k, lang);
      say(k);
      if (what && kind !== "owner") sayError(t(lang, "cli.keyConfig", { what }) + "\n");
      const note = keyNameNote(h.rules, kind, name, lang);
      if (note) sayError(note + "\n");
    });
  key.command("remove")
    .description(t(lang, "cli.desc.keyRemove"))
    .argument("<kind>", t(lang, "cli.arg.kind"))
    .argument("<name>", t(lang, "cli.arg.itsName"))
    .action(async (given: string, name: string) => {
      const kind = await checkKey(given, name, true);
      const { h } = await setUpHome();
      const [{ changeKeys }, { removeKeyLocally }, { readConfig }, { configHolds }] = await Promise.all([import("./connect.js"), import("../host/serve.js"), import("../host/home.js"), import("./config-keys.js")]);
      const changed = await changeKeys(h, lang, async (c) => (await c.keyRemove(kind, name)).changed, () => removeKeyLocally(h, kind, name, lang));
      say(t(lang, changed ? "cli.keyRemoved" : "cli.noSuchKey"));
      const what = await configHolds(readConfig(h, lang), kind, name, lang);
      if (changed && what) sayError(t(lang, "cli.keyConfigRemoved", { what }) + "\n");
    });

  registerHomeCommands(p, { lang, home, setUpHome });

  p.command("check")
    .description(t(lang, "cli.desc.check"))
    .argument("[file]", t(lang, "cli.arg.file"))
    .action(async (file: string | undefined) => {
      const { checkFile } = await import("./check.js");
      const h = await home();
      say(await checkFile(file, h.rules, lang));
      // This home's rules.json: what it names of plugins not found here (warnings; the exit stays 0).
      if (file === undefined) for (const line of await (await import("./plugins.js")).rulesPluginWarnings(h, lang)) sayError(line + "\n");
    });
  return p;
}

/** Prints what a command produced (stdout lines, then stderr lines) and sets the exit code. */
/** All of stdin as UTF-8 text. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function print(r: { out: string[]; err: string[]; code: number }): void {
  for (const line of r.out) say(line);
  for (const line of r.err) sayError(line + "\n");
  if (r.code !== 0) process.exitCode = r.code;
}

function cardId(s: string): number {
  if (!/^[1-9]\d{0,14}$/.test(s)) throw new CliError(t(lang, "notFound.card", { id: s }));
  return Number(s);
}

/** Refuses a bad kind, or a name a new key cannot have (`remove`: a name no key, however old, can have). */
/** Checks a key's kind and name as the hub does. @returns the kind. @throws CliError naming what is wrong. */
async function checkKey(kind: string, name: string, remove = false): Promise<KeyKind> {
  const [{ keyKinds }, { isName, isOldKeyName, reservedSources }] = await Promise.all([import("../kernel/types.js"), import("../kernel/rules.js")]);
  const known = keyKinds.find((k) => k === kind);
  if (!known) throw new CliError(t(lang, "key.kind"));
  if (remove ? !isOldKeyName(name) : !isName(name)) throw new CliError(t(lang, remove ? "key.oldName" : "key.name"));
  if (!remove && kind === "source" && reservedSources.includes(name)) throw new CliError(t(lang, "key.reserved", { name }));
  return known;
}

/** Runs the CLI with `argv` (process.argv form). Exits non-zero with one line on stderr when a command fails. */
export async function main(argv: string[]): Promise<void> {
  output ??= exitWhenOutputBreaks("command", lang);
  // Programs are looked up only in absolute folders that exist now, by where they lead (common/paths.ts fixedPath):
  // the children the hub and its worker start in an agent's folder never find that agent's programs there.
  process.env.PATH = fixedPath(process.env.PATH ?? "", process.cwd());
  try {
    await (await program(argv)).parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) process.exit(e.exitCode);
    // A file system error names a temporary file and no remedy: said as the file, what is wrong and what to do. A
    // hub's refusal is said from its message id and params, in this command line's language (issue 27 #2).
    const { fileErrorMessage } = await import("../host/home-files.js");
    // (HubError is known by its method: the client module is not loaded before a command needs it.)
    const message = typeof (e as Partial<HubError>).shownIn === "function" ? (e as HubError).shownIn(lang) : (e as Error).message;
    sayError(t(lang, "cli.failed", { error: fileErrorMessage(e, lang) ?? message }) + "\n");
    process.exit(e instanceof CliError ? e.code : 1);
  }
}
