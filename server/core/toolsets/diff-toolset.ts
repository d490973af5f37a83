/**
 * What changed between two versions of a toolset, for the publish output and the console: bindings
 * added, removed and changed (signature, category, description), doc and code changes, and the
 * header declarations. Pure data in, data out.
 */
import { diffLines } from "diff";
import { codeFileOf } from "./parse-toolset";
import type { Category, ToolsetBinding, ToolsetDeclarations, ToolsetLanguage } from "./types";

export interface ToolsetVersionView {
  contentHash: string;
  doc: string;
  source: string;
  /** The code file's language; default typescript. */
  language?: ToolsetLanguage;
  bindings: ToolsetBinding[];
  declarations: ToolsetDeclarations;
}

export interface BindingSummary {
  name: string;
  category: Category;
  signature: string;
}

export interface BindingChange {
  name: string;
  signature?: { from: string; to: string };
  category?: { from: Category; to: Category };
  descriptionChanged: boolean;
}

export interface ToolsetDiff {
  /** Same content hash: nothing to publish. */
  identical: boolean;
  added: BindingSummary[];
  removed: BindingSummary[];
  changed: BindingChange[];
  doc: { changed: boolean; linesAdded: number; linesRemoved: number };
  /** The code changed (even when every binding's signature stayed the same). */
  codeChanged: boolean;
  /** The newer version's code file: toolset.ts or toolset.py. */
  codeFile: string;
  hosts: { added: string[]; removed: string[] };
  timeout?: { from?: number; to?: number };
  env: { added: string[]; removed: string[] };
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const summary = (b: ToolsetBinding): BindingSummary => ({
  name: b.name,
  category: b.category,
  signature: b.signature,
});

export function diffToolsetVersions(previous: ToolsetVersionView, next: ToolsetVersionView): ToolsetDiff {
  const before = new Map(previous.bindings.map((b) => [b.name, b]));
  const after = new Map(next.bindings.map((b) => [b.name, b]));
  const added = next.bindings.filter((b) => !before.has(b.name)).map(summary);
  const removed = previous.bindings.filter((b) => !after.has(b.name)).map(summary);
  const changed: BindingChange[] = [];
  for (const b of next.bindings) {
    const old = before.get(b.name);
    if (!old) continue;
    const change: BindingChange = { name: b.name, descriptionChanged: old.description !== b.description };
    if (canonical(old.inputSchema) !== canonical(b.inputSchema)) {
      change.signature = { from: old.signature, to: b.signature };
    }
    if (old.category !== b.category) change.category = { from: old.category, to: b.category };
    if (change.signature || change.category || change.descriptionChanged) changed.push(change);
  }
  let linesAdded = 0;
  let linesRemoved = 0;
  if (previous.doc !== next.doc) {
    for (const part of diffLines(previous.doc, next.doc)) {
      if (part.added) linesAdded += part.count ?? 0;
      if (part.removed) linesRemoved += part.count ?? 0;
    }
  }
  const setDiff = (a: string[], b: string[]) => ({
    added: b.filter((x) => !a.includes(x)),
    removed: a.filter((x) => !b.includes(x)),
  });
  const envNames = (d: ToolsetDeclarations) => d.env.map((e) => (e.secret ? `${e.name} (secret)` : e.name));
  const diff: ToolsetDiff = {
    identical: previous.contentHash === next.contentHash,
    added,
    removed,
    changed,
    doc: { changed: previous.doc !== next.doc, linesAdded, linesRemoved },
    codeChanged: previous.source !== next.source,
    codeFile: codeFileOf(next.language ?? "typescript"),
    hosts: setDiff(previous.declarations.hosts, next.declarations.hosts),
    env: setDiff(envNames(previous.declarations), envNames(next.declarations)),
  };
  if (previous.declarations.timeoutMs !== next.declarations.timeoutMs) {
    diff.timeout = { from: previous.declarations.timeoutMs, to: next.declarations.timeoutMs };
  }
  return diff;
}

/** Lines for a terminal or a log: `+` added, `-` removed, `~` changed. */
export function formatToolsetDiff(diff: ToolsetDiff): string[] {
  if (diff.identical) return ["no changes"];
  const lines: string[] = [];
  for (const b of diff.added) lines.push(`+ ${b.name} [${b.category}]  ${b.signature}`);
  for (const b of diff.removed) lines.push(`- ${b.name} [${b.category}]  ${b.signature}`);
  for (const c of diff.changed) {
    if (c.signature)
      lines.push(`~ ${c.name} signature:\n    was: ${c.signature.from}\n    now: ${c.signature.to}`);
    if (c.category) lines.push(`~ ${c.name} category: ${c.category.from} -> ${c.category.to}`);
    if (c.descriptionChanged) lines.push(`~ ${c.name} description changed`);
  }
  if (diff.doc.changed)
    lines.push(`~ doc.md changed (+${diff.doc.linesAdded} -${diff.doc.linesRemoved} lines)`);
  const bindingsTouched = diff.added.length + diff.removed.length + diff.changed.length > 0;
  if (diff.codeChanged && !bindingsTouched)
    lines.push(`~ ${diff.codeFile} changed (same bindings and signatures)`);
  if (diff.hosts.added.length + diff.hosts.removed.length > 0) {
    lines.push(
      `~ @hosts: ${[...diff.hosts.added.map((h) => `+${h}`), ...diff.hosts.removed.map((h) => `-${h}`)].join(" ")}`,
    );
  }
  if (diff.timeout)
    lines.push(`~ @timeout: ${diff.timeout.from ?? "unset"} -> ${diff.timeout.to ?? "unset"}`);
  if (diff.env.added.length + diff.env.removed.length > 0) {
    lines.push(
      `~ @env: ${[...diff.env.added.map((e) => `+${e}`), ...diff.env.removed.map((e) => `-${e}`)].join(" ")}`,
    );
  }
  return lines;
}
