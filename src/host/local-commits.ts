/**
 * Writing and reading a home's database while no hub runs (issue 14, item 9; issue 16): `init`, `key new|remove` and
 * `plugins invoke` decide their inputs with the kernel against the database itself, exactly as the hub would, so what
 * they do is recorded as facts. Callers hold the home's lock (cli/connect.ts `throughHome`): no hub starts meanwhile.
 * The CLI reaches this module through host/serve.ts, its one door to the database (tests/layers.test.ts); it is a
 * module of its own so that what only writes a home (the tests' homes, the benchmark's) loads no HTTP server or hub.
 */
import { readMasterKey, type Home } from "./home.js";
import { Store } from "./store.js";
import type { Projection } from "../kernel/view.js";
import type { Input, KeyKind } from "../kernel/types.js";
import { hashKey } from "../kernel/credentials.js";
import type { Lang } from "../i18n/messages.js";

/**
 * Decides `inputs` one after another, at the current time, in one transaction, and closes the database again.
 * @returns each input's status and body, as the hub would have answered it.
 * @throws Error when the database cannot be opened or written.
 */
export function commitLocally(home: Home, inputs: Input[], lang: Lang): { status: number; body: unknown }[] {
  const master = readMasterKey(home);
  const store = new Store({ path: home.database, master, lang });
  try {
    const now = Date.now();
    return store.commit(inputs.map((input) => ({ input, now })), { master, lang, publicUrl: null }).map((d) => ({ status: d.status, body: d.body }));
  } finally {
    store.close();
  }
}

/**
 * Reads the home's projection through `read` and closes the database again.
 * @throws Error when the database cannot be opened, or its projection cannot be rebuilt (in `lang`).
 */
export function readLocally<T>(home: Home, read: (view: Projection) => T, lang: Lang): T {
  const store = new Store({ path: home.database, master: readMasterKey(home), lang });
  try {
    return read(store.view);
  } finally {
    store.close();
  }
}

/**
 * Records keys in the home's database directly, for `init` and `key new` while no hub runs.
 * @throws Error when the store cannot be opened or a key is refused.
 */
export function registerKeysLocally(home: Home, keys: { kind: KeyKind; name: string; key: string }[], lang: Lang): void {
  const results = commitLocally(home, keys.map((k) => ({ kind: "keyNew", keyHash: null, local: true, keyKind: k.kind, name: k.name, newHash: hashKey(k.key) })), lang);
  const bad = results.find((r) => r.status !== 200);
  if (bad) throw new Error(JSON.stringify(bad.body));
}

/** Removes a key directly in the home's database (`key remove` while no hub runs). @returns whether one existed. */
export function removeKeyLocally(home: Home, kind: KeyKind, name: string, lang: Lang): boolean {
  const [r] = commitLocally(home, [{ kind: "keyRemove", keyHash: null, local: true, keyKind: kind, name }], lang);
  return (r!.body as { changed: boolean }).changed;
}
