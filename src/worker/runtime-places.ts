/**
 * Where runtimes of the hub's user run code from, besides PATH and its install prefixes, wherever the owner has
 * configured them (issue 26, hostile rounds 48–49): Go's module cache, GOPATH, build cache and GOROOT; npm's cache
 * (npx runs from `_npx` there) and prefix, pnpm's store, yarn's cache, cargo's target and home, rustup's, Ruby's gems,
 * Gradle's and Maven's repositories, conda's packages and environments, uv's and pipx's, and the search paths of the
 * hub's environment (`PYTHONPATH`, `PERL5LIB`, `LD_LIBRARY_PATH`…) which the owner's own programs use. A trusted
 * plugin's `go run` compiles what its module cache holds without checking it against `go.sum` again, and runs the
 * toolchain `GOTOOLCHAIN` switched to from there; with `go env -w GOPATH=~/gocode`, an agent's writable
 * `~/gocode/pkg/mod` (or a plugin's writable bind of it) chose what a trusted Go plugin and the owner's own `go build`
 * ran. Read from the hub's environment and Go's environment file, as Go reads them (a plugin process gets neither
 * GOPATH nor GOENV from the hub: its Go reads the file and the defaults); nothing is run.
 */
import { isAbsolute, join } from "node:path";
import { runtimeConfigFileBytesMax } from "../kernel/limits.js";
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
  const fromFile = file === null ? {} : parseGoEnv(headOfRegular(file, runtimeConfigFileBytesMax));
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

/**
 * Variables whose value names where a runtime keeps or finds code (a `:`-separated list for the search paths): the
 * owner's programs read them from the hub's environment (a plugin process does not get them: its runtimes read their
 * files and defaults, `configuredPlaces`).
 */
const placeVariables = [
  "npm_config_cache", "NPM_CONFIG_CACHE", "npm_config_prefix", "NPM_CONFIG_PREFIX", "npm_config_store_dir", "PNPM_HOME", "YARN_CACHE_FOLDER",
  "CARGO_HOME", "CARGO_TARGET_DIR", "RUSTUP_HOME", "GEM_HOME", "GEM_PATH", "BUNDLE_PATH", "GRADLE_USER_HOME", "COMPOSER_HOME",
  "CONDA_PKGS_DIRS", "CONDA_ENVS_PATH", "PIPX_HOME", "POETRY_VIRTUALENVS_PATH", "UV_CACHE_DIR", "UV_PYTHON_INSTALL_DIR", "UV_TOOL_DIR",
  "DENO_DIR", "BUN_INSTALL", "VOLTA_HOME", "NVM_DIR", "PYENV_ROOT", "RBENV_ROOT", "ASDF_DATA_DIR", "MISE_DATA_DIR", "JULIA_DEPOT_PATH",
  "R_LIBS", "R_LIBS_USER", "PERL5LIB", "PERLLIB", "RUBYLIB", "PYTHONPATH", "PYTHONUSERBASE", "LD_LIBRARY_PATH", "CLASSPATH",
];

/** The keys of npm's and pnpm's configuration that name where they keep or run code, with their value (quoted or not). */
const npmrcPlaces = /^[ \t]*(?:cache|prefix|store-dir|global-dir|cache-dir|state-dir|global-bin-dir|virtual-store-dir)[ \t]*=[ \t]*(?:"([^"\r\n]*)"|'([^'\r\n]*)'|([^\r\n]*?))[ \t]*$/gm;

/** cargo's `target-dir` setting (where `cargo run` builds and runs from). */
const cargoTargetDir = /^[ \t]*target-dir[ \t]*=[ \t]*["']([^"'\r\n]+)["']/gm;
/** The items of a YAML list, one per line (`  - /path`): conda's `pkgs_dirs` and `envs_dirs`. */
const yamlListItems = /^[ \t]+-[ \t]+["']?([^"'\r\n#]+?)["']?[ \t]*$/gm;

/**
 * Where a file of configuration of `home`'s user names code places, and how to find them in its text: each pattern's
 * first group is one place (`g` patterns: every match).
 */
const configFiles: readonly { file: (home: string, env: NodeJS.ProcessEnv) => string | readonly (string | undefined)[]; pattern: RegExp }[] = [
  // npm's cache (npx runs packages from its `_npx`), global prefix, pnpm's store, in the user's .npmrc.
  // pnpm reads the same keys from both (round 51, F51a-2: its cache-dir, whose dlx links it follows); a value in single
  // or double quotes as npm reads it (F51a-3).
  // Both the file the hub's environment names and the home's: `npm test` sets npm_config_userconfig to its own user's
  // file, while a plugin process (whose environment has no npm_config_*) reads the home's.
  { file: (h, e) => [e.NPM_CONFIG_USERCONFIG, e.npm_config_userconfig, join(h, ".npmrc")], pattern: npmrcPlaces },
  { file: (h, e) => join(e.XDG_CONFIG_HOME || join(h, ".config"), "pnpm", "rc"), pattern: npmrcPlaces },
  { file: (h) => join(h, ".yarnrc.yml"), pattern: /^[ \t]*(?:cacheFolder|globalFolder)[ \t]*:[ \t]*["']?([^"'\r\n]+?)["']?[ \t]*$/gm },
  { file: (h, e) => join(e.CARGO_HOME || join(h, ".cargo"), "config.toml"), pattern: cargoTargetDir },
  { file: (h, e) => join(e.CARGO_HOME || join(h, ".cargo"), "config"), pattern: cargoTargetDir },
  { file: (h, e) => join(e.XDG_CONFIG_HOME || join(h, ".config"), "uv", "uv.toml"), pattern: /^[ \t]*(?:cache-dir|python-install-dir|tool-dir)[ \t]*=[ \t]*["']([^"'\r\n]+)["']/gm },
  { file: (h) => join(h, ".m2", "settings.xml"), pattern: /<localRepository>\s*([^<\s][^<]*?)\s*<\/localRepository>/g },
  // conda's package cache (linked into every environment) and environments: the items of pkgs_dirs and envs_dirs.
  { file: (h) => join(h, ".condarc"), pattern: yamlListItems },
  { file: (h, e) => join(e.XDG_CONFIG_HOME || join(h, ".config"), "conda", ".condarc"), pattern: yamlListItems },
];

/**
 * The places `configuredPlaces` names for a user whose environment is `env` and home `home`: every entry of
 * `placeVariables` in `env` and every place `configFiles` name (`~/` and `${HOME}`/`$HOME` taken from `home`), absolute
 * ones only, existing or not. Never throws (an unreadable or irregular file counts as empty).
 */
export function configuredPlaces(env: NodeJS.ProcessEnv, home: string): string[] {
  const out: string[] = [];
  const take = (value: string) => {
    const v = value.trim().replace(/^~(?=\/)/, home).replace(/\$\{HOME\}|\$HOME\b/g, home);
    if (isAbsolute(v)) out.push(v);
  };
  for (const name of placeVariables) for (const entry of (env[name] ?? "").split(":")) if (entry) take(entry);
  for (const { file, pattern } of configFiles) {
    for (const path of new Set([file(home, env)].flat())) {
      if (path) for (const m of headOfRegular(path, runtimeConfigFileBytesMax).matchAll(pattern)) take(m[1] ?? m[2] ?? m[3] ?? "");
    }
  }
  return [...new Set(out)];
}

/** Every place of `goPlaces` and `configuredPlaces`. */
export function runtimePlaces(env: NodeJS.ProcessEnv, home: string): string[] {
  return [...new Set([...goPlaces(env, home), ...configuredPlaces(env, home)])];
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
