/** A run's status: ok, the error kind, or running. */
export function StatusPill({ status, errorKind }: { status: string; errorKind: string | null }) {
  const cls =
    status === "ok"
      ? "pill pill-ok"
      : status === "error" || status === "interrupted"
        ? "pill pill-bad"
        : "pill pill-wait";
  return <span className={cls}>{status === "error" ? (errorKind ?? "error") : status}</span>;
}
