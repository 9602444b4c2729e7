/**
 * Where runtimes of the hub's user run code from, besides PATH and its install prefixes, wherever the owner has
 * configured them (issue 26, hostile round 48, F48a-1/2): Go's module cache, GOPATH, build cache and GOROOT. A trusted
 * plugin's `go run` compiles what its module cache holds without checking it against `go.sum` again, and runs the
 * toolchain `GOTOOLCHAIN` switched to from there; with `go env -w GOPATH=~/gocode`, an agent's writable
 * `~/gocode/pkg/mod` (or a plugin's writable bind of it) chose what a trusted Go plugin and the owner's own `go build`
 * ran. Read from the hub's environment and Go's environment file, as Go reads them (a plugin process gets neither
 * GOPATH nor GOENV from the hub: its Go reads the file and the defaults); nothing is run.
 */
import { isAbsolute, join } from "node:path";
import { goEnvFileBytesMax } from "../kernel/limits.js";
import { headOfRegular } from "./files.js";

/** The Go variables that name where Go reads code: every GOPATH entry, the module and build caches, the toolchain. */
const goPlaceNames = ["GOPATH", "GOMODCACHE", "GOCACHE", "GOROOT"] as const;

/**
 * Go's places for a user whose environment is `env` and home `home`: the values of `goPlaceNames` in `env` and in
 * Go's environment file (`$GOENV`, else `$XDG_CONFIG_HOME/go/env` or `~/.config/go/env`; `GOENV=off`: none), every
 * GOPATH entry with its `pkg/mod`, and the defaults (`~/go`, `~/go/pkg/mod`). Absolute paths only (Go ignores the
 * others), existing or not. Never throws: an unreadable file counts as empty, and so does one that is not a regular
 * file (a FIFO is not waited on).
 */
export function goPlaces(env: NodeJS.ProcessEnv, home: string): string[] {
  const file = env.GOENV === "off" ? null : env.GOENV || join(env.XDG_CONFIG_HOME || join(home, ".config"), "go", "env");
  const fromFile = file === null ? {} : parseGoEnv(headOfRegular(file, goEnvFileBytesMax));
  const out = [join(home, "go"), join(home, "go", "pkg", "mod")];
  for (const source of [env, fromFile] as const) {
    for (const name of goPlaceNames) {
      const value = source[name];
      if (!value) continue;
      const entries = name === "GOPATH" ? value.split(":") : [value];
      for (const e of entries) if (isAbsolute(e)) out.push(e, ...(name === "GOPATH" ? [join(e, "pkg", "mod")] : []));
    }
  }
  return [...new Set(out)];
}

/** The `KEY=VALUE` lines of a Go environment file (a value in double quotes taken as written inside them). */
function parseGoEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^\s*([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!.trim().replace(/^"(.*)"$/, "$1");
  }
  return out;
}
