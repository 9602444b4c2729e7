/**
 * Fixtures of the tool host tests: plugin folders written into a temporary root, a registry and a host over them, a
 * log that keeps its lines, and process checks that see through zombies.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync, rmSync, existsSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
import { execFile, spawnSync } from "node:child_process";
import { join } from "node:path";
import { createRequire } from "node:module";
import { ToolHost, ToolRegistry, type ToolHostOptions, type PluginOrigin } from "../src/tools/index.js";
import { leftoverCgroups } from "../src/tools/cgroup.js";
import { engine, tempDir } from "./helpers.js";

export { until, engine, tempDir } from "./helpers.js";

/** The real MCP server used as an mcp plugin: @modelcontextprotocol/server-everything's stdio entry. */
export const everythingServer = join(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json"), "..", "dist", "index.js");

/**
 * The engine's checkout and its node_modules (a link in a worktree) as read-only `binds` items of a manifest (TOML,
 * comma-separated): what a test plugin that loads the engine's modules or files by path names, since a plugin
 * sandbox's root shows the system folders only (issue 26 round 12, F12-6).
 */
export const engineBinds = [...new Set([engine, realpathSync(join(engine, "node_modules"))])].map((p) => JSON.stringify(`${p}:${p}:ro`)).join(", ");

/** The example tool plugins of this repository. */
export const examples = join(engine, "examples", "tool-plugins");

/** Cargo's registry: Debian's packaged crates when crates.io cannot be reached (as here and in CI). */
function cargoArgs(): string[] {
  const debian = "/usr/share/cargo/registry";
  return existsSync(debian) ? ["--offline", "--config", 'source.crates-io.replace-with="debian"', "--config", `source.debian.directory="${debian}"`] : [];
}

/**
 * Copies the hello-rust example into `root` and builds it there when cargo exists: built once per checkout into
 * .tmp/ (ignored by git), then put where its manifest's command points.
 * @returns false when cargo is not installed (nothing copied); throws when the build fails.
 */
export function buildHelloRust(root: string): boolean {
  if (spawnSync("cargo", ["--version"]).status !== 0) return false;
  cpSync(join(examples, "hello-rust"), join(root, "hello-rust"), { recursive: true, filter: (src) => !src.includes("/target") });
  const targetDir = join(engine, ".tmp", "hello-rust-target");
  const build = spawnSync("cargo", ["build", "--release", "--quiet", "--target-dir", targetDir, ...cargoArgs()], { cwd: join(root, "hello-rust"), encoding: "utf8" });
  if (build.status !== 0) throw new Error(`cargo build of hello-rust failed: ${build.stderr}`);
  mkdirSync(join(root, "hello-rust", "target", "release"), { recursive: true });
  cpSync(join(targetDir, "release", "hello-rust"), join(root, "hello-rust", "target", "release", "hello-rust"));
  return true;
}

/** A manifest for a sync plugin running `command args` with one tool `tool` (schema: any object), plus `extra` TOML. */
export function syncManifest(name: string, command: string, args: string[], extra = "", type = "sync"): string {
  return [
    `name = "${name}"`, `version = "0.1.0"`, `plugin_type = "${type}"`, "",
    "[entry_point]", `command = "${command}"`, `args = [${args.map((a) => JSON.stringify(a)).join(", ")}]`, "",
    extra,
  ].join("\n");
}

/** One tool in TOML, with an optional JSON Schema of parameters given as TOML lines. */
export function toolToml(name: string, parameters = ""): string {
  return `[[capabilities.tools]]\nname = "${name}"\n${parameters ? `\n[capabilities.tools.parameters]\n${parameters}\n` : ""}`;
}

/** Writes a plugin folder `<root>/<folder>` with `manifest.toml` and other files (name → content). */
export function writePlugin(root: string, folder: string, manifest: string, files: Record<string, string> = {}): string {
  const dir = join(root, folder);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "manifest.toml"), manifest);
  for (const [f, content] of Object.entries(files)) {
    mkdirSync(join(dir, f, ".."), { recursive: true });
    writeFileSync(join(dir, f), content, { mode: 0o755 });
  }
  return dir;
}

/** A Node plugin script: `handler` is the body of `function (req)` returning the response object (or undefined). */
export function nodePlugin(handler: string): string {
  return `const rl = require("node:readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const req = JSON.parse(line);
  const res = (function (req) { ${handler} })(req);
  if (res !== undefined) process.stdout.write(JSON.stringify(res) + "\\n");
});
`;
}

export interface HostFixture {
  root: string;
  registry: ToolRegistry;
  host: ToolHost;
  logs: string[];
  close(): Promise<void>;
}

/** A registry over a fresh temporary root (origin `home`) and a host with a log kept in `logs`. */
export function hostFixture(opts: Partial<ToolHostOptions> & { origin?: PluginOrigin; roots?: string[] } = {}): HostFixture {
  const root = tempDir("aa-tools-");
  const logs: string[] = [];
  const registry = new ToolRegistry([...(opts.roots ?? []).map((dir) => ({ dir, origin: "builtin" as const })), { dir: root, origin: opts.origin ?? "home" }], "en");
  const host = new ToolHost(registry, { lang: "en", log: (s, l) => logs.push(`${s} ${l}`), socketDir: join(root, ".sock"), ...opts });
  return {
    root, registry, host, logs,
    async close() {
      await host.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The pids of processes whose working directory is `dir` (a plugin runs in its folder). */
export function processesIn(dir: string): number[] {
  return readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      return readlinkSync(`/proc/${p}/cwd`) === dir;
    } catch {
      return false;
    }
  }).map(Number);
}

/** Whether `pid` is a live process (a zombie, dead but not reaped, counts as gone). */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** The pids written one per line to `file` (by a plugin that reports its processes). */
export function pidsIn(file: string): number[] {
  return existsSync(file) ? readFileSync(file, "utf8").split(/\s+/).filter(Boolean).map(Number) : [];
}

/** Whether bubblewrap works here (the sandbox tests need it; CI installs it). */
export { probeBwrap } from "../src/tools/index.js";

/** The cgroups this test process left behind (none once every call has ended; names carry the host's pid). */
export function leftovers(): string[] {
  return leftoverCgroups().filter((d) => d.includes(`-${process.pid}-`));
}

/** Runs the CLI (bin/agent-autoloop.js, English) on the home in `dir`; returns exit code, stdout and stderr lines. */
export function cliLines(args: string[], dir: string): Promise<{ code: number; out: string[]; err: string[] }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(engine, "bin", "agent-autoloop.js"), ...args], { env: { ...process.env, AGENT_AUTOLOOP_HOME: dir, AGENT_AUTOLOOP_LANG: "en" }, encoding: "utf8" }, (e, stdout, stderr) => {
      const lines = (s: string) => s.split("\n").filter((l) => l !== "");
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out: lines(stdout), err: lines(stderr) });
    });
  });
}
