/**
 * The JSON Schema meta-schemas, compiled ahead of time (meta-validators.generated.ts, `npm run schema`), for the Ajv
 * instances that check the parameter schemas of tool plugins and declarative tools. Ajv compiles a meta-schema the
 * first time a schema is checked against it: 60–240 ms of CPU in every `check`, `plugins invoke`, worker and hub start
 * that reads a manifest with parameters, for a validator that is always the same. The precompiled functions come from
 * the same meta-schemas with the same options, so a schema is accepted or refused, with the same errors, as before
 * (tests/meta-schemas.test.ts compares both on valid and broken schemas). One difference: the tool host's Ajv ran the
 * meta-schemas' own patterns (of `$id`, `$anchor`, `$dynamicAnchor`) with its linear engine, which counts a string
 * past its work bound (2,000,000 steps) as matching; the precompiled ones run them with JavaScript's, so such a name of
 * millions of characters is now refused as it should be (the patterns are linear by their form).
 */
import { createRequire } from "node:module";
import type { Ajv2020 } from "ajv/dist/2020.js";
import { draft07, draft2020 } from "./meta-validators.generated.js";

/** Draft-07's meta-schema as Ajv ships it: MCP servers' tool schemas often name it in `$schema` (zod's output does). */
export const draft07MetaSchema = createRequire(import.meta.url)("ajv/dist/refs/json-schema-draft-07.json") as Record<string, unknown>;

/** The precompiled validator of each meta-schema, by the id Ajv keeps it under. */
const precompiled = {
  "https://json-schema.org/draft/2020-12/schema": draft2020,
  "http://json-schema.org/draft-07/schema": draft07,
} as const;

/**
 * Gives `ajv` (made with `allErrors`, `$data` and `verbose` off, messages on) the precompiled validator of each of
 * these meta-schemas it keeps (draft 2020-12 always; draft-07 when added with `addMetaSchema(draft07MetaSchema)`), so
 * checking a schema compiles none.
 * @throws Error when `ajv` was made with other options, or keeps no draft 2020-12 meta-schema under its id (an Ajv that
 *   keeps it otherwise).
 */
export function usePrecompiledMetaSchemas(ajv: Ajv2020): Ajv2020 {
  // Compiled with these options (scripts/validators.ts): another Ajv would report other errors than its own.
  const o = ajv.opts;
  if (o.allErrors || o.$data || o.verbose || o.messages === false) throw new Error("the precompiled meta-schemas are for an Ajv with allErrors, $data and verbose off and messages on");
  for (const [id, validate] of Object.entries(precompiled)) {
    const env = ajv.schemas[id];
    if (env === undefined) {
      if (validate === draft2020) throw new Error(`Ajv keeps no meta-schema ${id}`);
      continue;
    }
    // A standalone function carries its errors as Ajv's own do, without the compiled schema's bookkeeping.
    env.validate = validate as unknown as NonNullable<typeof env.validate>;
  }
  return ajv;
}
