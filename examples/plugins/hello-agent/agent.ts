/**
 * A minimal agent plugin: `printf` stands in for a model, so it runs anywhere. It prints one line when it takes the
 * prompt (so `read` knows the run started, and its session) and then its last message.
 * Replace `command` with your CLI and `read` with the parsing of its output. Types and helpers come from the plugin
 * SDK, `agent-autoloop/sdk`, the only part of the engine a plugin imports.
 */
import { tail, type AgentPlugin } from "agent-autoloop/sdk";

const plugin: AgentPlugin = {
  command(turn) {
    const session = turn.resume ?? `hello-${Date.now()}`;
    return ["printf", "%s\\n%s\\n", `session ${session}`, "Done: said hello."];
  },
  read(stdout, code, stderr) {
    const lines = stdout.split("\n").filter((l) => l !== "");
    const session = /^session (\S+)$/.exec(lines[0] ?? "")?.[1];
    if (code === null) return { started: session !== undefined, session };
    if (code !== 0) return { started: session !== undefined, session, error: tail(stderr, 500) || `exit code ${code}` };
    return { started: true, session, finished: true, text: lines.slice(1).join("\n") };
  },
};
export default plugin;
