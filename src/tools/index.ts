/**
 * The tool host's public entry (spec tool-plugins.md; issue 16): discovery and its kind loader, the runners of each
 * kind, the call API, conformance, manifest reading, and the public types. Nothing outside src/tools reaches past this
 * file, except `kind.ts`, the light entry of discovery alone (the common plugin layer's kind loader: issue 27).
 */
export type * from "./types.js";
export { ToolRegistry } from "./registry.js";
export { toolPlugins } from "./kind.js";
export { formatClash } from "../plugins/precedence.js";
export { runners } from "./runners.js";
export type { RunnerKind, Runner } from "./runner.js";
export { ToolHost, splitToolName, type ToolHostOptions } from "./host.js";
export { argumentsBeyondLimits } from "./arguments.js";
export { ownerCall, type OwnerCallAudit, type OwnerCallOptions } from "./owner-call.js";
export { diagnose, resolveCommand, type PluginDiagnosis } from "./doctor.js";
export { conformance, sampleArguments, type ConformanceOptions } from "./conformance.js";
export { readManifest, manifestDigest, formatProblem, manifestFileNames, type ManifestResult } from "./manifest.js";
export { probeBwrap } from "./sandbox.js";
export { checkBinds, shownBinds, type BindChecked, type BindShown, type BindBroad, type BindRefusal } from "./binds.js";
export { bindsOf, bindRefusal } from "./process.js";
export { passedEnvNames } from "./env.js";
export { cgroupBases, systemCgroups, type CgroupSystem } from "./cgroup.js";
export { pluginAddrVariable, bridgeProtoPath, sandboxSocketDir, serviceSocketFolder, serviceSocketName, serviceSocketRoot } from "./service.js";
export * as toolLimits from "./limits.js";
