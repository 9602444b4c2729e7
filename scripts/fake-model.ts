/**
 * `npm run fake-model`: the tests' fake model server (tests/fake-model.ts) on its own, for trying the claude and
 * codex agents by hand without a model account. It asks one question in a session's first turn; when the session is
 * resumed with the answer, it writes the chosen name in NAME.txt (through Claude Code's Write tool) and finishes
 * (tests/try-it-model.ts). Prints the URL to put in ANTHROPIC_BASE_URL (Claude Code) or in a Codex provider's
 * base_url (with /v1). Stops on Ctrl-C.
 */
import { startFakeModel } from "../tests/fake-model.js";
import { tryItReply } from "../tests/try-it-model.js";

const model = await startFakeModel(tryItReply);
console.log(`fake model listening on ${model.url}`);
process.on("SIGINT", () => void model.close().then(() => process.exit(0)));
