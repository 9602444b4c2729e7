/**
 * Issue 26 round 2, findings 1 and 2: procfs inside both sandboxes. bubblewrap's `--proc` leaves /proc/sys writable;
 * as root (no user namespace for the agent, uid 0 mapped to 0 for a plugin) a sandboxed process wrote
 * /proc/sys/kernel/core_pattern, and the kernel then ran its core-dump helper as full root outside every namespace,
 * which read master.key. The kind: any procfs path that changes the host (sysctls, sysrq, irq affinity, bus and
 * file-system knobs) and the host-wide information files container runtimes mask. Both sandboxes make them read-only
 * or unreadable (a nodev /dev/null over the file, an empty tmpfs over the folder), as runc does. Inside each sandbox a real process opens them for writing (never writing a byte) and reads
 * the masked ones; the command lines are checked on any user.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { baseRules, hubFixture, tempDir, untilLatestRun } from "./helpers.js";
import { sandboxKit } from "./sandbox-kit.js";
import { hostFixture, probeBwrap, syncManifest, toolToml, writePlugin, nodePlugin } from "./tools-helpers.js";
import { sandboxArgv } from "../src/worker/sandbox.js";
import { bwrapArgv } from "../src/tools/sandbox.js";

const kit = sandboxKit();
const { removed } = kit;

/** procfs files whose write changes the host (those this kernel has). */
const hostKnobs = ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sys/vm/drop_caches", "/proc/sysrq-trigger", "/proc/irq/default_smp_affinity"].filter((p) => existsSync(p));
/** Host-wide information files a container runtime shows empty (those this kernel has). */
const maskedFiles = ["/proc/keys", "/proc/timer_list", "/proc/kcore", "/proc/latency_stats", "/proc/sched_debug", "/proc/timer_stats"].filter((p) => existsSync(p));
const refused = process.getuid?.() === 0 ? "EROFS" : "EACCES";

/**
 * The probe (Node, in the sandbox): opens each path of `knobs` for writing (no O_TRUNC, no byte written), reads each of
 * `masked`, and prints the JSON `{open: {path: "opened" | code}, read: {path: text | code}}`.
 */
const probe = (knobs: string[], masked: string[]) => `
const fs = require("fs");
const open = {}, read = {};
for (const p of ${JSON.stringify(knobs)}) { try { fs.closeSync(fs.openSync(p, fs.constants.O_WRONLY)); open[p] = "opened"; } catch (e) { open[p] = e.code; } }
for (const p of ${JSON.stringify(masked)}) { try { read[p] = fs.readFileSync(p, "utf8"); } catch (e) { read[p] = e.code; } }
`;

/** The read-only binds and masks both command lines carry, after `--proc /proc`, for this computer's /proc. */
function expectedMasks(): string[] {
  const ro = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"].filter((p) => existsSync(p)).flatMap((p) => ["--ro-bind", p, p]);
  const files = maskedFiles.flatMap((p) => ["--ro-bind", "/dev/null", p]);
  const dirs = ["/proc/acpi", "/proc/asound", "/proc/scsi"].filter((p) => existsSync(p)).flatMap((p) => ["--tmpfs", p, "--remount-ro", p]);
  return [...ro, ...files, ...dirs];
}

/** The arguments after `--proc /proc` up to the next argument that is not a /proc mask. */
function masksIn(argv: string[]): string[] {
  const at = argv.findIndex((a, i) => a === "--proc" && argv[i + 1] === "/proc");
  assert.ok(at >= 0, "the command line mounts a /proc");
  const out: string[] = [];
  for (let i = at + 2; i < argv.length; ) {
    const n = argv[i] === "--ro-bind" ? 3 : argv[i] === "--tmpfs" ? 2 : argv[i] === "--remount-ro" ? 2 : 0;
    const last = argv[i + n - 1];
    if (n === 0 || !last?.startsWith("/proc/")) break;
    out.push(...argv.slice(i, i + n));
    i += n;
  }
  return out;
}

test("issue 26 r2 #1/#2: both sandboxes' command lines make /proc/sys, sysrq-trigger, irq, bus and fs read-only and mask kcore, keys, timer_list and the like", () => {
  const agent = sandboxArgv({ bwrap: "bwrap", hide: "/nonexistent-home", show: [], cwd: "/" }, ["true"], null).argv;
  assert.deepEqual(masksIn(agent), expectedMasks());
  const plugin = bwrapArgv({ bwrap: "bwrap", sandbox: { network: "none", read_only_root: false, cap_drop: [], binds: [], mounts: [], memoryBytes: null, cpus: null, pids: null }, pluginDir: "/nonexistent-plugin", hidden: [], hostBinds: [], argv: ["true"] }).argv;
  assert.deepEqual(masksIn(plugin), expectedMasks());
  assert.ok(expectedMasks().includes("/proc/sys"));
});

test("issue 26 r2 #1 (reported case): a sandboxed agent cannot open /proc/sys/kernel/core_pattern (or another host knob) for writing; masked files cannot be read", async (t) => {
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const cwd = realpathSync(tempDir("aa-proc-cwd-"));
  removed.push(cwd);
  const script = probe(hostKnobs, maskedFiles) + `fs.writeFileSync("proc.json", JSON.stringify({ open, read })); console.log("Done: probed");`;
  const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command: [process.execPath, "-e", script] } }, rules: [{ ...baseRules.rules[0], cwd }] };
  const fx = await hubFixture(rules);
  kit.hub(fx);
  const w = kit.worker(fx);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  assert.equal((await untilLatestRun(fx, "done", 30_000)).runs[0].summary, "Done: probed");
  assert.deepEqual(JSON.parse(readFileSync(join(cwd, "proc.json"), "utf8")), {
    open: Object.fromEntries(hostKnobs.map((p) => [p, refused])),
    read: Object.fromEntries(maskedFiles.map((p) => [p, "EACCES"])),
  });
});

test("issue 26 r2 #2 (reported case): a sandboxed tool plugin cannot open /proc/sys/kernel/core_pattern (or another host knob) for writing; masked files cannot be read", async (t) => {
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const h = hostFixture();
  try {
    const main = nodePlugin(probe(hostKnobs, maskedFiles) + "return { jsonrpc: \"2.0\", id: req.id, result: { open, read } };");
    for (const [name, extra] of [["userns", ""], ["rootro", "read_only_root = true\n"], ["net", 'network = "host"\n']] as const) {
      writePlugin(h.root, name, syncManifest(name, "node", ["main.js"], `[sandbox]\n${extra}\n${toolToml("go")}`), { "main.js": main });
    }
    h.registry.rescan();
    for (const name of ["userns", "rootro", "net"]) {
      const r = await h.host.call(`${name}.go`, {}, { sessionKey: "s" });
      assert.equal(r.status, "ok", JSON.stringify(r));
      assert.deepEqual((r as { result: unknown }).result, {
        open: Object.fromEntries(hostKnobs.map((p) => [p, refused])),
        read: Object.fromEntries(maskedFiles.map((p) => [p, "EACCES"])),
      }, name);
    }
  } finally {
    await h.close();
  }
});
