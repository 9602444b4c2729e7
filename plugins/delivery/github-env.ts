/**
 * The delivery plugin's GitHub client as its commands are given it by the hub (protocol.md 交付插件): the address and
 * token from the environment, refusals in the owner's language.
 */
import { t, type Lang } from "agent-autoloop/sdk";
import { GitHub } from "./github.js";

/**
 * The client the plugin's process is given by its environment: `GITHUB_API_URL` (default `https://api.github.com`;
 * https, or `http://127.0.0.1` for a test's fake GitHub) and `GH_TOKEN` or `GITHUB_TOKEN`.
 * @throws Error (in `lang`) when the token is missing or the address is neither.
 */
export function gitHubFromEnv(env: Readonly<Record<string, string | undefined>>, lang: Lang): GitHub {
  const base = (env.GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, "");
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new Error(t(lang, "delivery.apiUrl"));
  }
  const local = url.protocol === "http:" && url.hostname === "127.0.0.1";
  if ((url.protocol !== "https:" && !local) || url.username || url.password || url.search || url.hash) throw new Error(t(lang, "delivery.apiUrl"));
  const token = env.GH_TOKEN || env.GITHUB_TOKEN;
  if (!token) throw new Error(t(lang, "delivery.noToken"));
  return new GitHub(base, token);
}
