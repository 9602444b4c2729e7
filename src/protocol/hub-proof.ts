/**
 * The hub proves it holds its home's master key before a client on the same computer sends it a key (issue 26,
 * round 5, F3). The home id a hub sends on every answer is no secret: any program on this computer (a sandboxed
 * agent shares its network) can read it from `/v1/health`, wait for the hub to stop and answer on its address with
 * it. So the client sends a random challenge on the keyless `GET /v1/health` (header `x-agent-autoloop-challenge`),
 * the hub answers `x-agent-autoloop-proof: HMAC-SHA256(k, challenge)` (base64url), `k` derived from the master key
 * with HKDF-SHA256 under its own purpose label (so the proof says nothing of run tokens or card links), and the
 * client, which runs as the owner and reads the home (agents cannot: the sandbox hides it), checks it in constant
 * time. Plain functions over node:crypto: the hub and the CLI share them.
 *
 * The proof also names the address the hub was reached at (issue 26 round 11, F11): the hub's own end of the
 * connection that carried the challenge, and the client checks it against the address it connected to. A program
 * listening elsewhere (config.json's `listen` while the hub runs on another port, another loopback address) that
 * passes the challenge on to the real hub gets back a proof of the hub's own address, not of the relay's, and the
 * client sends it no key.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

/** The request header that carries the client's challenge on `GET /v1/health`. */
export const hubChallengeHeader = "x-agent-autoloop-challenge";
/** The answer header that carries the hub's proof. */
export const hubProofHeader = "x-agent-autoloop-proof";
/** A challenge: 32 to 128 base64url characters (the client sends 32 random bytes, 43 characters). */
const challengePattern = /^[A-Za-z0-9_-]{32,128}$/;
/** HKDF's purpose label for the proof key: changing it makes every older client refuse the hub. */
const proofLabel = "agent-autoloop hub proof v2";

/** A new random challenge (32 bytes, base64url). */
export function newHubChallenge(): string {
  return randomBytes(32).toString("base64url");
}

/** The key of proofs, derived from the home's master key (HKDF-SHA256, empty salt, `proofLabel`), 32 bytes. */
export function hubProofKey(master: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), proofLabel, 32));
}

/**
 * An address as a proof names it: `<ip> <port>`, an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, a hub listening on
 * `::`) as the IPv4 address it is, lower case. Both ends see the same address for one TCP connection: the hub its
 * socket's local address, the client its socket's remote one.
 */
export function proofAddress(ip: string, port: number): string {
  return `${ip.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, "$1")} ${port}`;
}

/**
 * The hub's answer to `challenge` received at `address` (`proofAddress` of its end of the connection):
 * HMAC-SHA256(key, challenge + "\n" + address), base64url.
 * @param key from `hubProofKey`.
 * @returns null when `challenge` is not one (missing, too short or long, other characters): no proof is sent then.
 */
export function hubProof(key: Buffer, challenge: string | null | undefined, address: string): string | null {
  if (typeof challenge !== "string" || !challengePattern.test(challenge)) return null;
  return createHmac("sha256", key).update(`${challenge}\n${address}`).digest("base64url");
}

/**
 * Whether `proof` (a hub's answer header, null when absent) answers `challenge` at `address` (`proofAddress` of the
 * address the client connected to) under `key`; compared in constant time.
 */
export function hubProofValid(key: Buffer, challenge: string, address: string, proof: string | null): boolean {
  const want = hubProof(key, challenge, address);
  if (want === null || proof === null) return false;
  const a = Buffer.from(want, "utf8");
  const b = Buffer.from(proof, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}
