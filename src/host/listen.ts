/**
 * Listen addresses ("HOST:PORT", "[v6]:PORT") and the URLs clients use for them. Its own module so that the CLI finds
 * its hub without loading the hub (start-up time: src/cli/main.ts).
 */
import { t, type Lang } from "../i18n/messages.js";

/** Splits "HOST:PORT" (or "[v6]:PORT"). @throws Error naming the value when malformed (worded in `lang`). */
export function parseListen(listen: string, lang: Lang = "en"): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(listen.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(t(lang, "serve.listen", { value: JSON.stringify(listen) }));
  return { host: (m[1] ?? m[2])!, port };
}

/** The URL clients use for a listen address. */
export function urlOf(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** The URL a client on this computer uses for a listen address: the wildcard addresses are reached on loopback. */
export function localUrlOf(host: string, port: number): string {
  return urlOf(host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host, port);
}
