/** Writes protocol/schema.json from the TypeBox definitions in src/protocol/schema.ts (`npm run schema`). */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { schemaDocument } from "../src/protocol/schema-document.js";

writeFileSync(join(import.meta.dirname, "..", "protocol", "schema.json"), JSON.stringify(schemaDocument(), null, 2) + "\n");
