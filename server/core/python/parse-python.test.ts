/**
 * toolset.py parsing (Python's ast in the sandbox, nothing runs) and the shipped Python example
 * toolset (toolsets/textkit) called through the python runtime.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readToolsetFolder, validateToolsetFiles } from "../toolsets";
import { toParsedToolset } from "./parse-python";
import { createPythonRuntime, type PythonRuntime } from "./runtime";

let python: PythonRuntime;
beforeAll(() => {
  python = createPythonRuntime({ maxWorkers: 2, spareWorkers: 0 });
});
afterAll(async () => {
  await python?.close();
});

async function parse(source: string) {
  return toParsedToolset(await python.parse(source));
}

describe("[PYTHON] parsing toolset.py", { timeout: 120_000 }, () => {
  it("maps hints to JSON Schema: Optional, list, dict, Literal, TypedDict, defaults; never runs the file", async () => {
    const parsed = await parse(`"""Demo.\n\n@hosts api.example.com\n@secret API_KEY the key\n"""
from typing import Literal, Optional, TypedDict
from toolstore.toolset import tool
raise SystemExit("this file must never run while parsing")

class Point(TypedDict):
    x: float
    y: float

@tool(category="write")
def f(name: str, tags: list[str], scores: dict[str, int], unit: Literal["c", "f"] = "c",
      where: Optional[Point] = None, n: int | None = None):
    """Does f.\n\n    Args:\n        name: Who.\n    """
`);
    expect(parsed.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(parsed.declarations).toMatchObject({
      hosts: ["api.example.com"],
      env: [{ name: "API_KEY", secret: true, description: "the key" }],
      description: "Demo.",
    });
    const [f] = parsed.bindings;
    expect(f).toMatchObject({ name: "f", category: "write", description: "Does f." });
    expect(f?.inputSchema).toEqual({
      type: "object",
      additionalProperties: false,
      required: ["name", "tags", "scores"],
      properties: {
        name: { type: "string", description: "Who." },
        tags: { type: "array", items: { type: "string" } },
        scores: { type: "object", additionalProperties: { type: "integer" } },
        unit: { type: "string", enum: ["c", "f"], default: "c" },
        where: {
          anyOf: [
            {
              type: "object",
              properties: { x: { type: "number" }, y: { type: "number" } },
              required: ["x", "y"],
              additionalProperties: false,
            },
            { type: "null" },
          ],
          default: null,
        },
        n: { type: ["integer", "null"], default: null },
      },
    });
  });

  it("an unsupported hint is an error at toolset.py:LINE saying what to write instead", async () => {
    const parsed = await parse(
      'from toolstore.toolset import tool\nimport datetime\n\n@tool("read")\ndef when(at: datetime.date) -> str:\n    """When."""\n    return str(at)\n',
    );
    const [error] = parsed.diagnostics.filter((d) => d.severity === "error");
    expect(error).toMatchObject({ file: "toolset.py", line: 5 });
    expect(error?.message).toContain("type hint `datetime.date` is not supported");
    expect(error?.hint).toContain("list[T]");
  });

  it("a bad category, *args, async def and a syntax error are errors with lines", async () => {
    const bad = await parse(
      'from toolstore.toolset import tool\n\n@tool(category="delete")\ndef a(x: str):\n    """A."""\n\n@tool("read")\ndef b(*args):\n    """B."""\n\n@tool("read")\nasync def c():\n    """C."""\n',
    );
    expect(bad.diagnostics.filter((d) => d.severity === "error").map((d) => d.line)).toEqual([3, 8, 12]);
    const syntax = await parse("from toolstore.toolset import tool\n\ndef broken(:\n");
    expect(syntax.diagnostics[0]).toMatchObject({ severity: "error", file: "toolset.py", line: 3 });
    const none = await parse("def helper():\n    return 1\n");
    expect(none.diagnostics[0]?.message).toBe("toolset.py has no binding");
  });
});

describe("[PYTHON] the shipped example toolsets/textkit", { timeout: 120_000 }, () => {
  const dir = path.resolve(import.meta.dirname, "../../../toolsets/textkit");

  it("validates and its bindings run", async () => {
    const validation = await validateToolsetFiles(readToolsetFolder(dir), { parsePython: python.parse });
    expect(validation.errors).toEqual([]);
    expect(validation.warnings).toEqual([]);
    const code = readFileSync(path.join(dir, "toolset.py"), "utf8");
    const call = (exportName: string, kwargs: Record<string, unknown>) =>
      python.runBinding({
        trustDomain: "textkit@test",
        code,
        exportName,
        args: [],
        kwargs,
        env: {},
        allowedHosts: [],
        timeoutMs: 10_000,
      });
    expect(await call("word_count", { text: "the cat and the hat", top: 2 })).toMatchObject({
      ok: true,
      value: {
        characters: 19,
        words: 5,
        lines: 1,
        top_words: [
          ["the", 2],
          ["cat", 1],
        ],
      },
    });
    expect(await call("slugify", { text: "Crème Brûlée: A History", max_length: 12 })).toMatchObject({
      ok: true,
      value: "creme-brulee",
    });
    expect(await call("extract_emails", { text: "a@x.org, B@x.org; a@X.org" })).toMatchObject({
      ok: true,
      value: ["a@x.org", "B@x.org"],
    });
  });
});
