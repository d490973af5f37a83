"use client";
import { useEffect, useState } from "react";

/** Copies `text` to the clipboard; says so for two seconds (also to screen readers). */
export function CopyButton({
  text,
  label = "Copy",
  className,
}: {
  text: string;
  label?: string;
  className?: string;
}) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const t = setTimeout(() => setState("idle"), 2000);
    return () => clearTimeout(t);
  }, [state]);
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      setState("failed");
    }
  }
  return (
    <button type="button" className={className ?? "btn btn-sm"} onClick={copy} aria-live="polite">
      {state === "copied" ? "Copied ✓" : state === "failed" ? "Select and copy" : label}
    </button>
  );
}
