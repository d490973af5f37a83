"use client";
/**
 * A list page's search box in its toolbar: labelled and placeholdered with `label`, focused by "/"
 * from anywhere on the page, with whatever the page puts beside it (a count, filter chips).
 */
import { type ReactNode, useRef } from "react";
import { useSlashToFocus } from "./use-slash-to-focus";

export function SearchToolbar({
  label,
  query,
  onQuery,
  children,
}: {
  /** "Search toolsets": the box's accessible name and its placeholder. */
  label: string;
  query: string;
  onQuery: (query: string) => void;
  /** Beside the box: a count, chips, a heading for screen readers. */
  children?: ReactNode;
}) {
  const input = useRef<HTMLInputElement>(null);
  useSlashToFocus(input);
  return (
    <div className="toolbar">
      <label className="search">
        <span className="visually-hidden">{label}</span>
        <input
          ref={input}
          type="search"
          placeholder={label}
          value={query}
          onChange={(e) => onQuery(e.target.value)}
        />
        <kbd aria-hidden>/</kbd>
      </label>
      {children}
    </div>
  );
}

/** "3 toolsets", "1 skill": a count beside the search box. */
export function ListCount({ count, noun }: { count: number; noun: string }) {
  return (
    <span className="muted small">
      {count} {noun}
      {count === 1 ? "" : "s"}
    </span>
  );
}
