/**
 * Keys (protocol.md 谁能做什么, 一致性和复现): the owner makes a key of a kind for a name (shown once; the hub keeps its
 * hash) and removes one. A new key for a name replaces the old; removal ends the key's long polls and streams.
 */
import { Hono, type Context } from "hono";
import type { Hub } from "../hub.js";
import { hashKey } from "../../kernel/credentials.js";
import { isName, isOldKeyName } from "../../kernel/rules.js";
import { keyKinds, type KeyKind } from "../../kernel/types.js";
import { t, refusal } from "../../i18n/messages.js";
import { newKey } from "../home.js";
import { decide, refuse, reply, route, send } from "./endpoint.js";

/** The key kind of the path, or null when it is none of the four. */
function kindParam(c: Context): KeyKind | null {
  const kind = c.req.param("kind");
  return keyKinds.find((k) => k === kind) ?? null;
}

/** The routes of keys. */
export function keyRoutes(hub: Hub): Hono {
  const app = new Hono();
  const lang = hub.env.lang;

  route(app, hub, "keyNew", async (c, req) => {
    const kind = kindParam(c);
    const name = c.req.param("name") ?? "";
    if (kind === null) return refuse(c, 400, refusal(lang, "key.kind"));
    if (!isName(name)) return refuse(c, 400, refusal(lang, "key.name"));
    const key = newKey();
    const d = await hub.submit({ kind: "keyNew", keyHash: req.keyHash, local: false, keyKind: kind, name, newHash: hashKey(key) }).catch((e: Error) => e);
    if (d instanceof Error) return refuse(c, 503, refusal(lang, "hub.busyBecause", { error: d.message }));
    if (d.status !== 200) return send(c, hub, "keyNew", d.status, d.body);
    return reply(c, hub, "keyNew", { ok: true, kind, name, key });
  });

  // Names are checked as key names used to be, so keys made before today's rules stay removable.
  route(app, hub, "keyRemove", (c, req) => {
    const kind = kindParam(c);
    const name = c.req.param("name") ?? "";
    if (kind === null) return refuse(c, 400, refusal(lang, "key.kind"));
    if (!isOldKeyName(name)) return refuse(c, 400, refusal(lang, "key.oldName"));
    return decide(c, hub, "keyRemove", { kind: "keyRemove", keyHash: req.keyHash, local: false, keyKind: kind, name });
  });
  return app;
}
