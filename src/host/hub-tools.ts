/**
 * The hub's tool host (issue 16; issue 27: services start with `serve`): made at its first use from the registry of the
 * home's tool plugins, so that a hub nobody asks about tools loads none of src/tools (MCP, gRPC, a schema compiler);
 * started with its long-lived plugins when `serve` asks, as soon as a tool plugin is found; closed with the hub.
 * Split out of hub.ts (no module over 500 lines).
 */
import type { ToolHost } from "../tools/index.js";
import { readCodeFolders } from "./code-folders.js";
import { homePaths } from "./home.js";
import type { ToolPlugins } from "../tools/kind.js";
import type { DeclarativeCatalog } from "../declarative/index.js";
import { t, type Lang } from "../i18n/messages.js";
import { trustKey } from "../kernel/tables.js";
import { approvalsOf, pluginDenied } from "../kernel/rules.js";
import type { View } from "../kernel/view.js";

/** What the hub gives its tool host. */
export interface HubToolsOptions {
  plugins: ToolPlugins;
  lang: Lang;
  /** The hub's home: hidden from every sandbox. */
  homeDir: string;
  data: DeclarativeCatalog;
  /** The hub's log; a plugin's stderr goes there as `plugin.<name>`. */
  log: (line: string) => void;
  /** The hub's view now: its `trust` rows say whom the owner trusts at which digest (tools/host.ts `trusted`). */
  view: () => View;
}

/** The tool host of one hub. */
export class HubTools {
  private tools: Promise<ToolHost> | null = null;
  /** Whether the host starts once a tool plugin is found (`serve`: `supervise`), and has started. */
  private supervising: "no" | "waiting" | "started" = "no";
  private closed = false;

  constructor(private readonly o: HubToolsOptions) {}

  /** The tool host, made at its first use. */
  host(): Promise<ToolHost> {
    this.tools ??= Promise.all([import("../tools/index.js"), this.o.plugins.registry()]).then(([{ ToolHost }, registry]) => new ToolHost(registry, {
      lang: this.o.lang, hiddenPaths: [this.o.homeDir], log: (subsystem, line) => this.o.log(`${subsystem}: ${line}`), data: this.o.data,
      // The owner's "always allow" at this digest: only then are a plugin's tools asked outside the review sandbox (F5).
      trusted: (plugin, digest) => this.o.view().get("trust", trustKey(plugin, digest)) !== undefined,
      // A long-lived plugin the approvals deny whole is not started (F41b-4).
      denied: (plugin) => {
        const rules = this.o.view().rules()?.rules;
        return rules ? pluginDenied(approvalsOf(rules), plugin) : false;
      },
      // What the starts of this home's hub recorded (code-folders.ts), read when the host is made.
      seen: readCodeFolders(homePaths(this.o.homeDir)),
    }));
    return this.tools;
  }

  /**
   * Starts the long-lived tool plugins (spec tool-plugins.md §6: the gateway spawns services at start, with
   * `CORLINMAN_PLUGIN_ADDR`), supervised from then on and following the registry's changes. Never rejects: a plugin
   * that cannot start says why in its status and the log.
   */
  async start(): Promise<void> {
    if (this.closed) return;
    this.supervising = "started";
    try {
      await (await this.host()).start();
    } catch (e) {
      this.o.log(t(this.o.lang, "hub.toolsFailed", { error: (e as Error).message }));
    }
  }

  /** Starts the host as soon as a tool plugin is found (now, or when `found` is called after a load). */
  supervise(): void {
    if (this.supervising === "no") this.supervising = "waiting";
    this.found();
  }

  /** After the plugins were loaded: starts the host when `supervise` waits for a tool plugin and one is there. */
  found(): void {
    if (this.supervising === "waiting" && this.o.plugins.current) void this.start();
  }

  /** Closes the host, if one was made (its long-lived plugins end with the hub). */
  async close(): Promise<void> {
    this.closed = true;
    await this.tools?.then((host) => host.close(), () => {});
  }
}
