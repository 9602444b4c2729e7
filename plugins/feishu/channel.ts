/**
 * The built-in `feishu` channel (protocol.md 通道; plugins.md 通道插件), on the official SDK `@larksuiteoapi/node-sdk`.
 *
 * - A new card is sent as an interactive card message (see `card.ts`) to one chat or person. The send carries an
 *   idempotency key (`uuid`) made of the card id and its creation time, never its version, so a send repeated after a
 *   lost answer — by this channel at once, or by the hub a minute later — posts one message (protocol.md 通道).
 * - A later version of a card (answered, closed, updated) patches the message the hub hands back as `ref`. When Feishu
 *   will not patch a card that has ended, another message is sent, and only that one's key carries the version.
 * - Button presses arrive over the SDK's long connection (WSClient: the channel connects out, no public port). A press
 *   becomes `hub.answer(card, { choice, by, ref })`; the hub checks `by` against the channel's `answerers` in
 *   rules.json and `ref` against the delivered message, and the presser sees a toast saying what was recorded or why
 *   nothing was. The answered card then comes back from the hub as a new version and is patched.
 * - A Feishu error becomes `hub.failed(card, version, "Feishu <call>: code <code>: <msg>")`; nothing stops the hub.
 *   A long connection that fails for good (a wrong app secret, for example) is logged and started again 30 s later;
 *   cards keep going out meanwhile. Only options that cannot work make the channel throw (restarted after 30 s).
 *
 * Options (config.json `channels.<name>`): `appId` (`cli_` + 16 hex digits), `receiveId` (a chat `oc_…`, a person
 * `ou_…` / `on_…` / user id, or an email), `receiveIdType` (`chat_id`, `open_id`, `union_id`, `user_id`, `email`;
 * inferred from `oc_`, `ou_`, `on_` and `@`), `answererIdType` (`open_id` default, `user_id`, `union_id`: which id of
 * the presser is the answer's `by`), `domain` (`feishu` default, `lark`, or a base URL such as a local test server).
 * The app secret comes from secrets.env, `AGENT_AUTOLOOP_CHANNEL_SECRET_<CHANNEL>`, else from `appSecret`; it never
 * reaches a log line or a fact (the SDK's own logging is switched off, since it may print request bodies).
 */
import * as lark from "@larksuiteoapi/node-sdk";
import { channelSecretVariable, eachCard, langFromEnv, t, type Card, type ChannelArgs, type Lang } from "agent-autoloop/sdk";
import { answererIdTypes, choiceLabel, feishuCard, readPress, type AnswererIdType } from "./card.js";

/** A long connection the SDK gave up on is started again after this long, in ms (the channel goes on sending). */
export const longConnectionRetryMs = 30_000;
/** The longest one Feishu API call may take, token included, in ms; after that its answer counts as lost. */
export const feishuCallTimeoutMs = 15_000;
/** How many times one send is made when its answer is lost (the same `uuid` each time, so Feishu posts it once). */
export const feishuSendAttemptsMax = 2;
/** The longest `uuid` Feishu takes on a new message, in characters (im/v1/messages create). */
export const feishuUuidMaxChars = 50;

/** Whom the messages go to, as Feishu's `receive_id_type` names it. */
export type ReceiveIdType = "chat_id" | "open_id" | "union_id" | "user_id" | "email";
const receiveIdTypes: readonly ReceiveIdType[] = ["chat_id", "open_id", "union_id", "user_id", "email"];

/** The channel's options, checked. */
export interface FeishuOptions {
  appId: string;
  appSecret: string;
  receiveId: string;
  receiveIdType: ReceiveIdType;
  answererIdType: AnswererIdType;
  /** The SDK's domain: Feishu, Lark, or a base URL without a trailing slash. */
  domain: lark.Domain | string;
}

const knownOptions = new Set(["name", "appId", "appSecret", "receiveId", "receiveIdType", "answererIdType", "domain"]);

/**
 * Checks the options from config.json (and the secret from secrets.env, which wins over `appSecret`).
 * @throws Error naming the option that is missing, unknown or malformed, in `lang`; `answerers` in config.json is
 *   refused with a pointer to rules.json, where the hub enforces it.
 */
