/** `toolstore/lib/csv`: CSV in and out, on papaparse. */
import type { LibraryModule } from "../../core/libraries/types";
import { bundleLibrary } from "./bundle";

const ENTRY = `import Papa from "papaparse";
export function parse(text, options) {
  if (typeof text !== "string") throw new TypeError("csv.parse: text must be a string");
  const o = options == null ? {} : options;
  return Papa.parse(text, { ...o, worker: false, download: false });
}
export function unparse(data, options) {
  return Papa.unparse(data, options);
}`;

export const csvLibrary: LibraryModule = {
  name: "csv",
  description: "Parse and write CSV (papaparse). Pure functions; runs inside the action.",
  builtOn: "papaparse 5.7.1",
  declarations: `export interface CsvParseOptions { /** First row names the fields: rows become objects. */ header?: boolean; delimiter?: string; /** Numbers and booleans become values, not text. */ dynamicTyping?: boolean; skipEmptyLines?: boolean | "greedy"; comments?: string | false; quoteChar?: string; }
export interface CsvResult<T = any> { data: T[]; errors: { type: string; code: string; message: string; row?: number }[]; meta: { delimiter: string; linebreak: string; fields?: string[]; truncated: boolean } }
export interface CsvUnparseOptions { header?: boolean; delimiter?: string; newline?: string; quotes?: boolean | boolean[]; columns?: string[]; }`,
  exports: [
    {
      name: "parse",
      description:
        "Parses CSV text: { data, errors, meta }. With header: true each row is an object keyed by the first row.",
      signature: "parse(text: string, options?: CsvParseOptions): CsvResult",
    },
    {
      name: "unparse",
      description: "Writes rows (objects or arrays) as CSV text.",
      signature:
        "unparse(data: unknown[] | { fields: string[]; data: unknown[][] }, options?: CsvUnparseOptions): string",
    },
  ],
  source: () => bundleLibrary("csv", ENTRY, ["stream"]),
};
