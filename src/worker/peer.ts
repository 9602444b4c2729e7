/**
 * Whether the process at the other end of a run's tools socket is one of the run's (issue 26, finding 14): the
 * socket of a run answers only the run's own processes, so that an agent outside any sandbox (`"sandbox": false`),
 * which can see every run's folder, cannot use another run's tools (approvals, audit and trust of that run).
 *
 * Node gives no peer credentials (SO_PEERCRED) of a unix socket, and /proc/net/unix does not say which socket is whose
 * peer. So the peer proves itself, as the relay does (tool-relay.ts), on each new connection:
 *
 *   worker → `{"jsonrpc":"2.0","method":"agent-autoloop/prove","params":{"challenge":"<32 hex>"}}`
 *   relay  → sets its own command line (`process.title`) to `agent-autoloop tools mcp proof <challenge>`, then
 *            `{"jsonrpc":"2.0","method":"agent-autoloop/proved"}`
 *   worker → looks for a process showing exactly that command line among the run's processes — the launches'
 *            supervisors and everything under them (Linux /proc, parent by parent; a sandboxed agent's processes too,
 *            seen from outside its namespaces) — and answers `agent-autoloop/admitted` (MCP follows), or
 *            `agent-autoloop/refused` with why, and closes.
 *
 * Only the peer reads the challenge (the kernel delivers it on that connection alone) and only a process can change its
 * own command line (short of tracing it), so a process outside the run — another run's agent, whatever it mimics —
 * cannot make one of the run's show it. What this does not stop: a process of the hub's user outside every sandbox
 * that traces the run's processes, or writes into its relay's pipes through /proc, acts as the run; such a process can
 * read the hub's keys as well (README: what `"sandbox": false` gives up). Where /proc is missing (not Linux) the worker
 * cannot look, and admits the connection after the exchange.
 */
import { procCmdline, procTable } from "../common/proc.js";

/** The notification that asks the peer to prove itself, with `params.challenge`. */
export const proveMethod = "agent-autoloop/prove";
/** The peer's answer once its command line shows the proof. */
export const provedMethod = "agent-autoloop/proved";
/** The worker's answer to a peer of the run: MCP follows on the connection. */
export const admittedMethod = "agent-autoloop/admitted";
/** The worker's answer to any other peer, with `params.message`; the connection ends. */
export const refusedMethod = "agent-autoloop/refused";
/** What the relay's command line shows to prove it holds a challenge: this, then the challenge. */
export const proofTitlePrefix = "agent-autoloop tools mcp proof ";
/** How long a new connection has to prove itself, in ms. */
export const bridgeProofTimeoutMs = 5_000;
/** The longest line a new connection may send before it is admitted, in bytes. */
export const bridgeProofLineMaxBytes = 4096;

/** Whether this system lets the worker look at other processes (`/proc`): Linux. */
export const canCheckPeers = process.platform === "linux";

/** The parent of each process now (Linux /proc; pid → ppid). Processes that end while it is read are left out. */
function parents(): Map<number, number> {
  return new Map(procTable().map((p) => [p.pid, p.ppid]));
}

/** The processes of `roots` and every process under them now (Linux /proc). Roots that are gone are left out. */
export function processTree(roots: readonly number[]): Set<number> {
  const table = parents();
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of table) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const tree = new Set<number>();
  const queue = roots.filter((r) => table.has(r));
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    if (tree.has(pid)) continue;
    tree.add(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** Whether a process of `tree` shows exactly `title` as its command line (as `process.title` sets it). */
export function shownBy(tree: ReadonlySet<number>, title: string): boolean {
  // A process that ended meanwhile has no command line.
  for (const pid of tree) if (procCmdline(pid)?.[0] === title) return true;
  return false;
}

/** One line of the exchange: a JSON-RPC notification. */
export function notification(method: string, params?: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", method, ...(params ? { params } : {}) }) + "\n";
}
