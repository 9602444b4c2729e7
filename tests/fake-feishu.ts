/**
 * A local fake of the Feishu endpoints the official SDK calls, on 127.0.0.1 port 0: the tenant token
 * (`/open-apis/auth/v3/tenant_access_token/internal`), message create with `uuid` deduplication and patch
 * (`/open-apis/im/v1/messages`), and the long connection — `/callback/ws/endpoint`, then a real WebSocket server
 * speaking the SDK's protobuf frames (`pbbp2.Frame`, encoded here by hand so the fake does not borrow the SDK's codec).
 * It records every request, can fail the next create or patch, and can press a button of a card.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

export const fakeAppId = "cli_0123456789abcdef";
export const fakeTenantToken = "t-fake-tenant-token";

/** One header of a frame. */
export interface FrameHeader { key: string; value: string }
/** The SDK's long-connection frame (`pbbp2.Frame`): method 0 is control (ping, pong), 1 data (events, callbacks). */
export interface Frame { SeqID: number; LogID: number; service: number; method: number; headers: FrameHeader[]; payload?: Buffer }

function varint(n: number): number[] {
  const out: number[] = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return out;
}

function bytesField(field: number, b: Buffer): Buffer {
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...varint(b.length)]), b]);
}

/** Encodes a frame in protobuf wire format (fields 1–4 varints, 5 repeated headers, 8 the payload). */
export function encodeFrame(f: Frame): Buffer {
  const parts: Buffer[] = [Buffer.from([1 << 3, ...varint(f.SeqID), 2 << 3, ...varint(f.LogID), 3 << 3, ...varint(f.service), 4 << 3, ...varint(f.method)])];
  for (const h of f.headers) parts.push(bytesField(5, Buffer.concat([bytesField(1, Buffer.from(h.key)), bytesField(2, Buffer.from(h.value))])));
  if (f.payload) parts.push(bytesField(8, f.payload));
  return Buffer.concat(parts);
}

/** Decodes protobuf wire format into field number → values (varints as numbers, length-delimited as buffers). */
function fields(b: Buffer): Map<number, (number | Buffer)[]> {
  const out = new Map<number, (number | Buffer)[]>();
  let i = 0;
  const readVarint = () => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = b[i++]!;
      v |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return Number(v);
    }
  };
  while (i < b.length) {
    const tag = readVarint();
    const value = (tag & 7) === 0 ? readVarint() : (tag & 7) === 2 ? (() => { const n = readVarint(); i += n; return b.subarray(i - n, i); })() : null;
    if (value === null) throw new Error(`unexpected wire type ${tag & 7}`);
    out.set(tag >> 3, [...(out.get(tag >> 3) ?? []), value]);
  }
  return out;
}

/** Decodes a frame the SDK sent. */
export function decodeFrame(b: Buffer): Frame {
  const f = fields(b);
  const num = (n: number) => (f.get(n)?.[0] as number | undefined) ?? 0;
  const headers = (f.get(5) ?? []).map((h) => {
    const hf = fields(h as Buffer);
    return { key: String(hf.get(1)?.[0] ?? ""), value: String(hf.get(2)?.[0] ?? "") };
  });
  return { SeqID: num(1), LogID: num(2), service: num(3), method: num(4), headers, payload: f.get(8)?.[0] as Buffer | undefined };
}

/** What the fake answers instead of the next normal answer: an HTTP status and body, or `drop` (do it, then lose the answer). */
export type Failure = { status: number; body: unknown } | "drop";

/**
 * A request body as the Feishu channel sends one (tenant token, long-connection endpoint, message create and patch):
 * the fields the fake and the tests read. No body is `{}`; one that is not a JSON object is kept as `{ text }`.
 */
export interface FeishuBody { app_id?: unknown; app_secret?: unknown; AppID?: unknown; AppSecret?: unknown; uuid?: string; receive_id?: string; msg_type?: string; content?: string; text?: string }

/** A recorded request. */
export interface Recorded { method: string; path: string; query: Record<string, string>; auth: string | undefined; body: FeishuBody }

export interface FakeFeishu {
  url: string;
  /** Every request, in order. */
  requests: Recorded[];
  /** Posted messages by id: the uuid, receiver and the card JSON as it is now. */
  messages: Map<string, { uuid: string | undefined; receiveId: string | undefined; card: unknown }>;
  /** The next create or patch gets this instead. */
  failNext: { create?: Failure; patch?: Failure };
  /** Resolves when a long connection is open (the newest, if several). */
  connected(): Promise<void>;
  /** Presses a button over the long connection; resolves with what the SDK answered (`{ code, result }`). */
  press(messageId: string, value: unknown, operator: Record<string, string>): Promise<{ code: number; result: unknown }>;
  close(): Promise<void>;
}

