/**
 * The runners of tool plugins, one per `plugin_type` (issue 27, point 1): the tool host's one table, dispatched once
 * (host.ts `runnerOf`). Adding a kind is its runner's file and one entry here; the compiler holds the table to the
 * contract's list of kinds (src/protocol/patterns.ts `toolPluginTypes`), so a kind missing from either side fails to
 * compile, and nothing else of the host names a kind.
 */
import type { ToolPluginType } from "../protocol/patterns.js";
import { mcpRunner } from "./mcp.js";
import type { RunnerKind } from "./runner.js";
import { serviceRunner } from "./service.js";
import { asyncRunner, syncRunner } from "./stdio-runner.js";

/** Every kind's runner (typed by the contract's list: a kind missing from either side is an error here, and only here). */
export const runners: Readonly<Record<ToolPluginType, RunnerKind>> = {
  sync: syncRunner,
  async: asyncRunner,
  service: serviceRunner,
  mcp: mcpRunner,
};