export function parseOptions(options: Record<string, unknown>, secret: string | null, lang: Lang): FeishuOptions {
  const name = String(options.name ?? "feishu");
  for (const key of Object.keys(options)) {
    if (key === "answerers") throw new Error(t(lang, "feishu.answerersInConfig", { name }));
    if (!knownOptions.has(key)) throw new Error(t(lang, "feishu.optionUnknown", { field: key }));
  }
  const text = (key: string, required: boolean): string | null => {
    const v = options[key];
    if (v === undefined || v === null) {
      if (required) throw new Error(t(lang, "feishu.optionRequired", { field: key }));
      return null;
    }
    if (typeof v !== "string" || v.trim() === "") throw new Error(t(lang, "feishu.optionInvalid", { field: key, what: "string" }));
    return v.trim();
  };
  const oneOf = <T extends string>(key: string, values: readonly T[]): T | null => {
    const v = text(key, false);
    if (v !== null && !values.includes(v as T)) throw new Error(t(lang, "feishu.optionInvalid", { field: key, what: values.join(" | ") }));
    return v as T | null;
  };
  const appId = text("appId", true)!;
  // The SDK's long connection silently does nothing for any other form of app id.
  if (!/^cli_[0-9a-fA-F]{16}$/.test(appId)) throw new Error(t(lang, "feishu.optionInvalid", { field: "appId", what: "cli_ + 16 hex digits" }));
  const appSecret = secret ?? text("appSecret", false);
  if (!appSecret) throw new Error(t(lang, "feishu.noSecret", { variable: channelSecretVariable(name) }));
  const receiveId = text("receiveId", true)!;
  const receiveIdType = oneOf("receiveIdType", receiveIdTypes) ?? inferReceiveIdType(receiveId);
  if (receiveIdType === null) throw new Error(t(lang, "feishu.optionRequired", { field: "receiveIdType" }));
  const domainText = text("domain", false) ?? "feishu";
  let domain: lark.Domain | string;
  if (domainText === "feishu") domain = lark.Domain.Feishu;
  else if (domainText === "lark") domain = lark.Domain.Lark;
  else if (/^https?:\/\/[^\s/?#]+\/?$/.test(domainText)) domain = domainText.replace(/\/$/, "");
  else throw new Error(t(lang, "feishu.optionInvalid", { field: "domain", what: "feishu | lark | http(s)://host[:port]" }));
  return { appId, appSecret, receiveId, receiveIdType, answererIdType: oneOf("answererIdType", answererIdTypes) ?? "open_id", domain };
}

/** The id type Feishu's own prefixes give away: `oc_` a chat, `ou_` an open_id, `on_` a union_id, `@` an email. */
function inferReceiveIdType(id: string): ReceiveIdType | null {
  if (id.startsWith("oc_")) return "chat_id";
  if (id.startsWith("ou_")) return "open_id";
  if (id.startsWith("on_")) return "union_id";
  return id.includes("@") ? "email" : null;
}

/**
 * The idempotency key of a card's message: `aa-<card id>-<creation time in ms, base 36>`, plus `-v<version>` for
 * the extra message that replaces an ended card Feishu would not patch (protocol.md 通道). The creation time keeps
 * two hubs that share an app from taking each other's card numbers for repeats. At most 50 characters.
 */
export function sendUuid(card: Pick<Card, "id" | "at">, version?: number): string {
  const born = Date.parse(card.at);
  const uuid = `aa-${card.id}-${Number.isFinite(born) ? born.toString(36) : "0"}${version === undefined ? "" : `-v${version}`}`;
  // Card ids and versions are safe integers, so this holds; a longer key would be refused by Feishu on every send.
  if (uuid.length > feishuUuidMaxChars) throw new Error(`feishu channel: the message key ${uuid} is longer than ${feishuUuidMaxChars} characters`);
  return uuid;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: string; lost: boolean };

/** Feishu's own words in an error are cut to this many code points, so a report stays within the hub's limits. */
export const feishuMessageMaxCodepoints = 300;
const clip = (s: string) => [...s].slice(0, feishuMessageMaxCodepoints).join("");

/** An answer's `code` and `msg` as one line, or null when the body is not a Feishu answer at all. */
function codeAndMsg(body: unknown): string | null {
  const b = body as { code?: unknown; msg?: unknown } | null;
  return b !== null && typeof b === "object" && typeof b.code === "number" ? `code ${b.code}: ${clip(String(b.msg ?? ""))}` : null;
}

/**
 * One Feishu API call, at most `feishuCallTimeoutMs` long. Its failure is one line naming the call — the API's
 * `code` and `msg`, the HTTP status, or the network error — and never holds a secret; `lost` says no answer came back.
 */
async function feishuCall<T>(what: string, call: () => Promise<T>): Promise<Outcome<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof timedOut>((resolve) => { timer = setTimeout(() => resolve(timedOut), feishuCallTimeoutMs); });
  const failure = (problem: string, lost = false): Outcome<T> => ({ ok: false, error: `Feishu ${what}: ${problem}`, lost });
  try {
    const value = await Promise.race([call(), timeout]);
    if (value === timedOut) return failure(`no answer within ${feishuCallTimeoutMs / 1000} s`, true);
    if ((value as { code?: unknown } | null)?.code === 0) return { ok: true, value };
    return failure(codeAndMsg(value) ?? `not a Feishu answer: ${clip(JSON.stringify(value) ?? String(value))}`);
  } catch (e) {
    const err = e as { isAxiosError?: boolean; config?: { url?: unknown }; response?: { status?: number; data?: unknown }; message?: string };
    // The SDK asks for the tenant token inside the call; say so when that is what Feishu refused.
    if (String(err.config?.url ?? "").includes("/open-apis/auth/")) what = `${what} (tenant token)`;
    if (err.response) return failure(codeAndMsg(err.response.data) ?? `HTTP ${err.response.status}`);
    return failure(clip(err.message ?? String(e)), err.isAxiosError === true);
  } finally {
    clearTimeout(timer);
  }
}
const timedOut = Symbol("timed out");

/** The SDK logs whole requests and errors (app secret included) on its own; all of that is dropped. */
const quiet = { error() {}, warn() {}, info() {}, debug() {}, trace() {} };

/**
 * The channel (plugins.md 通道插件): checks its options, opens the long connection for button presses, then sends and
 * patches cards until `signal` aborts. Returns then; throws only for options that cannot work (see `parseOptions`).
 */
export default async function feishuChannel({ hub, options, log, signal, secret }: ChannelArgs): Promise<void> {
  const lang = langFromEnv(process.env);
  const o = parseOptions(options, secret, lang);
  // One cache per run of the channel: the SDK's default one is shared by the whole process.
  const cache = new lark.DefaultCache();
  const sdk = { appId: o.appId, appSecret: o.appSecret, domain: o.domain, logger: quiet, loggerLevel: lark.LoggerLevel.error };
  const client = new lark.Client({ ...sdk, cache });

  /** Sends a new message; a send whose answer was lost is made again with the same uuid. */
  async function send(content: string, uuid: string): Promise<{ ref: string } | { error: string }> {
    for (let attempt = 1; ; attempt++) {
      const r = await feishuCall("send", () => client.im.v1.message.create({
        params: { receive_id_type: o.receiveIdType }, data: { receive_id: o.receiveId, msg_type: "interactive", content, uuid },
      }));
      if (r.ok) return r.value.data?.message_id ? { ref: r.value.data.message_id } : { error: "Feishu send: the answer has no message_id" };
      if (!r.lost || attempt >= feishuSendAttemptsMax) return { error: r.error };
    }
  }

  async function deliver(card: Card): Promise<void> {
    const content = JSON.stringify(feishuCard(card, lang));
    let result: { ref: string } | { error: string };
    if (card.ref === null) {
      result = await send(content, sendUuid(card));
    } else {
      const ref = card.ref;
      const patched = await feishuCall("update", () => client.im.v1.message.patch({ path: { message_id: ref }, data: { content } }));
      if (patched.ok) result = { ref };
      else if (card.state === "open") result = { error: patched.error };
      else {
        const sent = await send(content, sendUuid(card, card.version));
        result = "ref" in sent ? sent : { error: `${patched.error}; ${sent.error}` };
      }
    }
    if ("ref" in result) {
      await hub.delivered(card.id, card.version, result.ref).catch((e: Error) => log(`card ${card.id}: delivered: ${e.message}`));
    } else {
      log(`card ${card.id} v${card.version}: ${result.error}`);
      await hub.failed(card.id, card.version, result.error).catch((e: Error) => log(`card ${card.id}: failed: ${e.message}`));
    }
  }

  /** A button press (`card.action.trigger`): relayed to the hub; the toast tells the presser what happened. */
  async function press(event: unknown): Promise<{ toast: { type: "success" | "error"; content: string } }> {
    const toast = (type: "success" | "error", content: string) => ({ toast: { type, content } });
    const p = readPress(event, o.answererIdType);
    if ("problem" in p) return toast("error", t(lang, p.problem, { idType: o.answererIdType }));
    try {
      const answered = await hub.answer(p.card, { choice: p.choice, by: p.by, ref: p.ref }) as { card?: Pick<Card, "kind" | "options"> };
      return toast("success", t(lang, "feishu.recorded", { choice: answered.card ? choiceLabel(answered.card, p.choice, lang) : String(p.choice) }));
    } catch (e) {
      // The hub refused (HubError carries its status): not an answerer, another message, already answered, …
      if (typeof (e as { status?: unknown }).status === "number") return toast("error", t(lang, "feishu.refused", { error: (e as Error).message }));
      log(`answer to card ${p.card}: ${(e as Error).message}`);
      return toast("error", t(lang, "feishu.hubDown"));
    }
  }

  // The long connection carries the button presses. When it fails for good (a wrong app secret, a refused app), the
  // SDK gives up; it is started again 30 s later, while cards keep going out.
  let retry: NodeJS.Timeout | undefined;
  const dispatcher = new lark.EventDispatcher({ logger: quiet, loggerLevel: lark.LoggerLevel.error, cache })
    .register({ "card.action.trigger": press });
  const ws: lark.WSClient = new lark.WSClient({
    ...sdk,
    onReady: () => log("long connection ready"),
    onReconnecting: () => log("long connection lost; reconnecting"),
    onReconnected: () => log("long connection back"),
    onError: (e: Error) => {
      log(t(lang, "feishu.longConnection", { error: e.message, seconds: longConnectionRetryMs / 1000 }));
      if (!signal.aborted) retry = setTimeout(() => void ws.start({ eventDispatcher: dispatcher }), longConnectionRetryMs);
    },
  });
  try {
    await ws.start({ eventDispatcher: dispatcher });
    await eachCard(hub, log, signal, deliver);
  } finally {
    clearTimeout(retry);
    ws.close({ force: true });
  }
}
