import type { Metadata } from "next";
import Link from "next/link";
import { CategoryBadge } from "@/app/_components/category-badge";
import { Countdown } from "@/app/_components/countdown";
import { DataTable } from "@/app/_components/data-table";
import { APPROVAL_EVENT_TYPES, RUN_STATE_EVENT_TYPES } from "@/server/core/event-types";
import { getDb } from "@/server/db";
import { latestEventSeq } from "@/server/infra/events";
import { dashboardSummary } from "@/server/services/dashboard";
import { requireUser } from "../_lib/session";
import { LiveFeed } from "./live-feed";
import { runDurationColumn, runStartedColumn, runStatusColumn, runSurfaceColumn } from "./runs/run-columns";
import { RunsLive } from "./runs/runs-live";
import "./workbench.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Dashboard" };

/** The dashboard's short lists: no visible header, and a grid that scrolls on a phone. */
const COMPACT = { className: "compact-table", dense: false, cards: false, hideHeader: true } as const;

const REFRESH_ON = [...RUN_STATE_EVENT_TYPES, ...APPROVAL_EVENT_TYPES];

export default async function DashboardPage() {
  // Like every page: the layout's check does not guard a page rendered on its own (RSC requests).
  await requireUser();
  const db = getDb();
  // Read before the summary: the live views replay what happens after it.
  const latestSeq = await latestEventSeq(db);
  const { counts, recentRuns, pending } = await dashboardSummary(db);
  const stats = [
    {
      label: "Pending approvals",
      value: counts.pendingApprovals,
      href: "/approvals",
      hot: counts.pendingApprovals > 0,
    },
    { label: "Runs (24 h)", value: counts.runsToday, href: "/runs" },
    { label: "Failed runs (24 h)", value: counts.failedToday, href: "/runs?status=error" },
    { label: "Capabilities", value: counts.capabilities, href: "/capabilities" },
  ];
  return (
    <>
      <RunsLive since={latestSeq} types={REFRESH_ON} />
      <div className="page-head">
        <div>
          <h1>Dashboard</h1>
          <p>
            {counts.toolsets} toolset{counts.toolsets === 1 ? "" : "s"} · {counts.keys} active API key
            {counts.keys === 1 ? "" : "s"}
          </p>
        </div>
        <Link href="/playground" className="btn btn-primary">
          Open the Playground
        </Link>
      </div>
      <div className="grid grid-4" style={{ marginBottom: 12 }}>
        {stats.map((s) => (
          <Link
            key={s.label}
            href={s.href}
            className={`card stat-card${s.hot ? " stat-hot" : ""}`}
            style={{ color: "inherit" }}
          >
            <div className="muted">{s.label}</div>
            <div className="stat">{s.value}</div>
          </Link>
        ))}
      </div>
      <div className="grid grid-2">
        <section className="card" aria-labelledby="pending-h">
          <div className="row" style={{ justifyContent: "space-between" }}>
            <h2 id="pending-h">Waiting for a decision</h2>
            {pending.length > 0 && <Link href="/approvals">Open the queue →</Link>}
          </div>
          {pending.length === 0 ? (
            <div className="empty">
              <strong>No pending approvals</strong>
              Calls that need a human appear here and in <Link href="/approvals">Approvals</Link>.
            </div>
          ) : (
            <DataTable
              {...COMPACT}
              rows={pending}
              rowKey={(a) => a.id}
              columns={[
                {
                  label: "Capability",
                  cell: (a) => (
                    <Link href={`/approvals#${a.id}`}>
                      <code>{a.capability}</code>
                    </Link>
                  ),
                },
                { label: "Category", cell: (a) => <CategoryBadge category={a.category} /> },
                { label: "Asked by", className: "muted", cell: (a) => a.requestedBy },
                {
                  label: "Expires in",
                  className: "num",
                  headClassName: "num",
                  cell: (a) => <Countdown until={a.expiresAt.getTime()} />,
                },
              ]}
            />
          )}
        </section>
        <section className="card" aria-labelledby="runs-h">
          <div className="row" style={{ justifyContent: "space-between" }}>
            <h2 id="runs-h">Recent runs</h2>
            {recentRuns.length > 0 && <Link href="/runs">All runs →</Link>}
          </div>
          {recentRuns.length === 0 ? (
            <div className="empty">
              <strong>No runs yet</strong>
              Open the <Link href="/playground">Playground</Link> and press Ctrl+Enter, or connect an MCP
              client with an API key.
            </div>
          ) : (
            <DataTable
              {...COMPACT}
              rows={recentRuns}
              rowKey={(r) => r.id}
              columns={[
                {
                  label: "Run",
                  className: "truncate",
                  cell: (r) => (
                    <Link href={`/runs/${r.id}`} title={r.title}>
                      {r.title || `#${r.id.slice(-6)}`}
                    </Link>
                  ),
                },
                { ...runSurfaceColumn(), className: "muted wide-only", headClassName: "wide-only" },
                runStatusColumn(),
                { ...runDurationColumn("muted num mono wide-only"), headClassName: "num wide-only" },
                runStartedColumn(),
              ]}
            />
          )}
        </section>
      </div>
      <LiveFeed since={Math.max(0, latestSeq - 12)} />
    </>
  );
}
