/**
 * `requires.network` (spec declarative-plugins.md §2; issue 18): the hosts a plugin's HTTP tools may reach — a host
 * name (`api.example.com`), its subdomains (`*.example.com`: any name ending in `.example.com`, not the name itself),
 * an IPv4 address or a bracketed IPv6 one, each with an optional `:port` (without one, any port). Names compare
 * without case, in their ASCII (punycode) form as URLs carry them; addresses in the URL parser's canonical form.
 */

/** The exact error of a request to a host the plugin did not declare (the contract fixes it, in every language). */
export function networkNotDeclared(host: string): string {
  return `network not declared: ${host}`;
}

/** A parsed `requires.network` entry. */
interface HostPattern {
  /** The host as a URL writes it (lowercase; IPv6 in brackets), without `*.` for a wildcard. */
  host: string;
  wildcard: boolean;
  /** null: any port. */
  port: number | null;
}

const parsed = new Map<string, HostPattern | null>();

/** Parses one entry (cached); null when it is no host (the schema refuses those before this is asked). */
function parse(entry: string): HostPattern | null {
  if (parsed.has(entry)) return parsed.get(entry)!;
  let result: HostPattern | null = null;
  const m = /^(\*\.)?(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(entry);
  if (m) {
    try {
      const host = new URL(`http://${m[2]}`).hostname;
      const port = m[3] === undefined ? null : Number(m[3]);
      if (port === null || port <= 65_535) result = { host, wildcard: m[1] !== undefined, port };
    } catch {
      result = null;
    }
  }
  // Entries come from plugin manifests: a few hundred at most, and the cache starts over if it ever grows past that.
  if (parsed.size > 10_000) parsed.clear();
  parsed.set(entry, result);
  return result;
}

/** The port a URL reaches (its own, else its scheme's default). */
function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

/** Whether `url`'s host (and port) is one `network` declares. */
export function hostAllowed(url: URL, network: readonly string[]): boolean {
  const host = url.hostname.toLowerCase();
  const port = portOf(url);
  return network.some((entry) => {
    const p = parse(entry);
    if (!p || (p.port !== null && p.port !== port)) return false;
    return p.wildcard ? host.endsWith(`.${p.host}`) : host === p.host;
  });
}
