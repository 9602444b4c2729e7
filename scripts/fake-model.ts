/**
 * `npm run fake-model`: the tests' fake model server (tests/fake-model.ts) on its own, for trying the claude and
 * codex agents by hand without a model account. It asks one question in a session's first turn and finishes once
 * the session is resumed. Prints the URL to put in ANTHROPIC_BASE_URL (Claude Code) or in a Codex provider's
 * base_url (with /v1). Stops on Ctrl-C.
 */
import { receiptMessage, startFakeModel } from "../tests/fake-model.js";

const receipt = receiptMessage("Needs you: which name should the project use?", {
  ask: [{ title: "Pick a name", text: "Which name should the project use?", options: ["aurora", "borealis"], recommend: 0 }],
});

const model = await startFakeModel((turn) => {
  // every run's prompt carries the receipt instructions once: two of them mean a resumed session
  const resumed = (turn.allUser.match(/When you are done, your last message is the receipt|做完后，你的最后一条消息就是回执/g) ?? []).length >= 2;
  return resumed ? { text: "Done: wrote the chosen name down" } : { text: receipt };
});
console.log(`fake model listening on ${model.url}`);
process.on("SIGINT", () => void model.close().then(() => process.exit(0)));
