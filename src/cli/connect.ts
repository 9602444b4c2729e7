/**
 * How the CLI reaches this home's hub without ever sending a key to anything else, and how it writes the database
 * when no hub runs (issue 14, item 9). Before any key goes out, a keyless `GET /v1/health` must answer with this
 * home's id (the `x-agent-autoloop-home` header) and, when this home has its master key here (a hub of this
 * computer), with the proof of that key for a fresh challenge (protocol/hub-proof.ts): the id is no secret, and any
 * program here, an agent included, can answer with it on the hub's address while the hub is down (issue 26 round 5,
 * F3). A home without master.key (a CLI given a hub elsewhere) checks the id only; while no hub runs, the CLI holds the home's lock (the one `serve`
 * takes) for as long as it writes, so a hub cannot start under it and it never writes behind a running hub.
 */
import { existsSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { HubClient, HubError, ProtocolError } from "../protocol/client.js";
import { hubChallengeHeader, hubProofHeader, hubProofKey, hubProofValid, newHubChallenge, proofAddress } from "../protocol/hub-proof.js";
import { describeError } from "../protocol/describe.js";
import { readConfig, readMasterKey, type Home } from "../host/home.js";
import { homeIdHeader, lastHubUrl, lockHeldBy, readHomeId, recordedHubUrl, tryLockHome } from "../host/lock.js";
import { localUrlOf, parseListen } from "../host/listen.js";
import { checkHomeFiles } from "../host/home-files.js";
import { t, type Lang } from "../i18n/messages.js";
import { CliError } from "./print.js";

export { CliError };

/** How long the CLI waits for a hub's keyless `GET /v1/health` answer (ms). */
export const hubProbeTimeoutMs = 3_000;

/**
 * Where this home's hub may be, in this order: the URL the running hub recorded in `hub.json` (only while the process
 * that wrote it is alive), then `AGENT_AUTOLOOP_URL` when set, else `listen` of config.json. Port 0 is no address to
 * try (`listen: "127.0.0.1:0"` picks a free port when the hub starts): only the record can say where that hub is.
 */
export function hubCandidates(h: Home, env: NodeJS.ProcessEnv, lang: Lang = "en"): string[] {
  const out: string[] = [];
  const recorded = recordedHubUrl(h);
  if (recorded) out.push(recorded);
  if (env.AGENT_AUTOLOOP_URL) out.push(env.AGENT_AUTOLOOP_URL.replace(/\/+$/, ""));
  else {
    const { host, port } = parseListen(readConfig(h).listen, lang);
    if (port !== 0) out.push(localUrlOf(host, port));
  }
  return [...new Set(out)].filter((u) => !/^https?:\/\/(\[[^\]]*\]|[^/:]*):0+(\/|$)/.test(u));
}

/**
 * What a candidate answered: the home id it named, and whether it proved it holds this home's master key (null:
 * not asked, this home has no master.key here); or why it could not be reached.
 */
type Probe = { url: string; home: string | null; proven: boolean | null } | { url: string; error: string };

/** The key that checks a hub's proof: derived from this home's master key; null when the home has none here. */
function proofKeyOf(h: Home): Buffer | null {
  return existsSync(h.masterKey) ? hubProofKey(readMasterKey(h)) : null;
}

/**
 * Asks `url` which home it serves, with a fresh challenge when `key` is given; sends no key and follows no redirect.
 * The proof is checked against the address this request really connected to (the socket's remote end, after any name
 * lookup): a proof the real hub gave a relay names the hub's address, not this one (issue 26 round 11, F11).
 */
