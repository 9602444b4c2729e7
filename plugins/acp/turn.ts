/**
 * What the `acp` bridge keeps from the `session/update` notifications of one launch (protocol.md ACP 和 MCP):
 * the tool calls announced so far (their kind and locations decide permission requests that carry only an id),
 * the agent's text messages of this turn, and the cost the agent reported.
 *
 * Messages: chunks with a `messageId` belong to the message of that id; without one, a thought, a tool call, or a
 * tool update that completed or failed ends the message being written. Updates that arrive before the prompt is
 * sent (the history a `session/load` replays) are never part of the reply.
 */
import type { ToolFacts } from "./permission.js";
import type { StepLine } from "./lines.js";

/** A session update as the bridge reads it (ACP `SessionUpdate`; unknown fields and kinds are ignored). */
export interface UpdateLike {
  sessionUpdate?: unknown;
  content?: unknown;
  messageId?: unknown;
  toolCallId?: unknown;
  kind?: unknown;
  title?: unknown;
  status?: unknown;
  locations?: unknown;
  cost?: unknown;
}

interface Message { id: string | null; text: string }

function locationsOf(v: unknown): { path: string }[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter((l): l is { path: string } => !!l && typeof (l as { path?: unknown }).path === "string").map((l) => ({ path: l.path }));
}

/** The per-launch record. One instance per bridge process; not shared. */
export class TurnLog {
  private readonly tools = new Map<string, ToolFacts>();
  private prompting = false;
  private messages: Message[] = [];
  /** A boundary was seen since the last chunk without a messageId. */
  private boundary = true;
  /** The last cost the agent reported (USD) before and after the prompt was sent. */
  private costBefore: number | null = null;
  private costAfter: number | null = null;

  /** From now on agent text belongs to this turn's reply. */
  beginPrompt(): void {
    this.prompting = true;
    this.messages = [];
    this.boundary = true;
  }

  /** Messages of this turn already given as transcript steps (`steps`). */
  private messagesTold = 0;

  /**
   * The transcript steps (issue 30) an update makes, once the prompt was sent (a replayed history is not this run's):
   * the messages written before a tool call, the call (its title as the tool, its raw input), and its result when it
   * completed or failed (its text content). `final` (the turn ended) gives the messages not yet told.
   */
  steps(u: UpdateLike | null | undefined, final = false): StepLine[] {
    if (!this.prompting) return [];
    const out: StepLine[] = [];
    const call = u?.sessionUpdate === "tool_call" || (u?.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed"));
    if (call || final) {
      // The last message of the turn is its reply: told by the `end` line, not here.
      const upTo = final ? this.messages.length - 1 : this.messages.length;
      for (; this.messagesTold < upTo; this.messagesTold++) out.push({ kind: "message", text: this.messages[this.messagesTold]!.text });
    }
    if (!u || typeof u.toolCallId !== "string") return out;
    const raw = (u as { rawInput?: unknown }).rawInput;
    if (u.sessionUpdate === "tool_call") out.push({ kind: "tool", tool: typeof u.title === "string" ? u.title : u.toolCallId, id: u.toolCallId, input: raw === undefined ? "" : JSON.stringify(raw) ?? "" });
    else if (call) {
      const content = Array.isArray(u.content) ? u.content : [];
      const text = content.map((c: { content?: { type?: string; text?: string } }) => (c?.content?.type === "text" ? c.content.text ?? "" : "")).filter(Boolean).join("\n");
      out.push({ kind: "toolResult", id: u.toolCallId, text, ...(u.status === "failed" ? { error: true } : {}) });
    }
    return out;
  }

  /** Takes one `session/update` notification's `update`. Never throws on odd input. */
  update(u: UpdateLike | null | undefined): void {
    if (!u || typeof u !== "object") return;
    switch (u.sessionUpdate) {
      case "tool_call":
      case "tool_call_update": {
        if (typeof u.toolCallId === "string") {
          const known = this.tools.get(u.toolCallId) ?? {};
          const locations = locationsOf(u.locations);
          this.tools.set(u.toolCallId, {
            kind: typeof u.kind === "string" ? u.kind : known.kind,
            title: typeof u.title === "string" ? u.title : known.title,
            locations: locations && locations.length > 0 ? locations : known.locations,
          });
        }
        if (u.sessionUpdate === "tool_call" || u.status === "completed" || u.status === "failed") this.boundary = true;
        return;
      }
      case "agent_thought_chunk":
        this.boundary = true;
        return;
      case "agent_message_chunk": {
        if (!this.prompting) return;
        const c = u.content as { type?: unknown; text?: unknown } | undefined;
        if (!c || c.type !== "text" || typeof c.text !== "string") return;
        const id = typeof u.messageId === "string" ? u.messageId : null;
        const last = this.messages.at(-1);
        const same = last !== undefined && (id !== null ? last.id === id : !this.boundary && last.id === null);
        if (same) last.text += c.text;
        else this.messages.push({ id, text: c.text });
        this.boundary = false;
        return;
      }
      case "usage_update": {
        const cost = u.cost as { amount?: unknown; currency?: unknown } | null | undefined;
        if (!cost || typeof cost.amount !== "number" || !Number.isFinite(cost.amount) || cost.currency !== "USD") return;
        if (this.prompting) this.costAfter = cost.amount;
        else this.costBefore = cost.amount;
        return;
      }
      default:
        return;
    }
  }

  /** What the agent announced about a tool call, merged over its updates (empty when unknown). */
  toolFacts(toolCallId: unknown): ToolFacts {
    return (typeof toolCallId === "string" && this.tools.get(toolCallId)) || {};
  }

  /** The last agent text message of this turn, or null when it wrote none (or only whitespace). */
  reply(): string | null {
    const last = this.messages.at(-1);
    return last && last.text.trim() ? last.text : null;
  }

  /**
   * This launch's cost in USD, or undefined when the agent reported none during the turn. Agents report a running
   * total (claude-agent-acp 0.49.0: since the adapter process started); what it showed before the prompt is
   * subtracted, and a total that went down reports nothing.
   */
  cost(): number | undefined {
    if (this.costAfter === null) return undefined;
    const d = this.costAfter - (this.costBefore ?? 0);
    return d >= 0 ? d : undefined;
  }
}
