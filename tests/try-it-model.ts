/**
 * What the fake model of `npm run fake-model` says (README "Try it with Claude Code or Codex"): in a session's first
 * turn it asks which of two names the project should use; when the session is resumed with the owner's answer, it
 * writes the chosen name in NAME.txt in the rule's folder with Claude Code's Write tool and finishes. It learns the
 * answer as an agent would, from the run's context file, whose path the prompt names (the model runs on this computer
 * and reads it itself). Under Codex, which has no Write tool, it only says which name was chosen.
 */
import { readFileSync } from "node:fs";
import { receiptMessage, type Reply, type Turn } from "./fake-model.js";

/** The names it offers. */
export const tryItNames = ["aurora", "borealis"] as const;

const askReceipt = receiptMessage("Needs you: which name should the project use?", {
  ask: [{ title: "Pick a name", text: "Which name should the project use?", options: [...tryItNames], recommend: 0 }],
});

/** The name the owner chose, from the last context file the conversation names; null when none can be read. */
function chosenName(allUser: string): string | null {
  const files = [...allUser.matchAll(/This run's context is in (\S+) \(JSON\)|这一轮的资料在 (\S+)（JSON）/g)].map((m) => m[1] ?? m[2]!);
  try {
    const context = JSON.parse(readFileSync(files.at(-1) ?? "", "utf8")) as { answers?: { options: string[]; choice: number | null; text: string | null }[] };
    const answer = context.answers?.at(-1);
    return answer ? answer.text ?? answer.options[answer.choice ?? -1] ?? null : null;
  } catch {
    return null;
  }
}

/** The reply to one request of the CLI (see the module comment). */
export function tryItReply(turn: Turn): Reply {
  // Every run's prompt carries the receipt instructions once: two of them mean a resumed session.
  const resumed = (turn.allUser.match(/When you are done, your last message is the receipt|做完后，你的最后一条消息就是回执/g) ?? []).length >= 2;
  if (!resumed) return { text: askReceipt };
  const name = chosenName(turn.allUser);
  if (name === null) return { text: "Not run: the answer is not in this run's context file" };
  if (turn.toolResult !== null) return { text: `Done: wrote "${name}" in NAME.txt` };
  if (turn.tools.includes("Write")) return { tool: "Write", input: { file_path: "NAME.txt", content: `${name}\n` } };
  return { text: `Done: the owner chose "${name}" (this fake model writes files only through Claude Code's Write tool)` };
}