function probe(url: string, key: Buffer | null): Promise<Probe> {
  const challenge = newHubChallenge();
  return new Promise((done) => {
    let target: URL;
    try {
      target = new URL("/v1/health", url);
    } catch (e) {
      return done({ url, error: (e as Error).message });
    }
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(target, { method: "GET", timeout: hubProbeTimeoutMs, headers: key ? { [hubChallengeHeader]: challenge } : {} }, (res) => {
      const socket = res.socket;
      const at = socket.remoteAddress && socket.remotePort ? proofAddress(socket.remoteAddress, socket.remotePort) : null;
      const header = (name: string) => (typeof res.headers[name] === "string" ? (res.headers[name] as string) : null);
      res.destroy();
      done({ url, home: header(homeIdHeader), proven: key ? at !== null && hubProofValid(key, challenge, at, header(hubProofHeader)) : null });
    });
    // The same words fetch said for its timeout: what `cli.hubDown` quotes.
    req.on("timeout", () => req.destroy(new Error("The operation was aborted due to timeout")));
    req.on("error", (e) => done({ url, error: (e as Error & { cause?: Error }).cause?.message ?? e.message }));
    req.end();
  });
}

/**
 * Finds this home's hub: the first candidate (see `hubCandidates`) that answers with this home's id and, when this
 * home's master key is here, proves it holds it (see `probe`).
 * @returns its URL; or, when there is none, the error to show, the reason in a few words, and whether nothing answered
 * (`down`; else a server of another home, one that does not say, or one that names this home without the proof —
 *   `impostor` — answered); `starting`: the pid of a hub that holds the lock and has not recorded its address yet.
 * @throws Error naming master.key when it is there but unreadable or not a key.
 */
export async function findHub(
  h: Home, lang: Lang, env: NodeJS.ProcessEnv = process.env,
): Promise<{ url: string } | { failure: CliError; reason: string; down: boolean; starting?: number; impostor?: true }> {
  const ours = readHomeId(h, true);
  const key = proofKeyOf(h);
  const probes: Probe[] = [];
  const recorded = recordedHubUrl(h);
  for (const url of hubCandidates(h, env, lang)) {
    const p = await probe(url, key);
    if ("home" in p && p.home === ours && p.proven !== false) return { url };
    probes.push(p);
    // The home's running hub recorded this address and did not answer (busy, stopping): never another address then,
    // where something else may listen (issue 26 round 11, F11: an agent stalled the hub and held config's address).
    if (url === recorded && "error" in p) {
      const text = t(lang, "cli.hubBusy", { url, error: p.error });
      return { failure: new CliError(text), reason: text, down: false };
    }
  }
  // Said before anything else: a server that claims this home without the proof holds the hub's address.
  const impostor = probes.find((p) => "home" in p && p.home === ours);
  if (impostor) {
    const text = t(lang, "cli.hubUnproven", { url: impostor.url, ours });
    return { failure: new CliError(text), reason: text, down: false, impostor: true };
  }
  const stranger = probes.find((p): p is Extract<Probe, { home: string | null }> => "home" in p);
  // A hub of another home answers on config.json's `listen` (the address tried when AGENT_AUTOLOOP_URL is not set) and
  // no hub holds this home's lock: this home's hub is not running, which is what the user must hear first (a stale
  // hub.json says where it was last). An AGENT_AUTOLOOP_URL naming another home's hub stays a mistake to fix.
  if (stranger?.home && !env.AGENT_AUTOLOOP_URL && lockHeldBy(h)?.by !== "hub") {
    const last = lastHubUrl(h);
    const reason = [last ? t(lang, "cli.hubLastAt", { url: last }) : null,
      t(lang, "cli.otherHomeThere", { url: stranger.url, theirs: stranger.home, ours })].filter((x) => x !== null).join("; ");
    return { failure: new CliError(t(lang, "cli.ownHubDown", { home: h.dir, reason })), reason, down: true };
  }
  if (stranger) {
    const text = stranger.home
      ? t(lang, "cli.otherHome", { url: stranger.url, theirs: stranger.home, ours, home: h.dir })
      : t(lang, "cli.noHomeId", { url: stranger.url, ours, home: h.dir });
    return { failure: new CliError(text), reason: text, down: false };
  }
  // No record yet while a hub holds the lock: it is starting (it records its address once it listens).
  const held = recordedHubUrl(h) ? null : lockHeldBy(h);
  if (held?.by === "hub") {
    const text = t(lang, "cli.hubStarting", { pid: held.pid });
    return { failure: new CliError(text), reason: text, starting: held.pid, down: true };
  }
  const down = probes[0] as Extract<Probe, { error: string }> | undefined;
  if (!down) {
    const text = t(lang, "cli.noHubPortZero");
    return { failure: new CliError(text), reason: text, down: true };
  }
  return { failure: new CliError(t(lang, "cli.hubDown", { url: down.url, error: down.error })), reason: t(lang, "cli.unreachable", { url: down.url, error: down.error }), down: true };
}

