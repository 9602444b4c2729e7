/**
 * Who is calling, and may they (protocol.md 谁能做什么): the permission table every step of `decide` checks first, and
 * that the shell's middleware checks before it reads a body (src/host/routes/endpoint.ts).
 */
import type { Ctx } from "./context.js";
import type { Projection } from "./view.js";
import type { Caller, KeyKind } from "./types.js";
import { isReply, refuse, type Refusal, type Reply } from "./reply.js";
import { said, type Said } from "../i18n/messages.js";

/** Looks up who holds a key, by the SHA-256 of the bearer key. */
export function callerOf(view: Projection, keyHash: string | null): Caller | undefined {
  if (!keyHash) return undefined;
  const k = view.get("keys", keyHash);
  return k ? { kind: k.kind, name: k.name } : undefined;
}

/** A kind of key as refusals name it: a text of its own, so each client words it in its language (issue 27 #2). */
const kindName = (kind: KeyKind): Said => said(`key.kindName.${kind}`);

/** Kinds of key as refusals list them, `a/b/c`: each kind a text of its own. */
const kindNames = ([first, ...rest]: readonly KeyKind[]): Said =>
  rest.reduce((list, kind) => said("key.kindName.or", { list, kind: kindName(kind) }), kindName(first!));

/**
 * The permission table (protocol.md 谁能做什么): the caller must hold one of `kinds`.
 * @returns the caller, or the 401 (no key, an unknown key) or 403 (another kind) refusal.
 */
export function authorize(c: Ctx, keyHash: string | null, kinds: readonly KeyKind[]): Caller | Refusal {
  if (!keyHash) return refuse(401, c.say("auth.missing"));
  const caller = callerOf(c.view, keyHash);
  if (!caller) return refuse(401, c.say("auth.unknown"));
  if (!kinds.includes(caller.kind)) {
    return refuse(403, c.say("auth.kind", { actual: kindName(caller.kind), expected: kindNames(kinds) }));
  }
  return caller;
}

/** `f` for the owner's key; the refusal for any other caller. */
export function asOwner<B>(c: Ctx, keyHash: string | null, f: (who: Caller) => Reply<B>): Reply<B> {
  const who = authorize(c, keyHash, ["owner"]);
  return isReply(who) ? who : f(who);
}
