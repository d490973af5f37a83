import type { Metadata } from "next";
import Link from "next/link";
import { DataTable } from "@/app/_components/data-table";
import { SURFACES } from "@/server/core/capabilities/types";
import { getDb } from "@/server/db";
import { latestEventSeq } from "@/server/infra/events";
import { listRuns, parseRunFilters, RUN_STATUSES, runFilterOptions } from "@/server/services/runs";
import { requireUser } from "../../_lib/session";
import "../workbench.css";
import { FilterForm } from "./filter-form";
import { runDurationColumn, runStartedColumn, runStatusColumn, runSurfaceColumn } from "./run-columns";
import { RunsLive } from "./runs-live";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Runs" };

export default async function RunsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  await requireUser();
  const db = getDb();
  const filters = parseRunFilters(await searchParams);
  // Read before the list: the live refresh replays what happens after it.
  const since = await latestEventSeq(db);
  const [{ runs, nextBefore }, options] = await Promise.all([listRuns(db, filters), runFilterOptions(db)]);
  const filtered = Boolean(filters.surface || filters.status || filters.key || filters.capability);
  const query = (extra: Record<string, string | undefined>) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...filters, ...extra })) if (v) params.set(k, v);
    return `/runs?${params.toString()}`;
  };
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Runs</h1>
          <p>Every action from the playground, MCP clients and the command line, newest first.</p>
        </div>
      </div>
      <FilterForm
        key={JSON.stringify(filters)}
        values={filters}
        surfaces={[...SURFACES]}
        statuses={[...RUN_STATUSES]}
        keys={options.keys}
        capabilities={options.capabilities}
      />
      {!filters.before && <RunsLive since={since} />}
      <div className="card" style={{ padding: 0 }}>
        {runs.length === 0 ? (
          <div className="empty">
            {filtered ? (
              <>
                <strong>No runs match these filters</strong>
                <Link href="/runs">Clear the filters</Link> to see every run.
              </>
            ) : (
              <>
                <strong>No runs yet</strong>
                Open the <Link href="/playground">Playground</Link> and press Ctrl+Enter, or connect an MCP
                client with an <Link href="/keys">API key</Link>.
              </>
            )}
          </div>
        ) : (
          <DataTable
            label="Runs"
            className="runs-table"
            dense={false}
            rows={runs}
            rowKey={(r) => r.id}
            columns={[
              {
                label: "Run",
                cell: (r) => (
                  <>
                    <Link href={`/runs/${r.id}`}>{r.title || "Untitled"}</Link>{" "}
                    <span className="muted mono">#{r.id.slice(-6)}</span>
                  </>
                ),
              },
              runStatusColumn(),
              runSurfaceColumn(),
              { label: "Who", cell: (r) => r.who },
              { label: "Mode", className: "muted", cell: (r) => r.mode },
              { label: "Calls", className: "num mono", headClassName: "num", cell: (r) => r.calls },
              runDurationColumn(),
              runStartedColumn(),
            ]}
          />
        )}
      </div>
      <div className="row" style={{ justifyContent: "space-between", marginTop: 10 }}>
        {filters.before ? <Link href={query({ before: undefined })}>← Newest runs</Link> : <span />}
        {nextBefore && <Link href={query({ before: nextBefore })}>Older runs →</Link>}
      </div>
    </>
  );
}
