/**
 * A module with an observable effect for the kill -9 tests: `ledger.append` appends a line to a
 * marker file (after `beforeEffect`, where a test may kill the process), `ledger.peek` reads it.
 */
import fs from "node:fs";
import type { CapabilityModule } from "../../core/capabilities/types";

export function ledgerModule(markerFile: string, beforeEffect?: () => Promise<void>): CapabilityModule {
  return {
    name: "ledger",
    description: "A write with an observable effect, for the kill -9 test.",
    source: "builtin",
    versionHash: "ledger-v1",
    exports: [
      {
        spec: {
          name: "ledger.peek",
          description: "Reads the marker file.",
          category: "read",
          inputSchema: { type: "object", additionalProperties: true },
        },
        impl: async () => ({ lines: fs.existsSync(markerFile) ? fs.readFileSync(markerFile, "utf8") : "" }),
      },
      {
        spec: {
          name: "ledger.append",
          description: "Appends a line to the marker file.",
          category: "write",
          inputSchema: { type: "object", properties: { line: { type: "string" } }, required: ["line"] },
        },
        impl: async (_run, args) => {
          await beforeEffect?.();
          fs.appendFileSync(markerFile, `${String(args.line)}\n`);
          return { appended: true };
        },
      },
    ],
  };
}
