/**
 * The built-in `command` agent (protocol.md 接一个新 Agent): any program that prints its last message.
 * Arguments come from the agent's `command` with `{prompt}`, `{model}`, `{effort}`, `{cwd}`, `{context}` put in
 * once each; stdout is the last message; an exit code other than 0 means "not run". No session.
 */
import { substitute, tail, type AgentPlugin } from "agent-autoloop/sdk";

const plugin: AgentPlugin = {
  command(turn) {
    if (!turn.command || turn.command.length === 0) throw new Error("agent.command is required for use: command");
    return substitute(turn.command, {
      prompt: turn.prompt, model: turn.model ?? "", effort: turn.effort ?? "", cwd: turn.cwd, context: turn.contextFile,
    });
  },
  read(stdout, code, stderr) {
    if (code === null) return { started: true };
    if (code !== 0) return { started: true, finished: true, error: `exit code ${code}${stderr.trim() ? `: ${tail(stderr, 500)}` : ""}` };
    return { started: true, finished: true, text: stdout.trim() };
  },
};

export default plugin;
