/** `toolstore/lib/yaml`: YAML 1.2 in and out, on the `yaml` package. */
import type { LibraryModule } from "../../core/libraries/types";
import { bundleLibrary } from "./bundle";

const ENTRY = `import { parse, stringify, parseAllDocuments } from "yaml";
export { parse, stringify };
export function parseAll(text) {
  return parseAllDocuments(String(text)).map((doc) => {
    if (doc.errors.length) throw doc.errors[0];
    return doc.toJS();
  });
}`;

export const yamlLibrary: LibraryModule = {
  name: "yaml",
  description: "Parse and write YAML (1.2). Pure functions; runs inside the action.",
  builtOn: "yaml 2.9.1",
  declarations: `export interface YamlOptions { /** Keep map key order and types strict. */ strict?: boolean; uniqueKeys?: boolean; maxAliasCount?: number; indent?: number; lineWidth?: number; sortMapEntries?: boolean; }`,
  exports: [
    {
      name: "parse",
      description:
        "Parses one YAML document into plain values. Throws a YAMLParseError (with line and column) on bad input.",
      signature: "parse(text: string, options?: YamlOptions): any",
    },
    {
      name: "parseAll",
      description: "Parses a stream of documents separated by ---, one value each.",
      signature: "parseAll(text: string): any[]",
    },
    {
      name: "stringify",
      description: "Writes a value as YAML.",
      signature: "stringify(value: unknown, options?: YamlOptions): string",
    },
  ],
  source: () => bundleLibrary("yaml", ENTRY),
};
