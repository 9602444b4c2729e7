/**
 * `npm run schema`: writes protocol/schema.json from the TypeBox definitions in src/protocol/ (definitions.ts), the
 * validators the hub runs compiled from them (src/protocol/validators.generated.ts) and those clients check the
 * hub's answers with (src/protocol/responses.generated.ts); and the declarative plugins' schema files
 * (protocol/declarative/, from src/protocol/plugin-schemas.ts) with the loader's validators compiled from them
 * (src/protocol/plugin-validators.generated.ts); and the schemas of the files people write (protocol/rules.schema.json,
 * config.schema.json, manifest.schema.json) with the validators compiled from them; and the arguments of
 * `agent-autoloop mcp`'s tools (src/protocol/mcp-validators.generated.ts); and JSON Schema's meta-schemas
 * (src/protocol/meta-validators.generated.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { schemaDocument } from "../src/protocol/schema-document.js";
import { pluginSchemaDocument, pluginSchemaFiles, type PluginSchemaFile } from "../src/protocol/plugin-schemas.js";
import { fileSchemaDocument, fileSchemas, fileValidatorModule, mcpValidatorsModule, metaValidatorsModule, pluginValidatorsModule, responseValidatorsModule, validatorsModule, type FileSchema } from "./validators.js";

const root = join(import.meta.dirname, "..");
writeFileSync(join(root, "protocol", "schema.json"), JSON.stringify(schemaDocument(), null, 2) + "\n");
writeFileSync(join(root, "src", "protocol", "validators.generated.ts"), validatorsModule());
writeFileSync(join(root, "src", "protocol", "responses.generated.ts"), responseValidatorsModule());
writeFileSync(join(root, "src", "protocol", "mcp-validators.generated.ts"), mcpValidatorsModule());
mkdirSync(join(root, "protocol", "declarative"), { recursive: true });
for (const file of Object.keys(pluginSchemaFiles) as PluginSchemaFile[]) {
  writeFileSync(join(root, "protocol", "declarative", file), JSON.stringify(pluginSchemaDocument(file), null, 2) + "\n");
}
writeFileSync(join(root, "src", "protocol", "plugin-validators.generated.ts"), pluginValidatorsModule());
for (const file of Object.keys(fileSchemas) as FileSchema[]) {
  writeFileSync(join(root, "protocol", file), JSON.stringify(fileSchemaDocument(file), null, 2) + "\n");
  writeFileSync(join(root, fileSchemas[file].module), fileValidatorModule(file));
}
writeFileSync(join(root, "src", "protocol", "meta-validators.generated.ts"), metaValidatorsModule());
