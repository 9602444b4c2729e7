/**
 * What of a program's install a sandbox shows from a home (issue 26 round 27, F27b-1): a PATH folder in the hub user's
 * home is shown with the parts its programs need, named by layout, never the folder above it as a whole — `~/.local`
 * holds `share/keyrings` and `state/` sockets, `~/.cargo` holds `credentials.toml`, and those were shown because they
 * were the parent of `~/.local/bin` and `~/.cargo/bin`. Used by the agent sandbox (worker/home-view.ts) and the
 * plugin sandbox (tools/sandbox-root.ts) alike.
 */
import { basename, dirname, join } from "node:path";

/**
 * The folders of the install a program found in PATH folder `folder` (absolute) needs: the folder; beside a `bin` or
 * `sbin` its `lib` and `libexec` (a Python's stdlib, node's global modules, git's helpers); for a version manager's
 * `shims` (pyenv, rbenv, asdf) the manager's whole folder, whose versions and own code the shims run. Paths as given
 * (the caller resolves links and keeps those that exist).
 */
export function installParts(folder: string): string[] {
  const base = basename(folder);
  if (base === "shims") return [folder, dirname(folder)];
  if (base === "bin" || base === "sbin") return [folder, join(dirname(folder), "lib"), join(dirname(folder), "libexec")];
  return [folder];
}
