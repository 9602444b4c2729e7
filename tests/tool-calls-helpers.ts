/** Shared by the tool-call tests (issue 16): rules that offer tools, and call bodies as the tool bridge sends them. */
import { baseRules } from "./helpers.js";
import { toolArgsDigest, toolArgsPreview } from "../src/protocol/tool-calls.js";
import type { ToolCallBody } from "../src/protocol/schema.js";

export const digestA = "a".repeat(64);
export const digestB = "b".repeat(64);
export const args = { name: "Ada" };

/** Rules whose rule `alerts` offers `tools`, one run per subject, with these approvals and hold. */
export function toolRules(approvals: unknown[], tools: string[], approvalWaitSeconds?: number) {
  return {
    ...baseRules,
    approvals,
    ...(approvalWaitSeconds === undefined ? {} : { approvalWaitSeconds }),
    rules: [{ ...baseRules.rules[0], parallel: 10, tools }, baseRules.rules[1]],
  };
}

/** A call body for `tool`: the arguments' digest and preview as the bridge sends them, manifest A, not built in, kind sync. */
export function callBody(tool: string, o: Partial<ToolCallBody> = {}): ToolCallBody {
  return { tool, argsDigest: toolArgsDigest(args), preview: toolArgsPreview(args), manifestDigest: digestA, builtIn: false, disableModelInvocation: false, kind: "sync", ...o };
}

