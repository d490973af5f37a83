"use client";
/**
 * The console's one tab list (WAI-ARIA tabs): roving tabindex, Left/Right arrows wrap, Home/End,
 * aria-selected and aria-controls; selection follows focus. Pair it with <TabPanel> of the same
 * idPrefix.
 */
import { type CSSProperties, type KeyboardEvent, type ReactNode, useRef } from "react";

export interface TabItem<T extends string> {
  id: T;
  label: ReactNode;
  /** Extra class on the tab button (e.g. a warning colour). */
  className?: string;
}

export function Tabs<T extends string>({
  tabs,
  selected,
  onSelect,
  label,
  idPrefix,
  style,
}: {
  tabs: readonly TabItem<T>[];
  selected: T;
  onSelect: (id: T) => void;
  /** The accessible name of the tab list. */
  label: string;
  idPrefix: string;
  style?: CSSProperties;
}) {
  const refs = useRef(new Map<T, HTMLButtonElement | null>());

  function onKeyDown(e: KeyboardEvent) {
    const i = tabs.findIndex((t) => t.id === selected);
    const last = tabs.length - 1;
    const next =
      e.key === "ArrowRight"
        ? i === last
          ? 0
          : i + 1
        : e.key === "ArrowLeft"
          ? i <= 0
            ? last
            : i - 1
          : e.key === "Home"
            ? 0
            : e.key === "End"
              ? last
              : -1;
    const target = tabs[next];
    if (!target) return;
    e.preventDefault();
    onSelect(target.id);
    refs.current.get(target.id)?.focus();
  }

  return (
    <div className="tabs" role="tablist" aria-label={label} onKeyDown={onKeyDown} style={style}>
      {tabs.map((t) => (
        <button
          key={t.id}
          ref={(el) => {
            refs.current.set(t.id, el);
          }}
          type="button"
          role="tab"
          id={`${idPrefix}-tab-${t.id}`}
          aria-controls={`${idPrefix}-panel-${t.id}`}
          aria-selected={t.id === selected}
          tabIndex={t.id === selected ? 0 : -1}
          className={t.className ? `tab ${t.className}` : "tab"}
          onClick={() => onSelect(t.id)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

/** The panel of the selected tab. */
export function TabPanel({
  idPrefix,
  selected,
  className,
  children,
  ...rest
}: {
  idPrefix: string;
  selected: string;
  className?: string;
  children: ReactNode;
  "data-testid"?: string;
}) {
  return (
    <div
      role="tabpanel"
      id={`${idPrefix}-panel-${selected}`}
      aria-labelledby={`${idPrefix}-tab-${selected}`}
      className={className}
      data-testid={rest["data-testid"]}
    >
      {children}
    </div>
  );
}
