/**
 * `npm run schema`: writes protocol/schema.json from the TypeBox definitions in src/protocol/ (definitions.ts), the
 * validators the hub runs compiled from them (src/protocol/validators.generated.ts) and those clients check the
 * hub's answers with (src/protocol/responses.generated.ts).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { schemaDocument } from "../src/protocol/schema-document.js";
import { responseValidatorsModule, validatorsModule } from "./validators.js";

const root = join(import.meta.dirname, "..");
writeFileSync(join(root, "protocol", "schema.json"), JSON.stringify(schemaDocument(), null, 2) + "\n");
writeFileSync(join(root, "src", "protocol", "validators.generated.ts"), validatorsModule());
writeFileSync(join(root, "src", "protocol", "responses.generated.ts"), responseValidatorsModule());
