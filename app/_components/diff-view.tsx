/**
 * The console's one diff view: lines that start with "+" (added), "-" (removed), "~" (changed in
 * place) or "@@" (a hunk of a unified patch) in their colours, the rest as context. The lines come
 * from the server (a toolset's version diff, an MCP tool's changed definition, a skill file's
 * patch); `patchLines` turns a unified patch into such lines.
 */
import "./diff-view.css";

export type DiffLineKind = "add" | "del" | "mod" | "hunk" | "same";

export function diffLineKind(line: string): DiffLineKind {
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  if (line.startsWith("~")) return "mod";
  return "same";
}

/** The lines of a one-file unified patch from its first "@@" on: the file header (names, rule) dropped. */
export function patchLines(patch: string): string[] {
  const lines = patch.replace(/\n$/, "").split("\n");
  const first = lines.findIndex((line) => line.startsWith("@@"));
  return first < 0 ? [] : lines.slice(first);
}

export function DiffView({
  lines,
  label,
  testId,
}: {
  lines: readonly string[];
  /** Names the view, which makes it a region ("Changes from v1 to v2"). */
  label?: string;
  testId?: string;
}) {
  return (
    <section className="diff-view" aria-label={label} data-testid={testId}>
      {lines.map((line, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: lines of one diff, in order
        <div key={i} className={`diff-line diff-${diffLineKind(line)}`}>
          {/* An empty line keeps its height. */}
          {line || " "}
        </div>
      ))}
    </section>
  );
}