/** Starts the fake; `appSecret` is the only secret it accepts. */
export async function startFakeFeishu(appSecret: string): Promise<FakeFeishu> {
  const requests: Recorded[] = [];
  const messages: FakeFeishu["messages"] = new Map();
  const failNext: FakeFeishu["failNext"] = {};
  const byUuid = new Map<string, string>();
  const sockets: WebSocket[] = [];
  const waitingForSocket: (() => void)[] = [];
  const answers = new Map<string, (f: Frame) => void>();
  let seq = 0;
  let port = 0;

  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  /** The failure planned for this kind of request, used up. */
  const take = (kind: "create" | "patch"): Failure | undefined => {
    const f = failNext[kind];
    delete failNext[kind];
    return f;
  };

  const server: Server = createServer((req, res) => {
    let data = "";
    req.on("data", (d) => (data += d));
    req.on("end", () => {
      const u = new URL(req.url!, "http://x");
      let body: FeishuBody = {};
      try {
        const parsed: unknown = data ? JSON.parse(data) : {};
        body = typeof parsed === "object" && parsed !== null ? (parsed as FeishuBody) : { text: data };
      } catch {
        body = { text: data };
      }
      requests.push({ method: req.method!, path: u.pathname, query: Object.fromEntries(u.searchParams), auth: req.headers.authorization, body });
      const authorized = req.headers.authorization === `Bearer ${fakeTenantToken}`;
      if (req.method === "POST" && u.pathname === "/open-apis/auth/v3/tenant_access_token/internal") {
        if (body?.app_id === fakeAppId && body?.app_secret === appSecret) return json(res, 200, { code: 0, msg: "ok", tenant_access_token: fakeTenantToken, expire: 7200 });
        return json(res, 400, { code: 10014, msg: "app secret invalid" });
      }
      if (req.method === "POST" && u.pathname === "/callback/ws/endpoint") {
        if (body?.AppID !== fakeAppId || body?.AppSecret !== appSecret) return json(res, 200, { code: 514, msg: "auth failed", data: {} });
        return json(res, 200, {
          code: 0, msg: "ok",
          data: { URL: `ws://127.0.0.1:${port}/ws?fpid=1&device_id=dev1&service_id=7`, ClientConfig: { PingInterval: 120, ReconnectCount: -1, ReconnectInterval: 1, ReconnectNonce: 0 } },
        });
      }
      if (!authorized) return json(res, 400, { code: 99991663, msg: "Invalid access token for authorization." });
      if (req.method === "POST" && u.pathname === "/open-apis/im/v1/messages") {
        const f = take("create");
        if (f && f !== "drop") return json(res, f.status, f.body);
        // Feishu posts one message per uuid: a repeat answers with the message already posted.
        let id = body.uuid ? byUuid.get(body.uuid) : undefined;
        if (!id) {
          id = `om_${++seq}`;
          if (body.uuid) byUuid.set(body.uuid, id);
          messages.set(id, { uuid: body.uuid, receiveId: body.receive_id, card: JSON.parse(body.content!) });
        }
        if (f === "drop") return req.socket.destroy(); // posted, but the answer is lost
        return json(res, 200, { code: 0, msg: "success", data: { message_id: id, msg_type: body.msg_type, chat_id: "oc_chat1" } });
      }
      const patch = /^\/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(u.pathname);
      if (req.method === "PATCH" && patch) {
        const f = take("patch");
        if (f && f !== "drop") return json(res, f.status, f.body);
        const m = messages.get(patch[1]!);
        if (!m) return json(res, 400, { code: 230001, msg: "message not found" });
        m.card = JSON.parse(body.content!);
        if (f === "drop") return req.socket.destroy();
        return json(res, 200, { code: 0, msg: "success", data: {} });
      }
      json(res, 404, { code: 404, msg: "not found" });
    });
  });

  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    if (!req.url?.startsWith("/ws?")) return socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.push(ws);
      ws.on("message", (raw: Buffer) => {
        const frame = decodeFrame(raw);
        const id = frame.headers.find((h) => h.key === "message_id")?.value;
        if (frame.method === 1 && id && answers.has(id)) answers.get(id)!(frame);
      });
      for (const w of waitingForSocket.splice(0)) w();
    });
  });

  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    messages,
    failNext,
    connected: () => (sockets.some((s) => s.readyState === s.OPEN) ? Promise.resolve() : new Promise((r) => waitingForSocket.push(r))),
    async press(messageId, value, operator) {
      const socket = [...sockets].reverse().find((s) => s.readyState === s.OPEN);
      if (!socket) throw new Error("no long connection");
      const n = ++seq;
      const event = {
        schema: "2.0",
        header: { event_id: `ev-${n}`, event_type: "card.action.trigger", create_time: String(Date.now() * 1000), token: "verification", app_id: fakeAppId, tenant_key: "tenant-1" },
        event: {
          operator: { tenant_key: "tenant-1", ...operator }, token: `c-${n}`,
          action: { value, tag: "button" }, host: "im_message",
          context: { open_message_id: messageId, open_chat_id: "oc_chat1" },
        },
      };
      const frame: Frame = {
        SeqID: n, LogID: n, service: 7, method: 1,
        headers: [{ key: "type", value: "event" }, { key: "message_id", value: `msg-${n}` }, { key: "sum", value: "1" }, { key: "seq", value: "0" }, { key: "trace_id", value: `trace-${n}` }],
        payload: Buffer.from(JSON.stringify(event)),
      };
      const answered = new Promise<Frame>((resolve) => answers.set(`msg-${n}`, resolve));
      socket.send(encodeFrame(frame));
      const reply = await answered;
      const p = JSON.parse(reply.payload!.toString()) as { code: number; data?: string };
      return { code: p.code, result: p.data ? JSON.parse(Buffer.from(p.data, "base64").toString()) : null };
    },
    async close() {
      for (const s of sockets) s.terminate();
      wss.close();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
