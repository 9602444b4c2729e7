/**
 * How a plugin nobody has trusted yet is asked for its tools (issue 26 round 11, F5). A manifest that lists no tools
 * (sync, async) and an MCP server have their tools asked of the plugin itself, which runs its code: `plugins
 * inspect`, `GET /v1/tools` (the console's Plugins view) and an agent's own `tools/list` ask before any card was
 * shown, and an agent can write such a plugin for its owner to add. So, until the owner trusts the plugin at its
 * current files ("always allow" at this digest: the host's `trusted`) or runs it on purpose (`plugins inspect --run`),
 * that listing runs in the review sandbox whatever the manifest says: the plugin's own `[sandbox]` replaced by the
 * strictest one — no network, a read-only root, no binds — so nothing of the hub user's home, no hidden path (the
 * hub's home with its keys), no host socket (the root shows the system folders only, sandbox-root.ts: round 12,
 * F12-6), nothing of serve's environment passed to it (an MCP plugin's `env_passthrough` emptied); what it writes
 * vanishes with the sandbox. A plugin that cannot answer there (it needs the network, a file of the home, or one
 * outside its folder, the system folders and its PATH's installs to start), or a computer where no sandbox can be
 * made, leaves its tools unknown
 * until then (the host's `unknown`, with why). A call the hub allowed runs the plugin as its manifest says.
 */
import type { RunnablePlugin } from "./runner.js";
import type { SandboxSpec } from "./types.js";

/** The review sandbox: no network, read-only root, no binds, no limits that need a cgroup (works wherever bwrap does). */
export const reviewSandbox: SandboxSpec = {
  memoryBytes: null, cpus: null, pids: null, read_only_root: true, cap_drop: [], network: "none", binds: [], mounts: [],
};

/** `p` as the review sandbox runs it: its manifest's `[sandbox]` replaced, an MCP server given nothing of serve's environment and never restarted. */
export function reviewed(p: RunnablePlugin): RunnablePlugin {
  const m = p.manifest;
  return {
    ...p,
    manifest: {
      ...m, sandbox: reviewSandbox,
      mcp: m.mcp ? { ...m.mcp, autostart: false, restart_policy: "never", env_passthrough: { allow: [], deny: [] } } : null,
    },
  };
}
