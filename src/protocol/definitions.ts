/**
 * Every definition of the /v1 protocol by name: what callers send (schema.ts) and what the hub answers
 * (responses.ts). `protocol/schema.json` publishes them all under `$defs` (schema-document.ts).
 */
import { requestDefinitions } from "./schema.js";
import { responseDefinitions } from "./responses.js";

/** Every definition by its name in `$defs`: requests first, then answers (the names do not overlap). */
export const definitions = { ...requestDefinitions, ...responseDefinitions };
/** The name of any protocol definition. */
export type DefinitionName = keyof typeof definitions;
