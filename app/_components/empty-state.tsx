/** The console's "nothing here" box: a bold title, then what to do about it. */
import type { ReactNode } from "react";

export function EmptyState({ title, children }: { title: ReactNode; children?: ReactNode }) {
  return (
    <div className="empty">
      <strong>{title}</strong>
      {children}
    </div>
  );
}
