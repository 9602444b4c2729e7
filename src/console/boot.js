// @ts-check
/**
 * The console's first requests, started before anything else (issue 30: the first load at size). The page loads this
 * module first and it imports nothing, so it runs as soon as it arrives — while the browser still fetches, compiles
 * and runs the other modules — and takes the sign-in token of the link out of the address bar, exchanges it for the
 * session cookie (`POST /console/session`), then reads the first state (`GET /v1/state?cards=20`). app.js takes the
 * answers from here instead of asking again, so neither waits for the modules, the catalog or the other.
 */

/**
 * The session's page secret (issue 26 round 32, F32b-1): the hub's answer to the sign-in gives it, this origin's
 * storage keeps it, and every request of the console sends it in `x-aa-console`. A browser sends the cookie to every
 * port of the hub's host, where an agent may listen; it keeps this origin's storage for this origin only, and the hub
 * takes no change (an answer, a pause, a button) on the cookie without it.
 */
export const pageSecret = {
  key: "aa_console_page",
  /** This tab's copy, for a browser that refuses storage (this tab then signs in again after a reload). */
  kept: "",
  /** @returns {string} */
  get() {
    try {
      return this.kept || (localStorage.getItem(this.key) ?? "");
    } catch {
      return this.kept;
    }
  },
  /** @param {string} value */
  set(value) {
    this.kept = value;
    try {
      localStorage.setItem(this.key, value);
    } catch {
      // storage refused (a private window's quota): `kept` serves this tab
    }
  },
  /** Forgets it (sign-out). */
  clear() {
    this.kept = "";
    try {
      localStorage.removeItem(this.key);
    } catch {
      // storage refused: nothing kept there
    }
  },
  /** The header to send it in. @returns {Record<string, string>} */
  header() {
    return { "x-aa-console": this.get() };
  },
};

/** The open cards the state lists at first, newest first; "Show more" in Needs you raises it by as many. */
export const cardsPage = 20;

/** The state the first view reads: the newest `cardsPage` open cards. */
export const firstStatePath = `/v1/state?cards=${cardsPage}`;

/**
 * Exchanges the sign-in token of the link (in the URL's fragment, never sent to a server) for the session cookie:
 * the hub's answer, or null when the address carries no link. The token leaves the address bar and the history
 * before the request goes.
 * @returns {Promise<Response | null>}
 */
function signIn() {
  const m = /^#sign-in=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (!m) return Promise.resolve(null);
  history.replaceState(null, "", "/console/#/needs");
  return fetch("/console/session", {
    method: "POST", credentials: "same-origin",
    headers: { accept: "application/json", "content-type": "application/json" },
    body: JSON.stringify({ token: m[1] }),
  }).then(async (res) => {
    // The page secret, kept before the first state is read (app.js reads this answer again: a copy is read here).
    if (res.ok) {
      const page = /** @type {{ page?: unknown }} */ (await res.clone().json().catch(() => ({}))).page;
      if (typeof page === "string") pageSecret.set(page);
    }
    return res;
  });
}

/**
 * The sign-in exchange (null: no link in the address) and the first read of the state once it is done (whatever it
 * answered: without a session the state says so with a 401). A request that could not be made rejects.
 */
export const first = (() => {
  const session = signIn();
  const state = session.catch(() => null).then(() => fetch(firstStatePath, { credentials: "same-origin", headers: { accept: "application/json" } }));
  // Neither is left unhandled while app.js is still loading (it reads both).
  session.catch(() => {});
  state.catch(() => {});
  return { session, state };
})();
