/** A server's connection status in the console's pill colours. */
export function ServerStatus({ status }: { status: string }) {
  const tone =
    status === "ready"
      ? "pill-ok"
      : status === "error" || status === "unauthorized"
        ? "pill-bad"
        : "pill-wait";
  return <span className={`pill ${tone}`}>{status}</span>;
}
