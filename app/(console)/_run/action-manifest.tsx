"use client";
import { useState } from "react";
import { CategoryBadge } from "@/app/_components/category-badge";
import type { RunManifest } from "@/server/services/action-manifest";

const DECISION_PILL: Record<string, string> = {
  allow: "pill pill-ok",
  deny: "pill pill-bad",
  blocked: "pill pill-bad",
  waiting: "pill pill-wait",
};

/**
 * What the action is, before it goes on: who runs it (for MCP: the client, the key and its owner),
 * the modules it imports, the capabilities it can reach, the calls so far and its code, folded
 * around the lines that call `highlight` (the capability waiting for an answer).
 */
export function ActionManifestView({
  manifest,
  highlight,
  compact = false,
  showCalls = true,
}: {
  manifest: RunManifest;
  highlight: string[];
  /** On an approval card: imports and reachable capabilities on one line each. */
  compact?: boolean;
  /** The run page lists the calls in its own timeline. */
  showCalls?: boolean;
}) {
  const lines = highlight.length
    ? manifest.callSites.filter((c) => highlight.includes(c.capability)).map((c) => c.line)
    : [];
  return (
    <div className={`manifest${compact ? " manifest-compact" : ""}`} data-testid="manifest">
      {(manifest.client || manifest.key) && (
        <p className="manifest-who" data-testid="manifest-client">
          {manifest.client && (
            <>
              MCP client{" "}
              <strong>
                {manifest.client.name}
                {manifest.client.version ? ` ${manifest.client.version}` : ""}
              </strong>
            </>
          )}
          {manifest.client && manifest.key && " · "}
          {manifest.key && (
            <>
              key <strong>"{manifest.key.name}"</strong> of <strong>{manifest.key.owner}</strong>
            </>
          )}
        </p>
      )}
      <dl className="manifest-grid">
        <dt>Imports</dt>
        <dd data-testid="manifest-imports">
          {manifest.parseError ? (
            <span className="muted">the code does not parse: {manifest.parseError}</span>
          ) : manifest.imports.length === 0 ? (
            <span className="muted">no modules</span>
          ) : (
            manifest.imports.map((imp) => (
              <code key={imp.module} className="export-chip">
                toolstore/{imp.module}
                {imp.names.length ? ` { ${imp.names.join(", ")} }` : ""}
              </code>
            ))
          )}
        </dd>
        <dt>Can reach</dt>
        <dd data-testid="manifest-reach">
          {manifest.reachable.length === 0 ? (
            <span className="muted">no capability</span>
          ) : (
            manifest.reachable.map((r) => (
              <span key={r.capability} className="reach-chip">
                <code>{r.capability}</code> <CategoryBadge category={r.category} />
              </span>
            ))
          )}
        </dd>
        {showCalls && (
          <>
            <dt>Calls so far</dt>
            <dd>
              {manifest.calls.length === 0 ? (
                <span className="muted">none yet</span>
              ) : (
                <ol className="manifest-calls" data-testid="manifest-calls">
                  {manifest.calls.map((c, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: calls are listed in order and never reordered
                    <li key={i} title={c.reason}>
                      <code>{c.capability}</code> <CategoryBadge category={c.category} />{" "}
                      <span className={DECISION_PILL[c.decision] ?? "pill"}>{c.decision}</span>
                    </li>
                  ))}
                </ol>
              )}
            </dd>
          </>
        )}
      </dl>
      <FoldedCode code={manifest.code} highlighted={lines} />
    </div>
  );
}

/** Lines to show of `lineCount` when folded: a few around each highlighted line. */
function foldedLines(lineCount: number, highlighted: number[], context = 2): number[] {
  const keep = new Set<number>();
  for (const line of highlighted) {
    for (let n = Math.max(1, line - context); n <= Math.min(lineCount, line + context); n++) keep.add(n);
  }
  return [...keep].sort((a, b) => a - b);
}

/** A string literal on one line: "…", '…' or `…` (escapes kept inside). */
const STRING_LITERAL = /"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g;
const LONG_STRING = 80;

/**
 * A line with its long string literals (a base64 picture, a document) cut to their start and a
 * button with their length: folded code is for finding the call, and the arguments are shown
 * whole above it. The button, or unfolding, shows every character.
 */
function shortenStrings(line: string, showAll: () => void): React.ReactNode {
  if (line.length <= LONG_STRING) return line;
  const parts: React.ReactNode[] = [];
  let at = 0;
  for (const match of line.matchAll(STRING_LITERAL)) {
    const literal = match[0];
    if (literal.length <= LONG_STRING) continue;
    const start = match.index;
    parts.push(line.slice(at, start), literal.slice(0, 32), "…", literal.at(-1));
    parts.push(
      <button
        key={start}
        type="button"
        className="code-cut"
        onClick={showAll}
        aria-label={`Show the whole string: ${(literal.length - 2).toLocaleString("en-US")} characters`}
      >
        {(literal.length - 2).toLocaleString("en-US")} characters
      </button>,
    );
    at = start + literal.length;
  }
  if (at === 0) return line;
  parts.push(line.slice(at));
  return parts;
}

/** The action's code, folded to the highlighted lines and a little around them. */
export function FoldedCode({ code, highlighted }: { code: string; highlighted: number[] }) {
  const all = code.split("\n");
  const shown = foldedLines(all.length, highlighted);
  const foldable = highlighted.length > 0 && shown.length < all.length;
  const [open, setOpen] = useState(!foldable);
  // Long string literals are cut until the code is unfolded, or one of them is asked for.
  const [whole, setWhole] = useState(false);
  const cut = !whole && !(open && foldable);
  const marks = new Set(highlighted);
  const visible = open ? all.map((_, i) => i + 1) : shown;
  const out: React.ReactNode[] = [];
  let previous = 0;
  for (const n of visible) {
    if (n > previous + 1) {
      out.push(
        <button
          key={`gap-${n}`}
          type="button"
          className="code-gap"
          onClick={() => setOpen(true)}
          aria-label={`Show lines ${previous + 1} to ${n - 1}`}
        >
          ⋯ {n - previous - 1} lines
        </button>,
      );
    }
    out.push(
      <span
        key={n}
        className={`code-line${marks.has(n) ? " code-line-hit" : ""}`}
        data-line={n}
        aria-current={marks.has(n) ? "true" : undefined}
      >
        {(cut ? shortenStrings(all[n - 1] ?? "", () => setWhole(true)) : all[n - 1]) || " "}
      </span>,
    );
    previous = n;
  }
  if (!open && previous < all.length) {
    out.push(
      <button key="gap-end" type="button" className="code-gap" onClick={() => setOpen(true)}>
        ⋯ {all.length - previous} lines
      </button>,
    );
  }
  return (
    <div className="folded-code">
      <div className="row folded-code-head">
        <span className="muted">
          Code · {all.length} lines
          {highlighted.length > 0 && ` · waiting call on line ${highlighted.join(", ")}`}
        </span>
        {foldable && (
          <button type="button" className="btn btn-sm" onClick={() => setOpen(!open)} aria-expanded={open}>
            {open ? "Fold" : "Unfold"}
          </button>
        )}
      </div>
      <pre className="code-view code-view-numbered" data-testid="manifest-code">
        {out}
      </pre>
    </div>
  );
}
