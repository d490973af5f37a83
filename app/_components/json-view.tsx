"use client";
import { useState } from "react";

/**
 * A JSON value as an indented, escaped tree. Nothing is rendered as HTML: every key and string
 * goes through React's text escaping. Long strings and large objects are folded with their size.
 */

const LONG_STRING = 160;
const FOLD_BYTES = 1500;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

function sizeOf(value: unknown): number {
  try {
    return new TextEncoder().encode(JSON.stringify(value) ?? "").length;
  } catch {
    return 0;
  }
}

export function JsonView({ value, label }: { value: unknown; label?: string }) {
  return (
    <div className="json" data-label={label}>
      <Node value={value} depth={0} />
    </div>
  );
}

/** Parses JSON text and shows it; text that is not JSON is shown as escaped text. */
export function JsonText({ text, label }: { text: string; label?: string }) {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return <pre className="json">{text}</pre>;
  }
  return <JsonView value={value} label={label} />;
}

function Node({ value, depth }: { value: unknown; depth: number }) {
  if (value === null) return <span className="json-lit">null</span>;
  if (typeof value === "string") return <StringValue value={value} />;
  if (typeof value === "number") return <span className="json-num">{String(value)}</span>;
  if (typeof value === "boolean") return <span className="json-lit">{String(value)}</span>;
  if (Array.isArray(value) || typeof value === "object") {
    return <Container value={value as object} depth={depth} />;
  }
  return <span className="json-lit">{String(value)}</span>;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const MAGIC: [string, string][] = [
  ["iVBORw0KGgo", "image/png"],
  ["/9j/", "image/jpeg"],
  ["R0lGOD", "image/gif"],
  ["UklGR", "image/webp"],
];

/**
 * A data URL for a string that holds a raster image (base64, or a base64 data URL), so the
 * picture is shown instead of the blob. SVG is never shown: it is markup, not pixels.
 */
export function imageDataUrl(value: string): string | null {
  if (value.length < 32) return null;
  const m = /^data:(image\/(?:png|jpeg|gif|webp));base64,(.*)$/s.exec(value);
  const body = m ? (m[2] ?? "") : value;
  if (!BASE64.test(body)) return null;
  const mime = m ? m[1] : MAGIC.find(([magic]) => body.startsWith(magic))?.[1];
  return mime ? `data:${mime};base64,${body}` : null;
}

function StringValue({ value }: { value: string }) {
  const image = imageDataUrl(value);
  if (image) {
    return (
      <span className="json-str">
        {/* biome-ignore lint/performance/noImgElement: a data URL of the argument itself, not a page asset */}
        <img
          className="img-preview"
          src={image}
          alt={`the argument's ${image.slice(11, image.indexOf(";"))}, ${formatBytes(sizeOf(value))}`}
        />
        <TextValue value={value} />
      </span>
    );
  }
  return <TextValue value={value} />;
}

function TextValue({ value }: { value: string }) {
  const [open, setOpen] = useState(false);
  if (value.length <= LONG_STRING || open) {
    return (
      <span className="json-str">
        {JSON.stringify(value)}
        {open && (
          <button type="button" className="json-toggle" onClick={() => setOpen(false)}>
            show less
          </button>
        )}
      </span>
    );
  }
  return (
    <span className="json-str">
      {JSON.stringify(value.slice(0, LONG_STRING)).slice(0, -1)}…"
      <button
        type="button"
        className="json-toggle"
        onClick={() => setOpen(true)}
        aria-label={`Show all ${formatBytes(sizeOf(value))} of this text`}
      >
        {formatBytes(sizeOf(value))}, show all
      </button>
    </span>
  );
}

function Container({ value, depth }: { value: object; depth: number }) {
  const isArray = Array.isArray(value);
  const entries = isArray
    ? (value as unknown[]).map((v, i) => [String(i), v] as const)
    : Object.entries(value);
  const size = sizeOf(value);
  const [open, setOpen] = useState(() => depth < 3 && size <= FOLD_BYTES * (depth === 0 ? 4 : 1));
  const [openBr, closeBr] = isArray ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) return <span className="json-punct">{`${openBr}${closeBr}`}</span>;
  const summary = `${entries.length} ${isArray ? (entries.length === 1 ? "item" : "items") : entries.length === 1 ? "key" : "keys"}, ${formatBytes(size)}`;
  if (!open) {
    return (
      <span>
        <span className="json-punct">{openBr}</span>
        <button type="button" className="json-toggle" onClick={() => setOpen(true)} aria-expanded={false}>
          {summary}
        </button>
        <span className="json-punct">{closeBr}</span>
      </span>
    );
  }
  return (
    <span>
      <span className="json-punct">{openBr}</span>
      {depth > 0 && (
        <button
          type="button"
          className="json-toggle json-fold"
          onClick={() => setOpen(false)}
          aria-expanded
          aria-label={`Fold (${summary})`}
        >
          −
        </button>
      )}
      <span className="json-body">
        {entries.map(([k, v], i) => (
          <span className="json-line" key={k}>
            {!isArray && <span className="json-key">{JSON.stringify(k)}</span>}
            {!isArray && <span className="json-punct">: </span>}
            <Node value={v} depth={depth + 1} />
            {i < entries.length - 1 && <span className="json-punct">,</span>}
          </span>
        ))}
      </span>
      <span className="json-punct">{closeBr}</span>
    </span>
  );
}
