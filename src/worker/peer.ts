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
 * cannot make one of the run's show it; nor can one that enters the run's sandbox namespaces and leaves an orphan
 * there (re-parented to the sandbox's init: see `processTree`). What this does not stop: a process of the hub's user outside every sandbox
 * that traces the run's processes, or writes into its relay's pipes through /proc, acts as the run; such a process can
 * read the hub's keys as well (README: what `"sandbox": false` gives up). Where /proc is missing (not Linux) the worker
 * cannot look, and admits the connection after the exchange.
 */
import type { Socket } from "node:net";
import { procCmdline, procNsPids, procTable } from "../common/proc.js";

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

/** One process as `processTree` needs it: its parent, when it started (clock ticks after boot). */
interface ProcInfo {
  ppid: number;
  start: number;
}

/** Every process now (Linux /proc, read by common/proc.ts; pid → parent and start). Processes that end while it is read are left out. */
function processes(): Map<number, ProcInfo> {
  return new Map(procTable().map((p) => [p.pid, { ppid: p.ppid, start: Number(p.start) }]));
}

/**
 * Whether `pid` is the init of a pid namespace of its own (pid 1 there: the last `NSpid` of its status is 1), as
 * bubblewrap's `--unshare-pid` makes one for a sandboxed agent. False when it cannot be read (it ended).
 */
function namespaceInit(pid: number): boolean {
  const ids = procNsPids(pid) ?? [];
  return ids.length > 1 && ids[ids.length - 1] === 1;
}

/**
 * The processes of `roots` and every process under them now (Linux /proc). Roots that are gone are left out.
 *
 * Under the init of a pid namespace (a sandbox's), only its first child — the one it started, the sandboxed command —
 * and what is under it count (issue 26 round 2 #7): any later child of that init is an orphan re-parented to it, and
 * a process from outside the sandbox that entered its namespaces (`setns`, which a process of the hub's user without a
 * sandbox can do) gets there only that way, so it would otherwise pass as the run's. The price: a sandboxed agent's
 * own orphaned (double-forked) processes do not count as the run's either; a relay an agent's CLI starts as its child
 * does. Outside a sandbox an orphan leaves the tree (it goes to the system's init) anyway.
 */
export function processTree(roots: readonly number[]): Set<number> {
  const table = processes();
  const children = new Map<number, number[]>();
  for (const [pid, p] of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const tree = new Set<number>();
  const queue = roots.filter((r) => table.has(r));
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    if (tree.has(pid)) continue;
    tree.add(pid);
    const under = children.get(pid) ?? [];
    if (under.length > 1 && namespaceInit(pid)) {
      // The first child of a namespace's init: the earliest started (the lowest pid among those started together).
      const first = under.reduce((a, b) => {
        const pa = table.get(a)!, pb = table.get(b)!;
        return pb.start < pa.start || (pb.start === pa.start && b < a) ? b : a;
      });
      queue.push(first);
    } else {
      queue.push(...under);
    }
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

/**
 * The first line a new connection sends (without its "\n") and what came after it, the connection then paused; null
 * when it closes, sends more than `bridgeProofLineMaxBytes` without a line end, or sends nothing whole within
 * `bridgeProofTimeoutMs`.
 */
export function firstLine(socket: Socket): Promise<{ line: string; rest: Buffer } | null> {
  return new Promise((resolve) => {
    let got = Buffer.alloc(0);
    const done = (v: { line: string; rest: Buffer } | null) => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("close", onClose);
      socket.pause();
      resolve(v);
    };
    const onData = (d: Buffer) => {
      got = Buffer.concat([got, d]);
      const nl = got.indexOf(10);
      if (nl >= 0) done({ line: got.subarray(0, nl).toString("utf8"), rest: got.subarray(nl + 1) });
      else if (got.length > bridgeProofLineMaxBytes) done(null);
    };
    const onClose = () => done(null);
    const timer = setTimeout(() => done(null), bridgeProofTimeoutMs);
    socket.on("data", onData);
    socket.on("close", onClose);
  });
}

/** Whether `line` is a JSON-RPC message whose method is `method`. */
export function isNotification(line: string, method: string): boolean {
  try {
    const m = JSON.parse(line) as { method?: unknown } | null;
    return typeof m === "object" && m !== null && m.method === method;
  } catch {
    return false;
  }
}
