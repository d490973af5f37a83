/**
 * The text after `@env` or `@secret` in a toolset's header (toolset.ts and toolset.py alike):
 * `NAME description`, and for a secret optional placement words right after the name —
 * `@secret API_KEY header body the key` — saying where in a request its value may go
 * (secret-fill.ts; headers only when none is given). A description that starts with one of the
 * words takes a `-` first: `@secret KEY - body of the ...`.
 */
import { SECRET_PLACEMENTS, type SecretPlacement } from "../sandbox/secret-fill";
import type { ToolsetEnvDeclaration } from "./types";

const PLACEMENT_WORDS: Record<string, SecretPlacement> = {
  header: "header",
  headers: "header",
  body: "body",
  query: "query",
  path: "path",
};

/** The declaration, or the name it lacks (`varName` invalid) for the caller to report. */
export function parseEnvTag(tag: "env" | "secret", text: string): ToolsetEnvDeclaration {
  const match = /^(\S+)\s*(.*)$/s.exec(text);
  const name = match?.[1] ?? "";
  let rest = match?.[2] ?? "";
  const placements: SecretPlacement[] = [];
  if (tag === "secret") {
    for (;;) {
      const word = /^([A-Za-z]+)(?:[\s,]+|$)/.exec(rest);
      const placement = word ? PLACEMENT_WORDS[(word[1] as string).toLowerCase()] : undefined;
      if (!word || !placement) break;
      if (!placements.includes(placement)) placements.push(placement);
      rest = rest.slice(word[0].length);
    }
  }
  return {
    name,
    secret: tag === "secret",
    description: rest.replace(/^-\s*/, "").trim(),
    ...(placements.length > 0 ? { placements: SECRET_PLACEMENTS.filter((p) => placements.includes(p)) } : {}),
  };
}
