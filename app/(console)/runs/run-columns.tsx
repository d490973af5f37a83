/** Table columns a run shows in every list of runs (the Runs page, the dashboard's recent runs). */
import type { Column } from "@/app/_components/data-table";
import { RelativeTime } from "@/app/_components/relative-time";
import { StatusPill } from "./status-pill";

interface RunCells {
  status: string;
  errorKind: string | null;
  surface: string;
  durationMs: number | null;
  startedAt: Date | string;
}

export function runStatusColumn<R extends RunCells>(): Column<R> {
  return { label: "Status", cell: (r) => <StatusPill status={r.status} errorKind={r.errorKind} /> };
}

export function runSurfaceColumn<R extends RunCells>(): Column<R> {
  return { label: "Surface", className: "muted", cell: (r) => r.surface };
}

/** `…` while the run is going. */
export function runDurationColumn<R extends RunCells>(className = "num mono"): Column<R> {
  return {
    label: "Duration",
    className,
    headClassName: "num",
    cell: (r) => (r.durationMs != null ? `${r.durationMs} ms` : "…"),
  };
}

export function runStartedColumn<R extends RunCells>(): Column<R> {
  return { label: "Started", className: "muted", cell: (r) => <RelativeTime value={r.startedAt} /> };
}
