/**
 * A button that starts something slow (a publish, a sync, a reconnect): disabled and saying so
 * ("Publishing…") while it runs, so a second press cannot start it twice.
 */
import type { ReactNode } from "react";

export function BusyButton({
  busy,
  busyLabel,
  onClick,
  className = "btn",
  title,
  spinner = false,
  children,
}: {
  busy: boolean;
  /** What the button says while busy. */
  busyLabel: ReactNode;
  onClick: () => void;
  className?: string;
  title?: string;
  /** Show a spinner before the busy label. */
  spinner?: boolean;
  children: ReactNode;
}) {
  return (
    <button type="button" className={className} disabled={busy} onClick={onClick} title={title}>
      {!busy ? (
        children
      ) : spinner ? (
        <>
          <span className="spinner" aria-hidden /> {busyLabel}
        </>
      ) : (
        busyLabel
      )}
    </button>
  );
}
