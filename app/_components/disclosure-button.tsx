/**
 * A button that shows or hides something next to it ("Upload…", "Show change"): it says whether
 * that is open (aria-expanded) and flips it when pressed.
 */
import type { ReactNode } from "react";

export function DisclosureButton({
  open,
  onToggle,
  className = "btn",
  title,
  children,
}: {
  open: boolean;
  onToggle: (open: boolean) => void;
  className?: string;
  title?: string;
  children: ReactNode;
}) {
  return (
    <button
      type="button"
      className={className}
      aria-expanded={open}
      title={title}
      onClick={() => onToggle(!open)}
    >
      {children}
    </button>
  );
}