/** This home's hub URL. @throws CliError when no candidate is this home's hub (naming both homes on a mismatch). */
export async function hubUrl(h: Home, lang: Lang): Promise<string> {
  const found = await findHub(h, lang);
  if ("failure" in found) throw found.failure;
  return found.url;
}

/**
 * Runs an HTTP call, turning "cannot connect" into a sentence that says what to do.
 * @throws CliError with the hub's refusal, or saying the hub cannot be reached.
 */
export async function call<T>(client: HubClient, f: (c: HubClient) => Promise<T>, lang: Lang): Promise<T> {
  try {
    return await f(client);
  } catch (e) {
    if (e instanceof CliError) throw e; // the command's own check (a card id that is not a number, …)
    // The hub words its refusals in its own language, and the protocol fixes some in Chinese: the command line
    // says each in its user's language, from the refusal's message id and params (issue 27 #2).
    if (e instanceof HubError) throw new CliError(e.shownIn(lang));
    if (e instanceof ProtocolError) throw new CliError(t(lang, "cli.badAnswer", { url: client.url, problem: describeError(e.problem, lang) }));
    const cause = ((e as Error & { cause?: Error }).cause?.message ?? (e as Error).message);
    throw new CliError(t(lang, "cli.hubDown", { url: client.url, error: cause }));
  }
}

/**
 * Changes keys in this home: through its hub when one runs, else in the database itself while holding the home's
 * lock, so that no hub can start in between.
 * @param viaHub the change as a call to the running hub (with the owner key)
 * @param here the change made in the database
 * @throws CliError when another process holds the lock (another CLI changing keys, a hub still starting) but no hub
 *   of this home answers: nothing is written then;
 *   Error naming the file when one of the home's files is a folder (home-files.ts).
 */
export function changeKeys<T>(h: Home, lang: Lang, viaHub: (c: HubClient) => Promise<T>, here: () => T): Promise<T> {
  return throughHome(h, lang, "keys", viaHub, here);
}

/** How long a CLI write waits for another CLI that holds the home's lock for a moment (`plugins invoke`), in ms. */
export const cliLockWaitMs = 3_000;

/**
 * Does something to this home's records through its hub when one runs, else in the database itself while holding
 * the home's lock as `as` (see `changeKeys`). `plugins invoke` waits up to `cliLockWaitMs` for another CLI holding
 * the lock for a moment; `keys` does not.
 * @throws CliError as `changeKeys`.
 */
export async function throughHome<T>(h: Home, lang: Lang, as: "keys" | "invoke", viaHub: (c: HubClient) => Promise<T>, here: () => T | Promise<T>): Promise<T> {
  checkHomeFiles(h, lang);
  const until = Date.now() + (as === "invoke" ? cliLockWaitMs : 0);
  for (;;) {
    const lock = tryLockHome(h, as);
    if ("release" in lock) {
      try {
        return await here();
      } finally {
        lock.release();
      }
    }
    if (lock.by === "keys" || lock.by === "invoke") {
      if (Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      throw new CliError(t(lang, lock.by === "keys" ? "cli.keysBusy" : "cli.invokeBusy", { pid: lock.holder ?? "?" }));
    }
    const found = await findHub(h, lang);
    if ("failure" in found) {
      throw new CliError(found.starting !== undefined
        ? t(lang, "cli.hubStartingUnwritten", { pid: found.starting })
        : t(lang, "cli.lockedNoHub", { pid: lock.holder ?? "?", reason: found.reason }));
    }
    return call(new HubClient(found.url, readConfig(h).owner), viaHub, lang);
  }
}
