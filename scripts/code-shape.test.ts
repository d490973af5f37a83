import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { layerViolations, longFunctions, MAX_FUNCTION_LINES } from "./code-shape";

const root = path.resolve(import.meta.dirname, "..");
const scratch = mkdtempSync(path.join(tmpdir(), "toolstore-shape-"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(scratch, "t-"));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

const body = (lines: number) => Array.from({ length: lines }, (_, i) => `  const v${i} = ${i};`).join("\n");

describe("[SHAPE] the code keeps its shape", () => {
  it(`has no function over ${MAX_FUNCTION_LINES} lines outside the sandbox worker's guest-facing code, but three that say why`, () => {
    const long = longFunctions(root);
    const unexplained = long
      .filter((f) => !f.reason)
      .map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
    expect(unexplained, "split these, or say why above them with a `long-function:` comment").toEqual([]);
    expect(long.length, "at most three functions may be long, each with a reason").toBeLessThanOrEqual(3);
  });

  it("imports only point down the layers: core <- infra <- services <- sources <- root <- adapters <- app", () => {
    expect(layerViolations(root).map((v) => `${v.file}:${v.line} ${v.message}`)).toEqual([]);
  });

  it("the checks catch a long function and an import that goes the wrong way", () => {
    const dir = tree({
      "server/core/gate/long.ts": `export function tooLong() {\n${body(MAX_FUNCTION_LINES)}\n}\n`,
      "server/core/gate/explained.ts": `// long-function: a generated table\nexport const table = () => {\n${body(MAX_FUNCTION_LINES)}\n};\n`,
      "server/core/gate/up.ts": `import { x } from "../../services/thing";\nimport { PrismaClient } from "@prisma/client";\nexport const y = x;\n`,
      "server/services/thing.ts": `import { z } from "../api/router";\nexport const x = z;\n`,
      "server/api/router.ts": "export const z = 1;\n",
    });
    expect(longFunctions(dir).map((f) => [f.name, f.reason ?? null])).toEqual([
      ["table", "a generated table"],
      ["tooLong", null],
    ]);
    expect(layerViolations(dir, ["server"], []).map((v) => `${v.file}:${v.line} ${v.message}`)).toEqual([
      "server/core/gate/up.ts:1 core (server/core/gate/up.ts) must not import services (server/services/thing.ts)",
      'server/core/gate/up.ts:2 core must not import the package "@prisma/client"',
      "server/services/thing.ts:1 services (server/services/thing.ts) must not import adapters (server/api/router.ts)",
    ]);
  });
});
