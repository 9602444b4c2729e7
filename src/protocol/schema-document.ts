/** The published JSON Schema document (JSON Schema 2020-12) built from the protocol's TypeBox definitions. */
import { definitions } from "./definitions.js";

/** The whole document: `$defs` holds every shape of the /v1 protocol. */
export function schemaDocument(): Record<string, unknown> {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://agent-autoloop.dev/protocol/v1/schema.json",
    title: "agent-autoloop /v1 protocol",
    $defs: JSON.parse(JSON.stringify(definitions)),
  };
}
