/** The console's "nothing here" box: a bold title, then what to do about it. */
import type { ReactNode } from "react";

export function EmptyState({
  title,
  className,
  children,
}: {
  title: ReactNode;
  /** More classes: `card` for a box of its own, `empty-compact` inside a card. */
  className?: string;
  children?: ReactNode;
}) {
  return (
    <div className={className ? `empty ${className}` : "empty"}>
      <strong>{title}</strong>
      {children}
    </div>
  );
}
