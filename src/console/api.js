// @ts-check
/**
 * The console as a client of `/v1`, with its session cookie (HttpOnly: no script here ever sees it) and the session's
 * page secret (boot.js `pageSecret`: the hub takes no change on the cookie alone). Every answer is
 * JSON; a refusal becomes an `ApiError` worded in the reader's language from its `code` and `params` (issue 27 #2), or
 * with the hub's own words for a code this console does not know. A 401 means the session is gone (ended from the
 * CLI, its key removed, or expired): `onSignedOut` is told.
 */

import { shown } from "./i18n.js";
import { pageSecret } from "./boot.js";

/** A refusal of the hub: its status, its text, and its message id (`code`; "" from a hub that sends none). */
export class ApiError extends Error {
  /** @param {number} status @param {string} message @param {string} [code] */
  constructor(status, message, code = "") {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** @type {() => void} */
let signedOut = () => {};

/** Sets what happens when the hub says the session is gone. @param {() => void} f */
export function onSignedOut(f) {
  signedOut = f;
}

/**
 * Calls the hub. The browser sends the session cookie and, for a POST, this page's `Origin` (which the hub checks).
 * @param {"GET" | "POST" | "DELETE"} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
export async function api(method, path, body) {
  /** @type {RequestInit} */
  const init = { method, credentials: "same-origin", headers: { accept: "application/json", ...pageSecret.header() } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { ...init.headers, "content-type": "application/json" };
  }
  return answerOf(await fetch(path, init), path);
}

/**
 * The JSON of the hub's answer to a request of `path`; a refusal throws an `ApiError` (a 401 of `/v1`, or a change
 * refused for want of the page secret, tells `onSignedOut` first).
 * @param {Response} res @param {string} path @returns {Promise<any>}
 */
export async function answerOf(res, path) {
  const text = await res.text();
  /** @type {any} */
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { error: text };
  }
  // A session without this page's secret (signed in before it existed, or from storage since cleared) reads but
  // changes nothing: it is as good as signed out.
  if ((res.status === 401 && path.startsWith("/v1/")) || data?.code === "console.page") signedOut();
  if (!res.ok) throw new ApiError(res.status, shown(data ?? {}, typeof data?.error === "string" ? data.error : `HTTP ${res.status}`), typeof data?.code === "string" ? data.code : "");
  return data;
}

/** A path segment, encoded. @param {string | number} v */
export const seg = (v) => encodeURIComponent(String(v));
