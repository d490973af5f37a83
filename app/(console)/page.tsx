import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/server/db";
import { dashboardSummary } from "@/server/services/dashboard";
import { LiveFeed } from "./live-feed";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Dashboard" };

export default async function DashboardPage() {
  const { counts, recentRuns, pending } = await dashboardSummary(getDb());
  const stats = [
    { label: "Pending approvals", value: counts.pendingApprovals, href: "/approvals" },
    { label: "Runs (24 h)", value: counts.runsToday, href: "/runs" },
    { label: "Failed runs (24 h)", value: counts.failedToday, href: "/runs?status=error" },
    { label: "Capabilities", value: counts.capabilities, href: "/capabilities" },
  ];
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Dashboard</h1>
          <p>
            {counts.toolsets} toolsets · {counts.keys} active API keys
          </p>
        </div>
      </div>
      <div className="grid grid-4" style={{ marginBottom: 12 }}>
        {stats.map((s) => (
          <Link key={s.label} href={s.href} className="card" style={{ color: "inherit" }}>
            <div className="muted">{s.label}</div>
            <div className="stat">{s.value}</div>
          </Link>
        ))}
      </div>
      <div className="grid grid-2">
        <section className="card" aria-labelledby="pending-h">
          <h2 id="pending-h">Waiting for a decision</h2>
          {pending.length === 0 ? (
            <div className="empty">
              <strong>No pending approvals</strong>
              Calls that need a human appear here and in Approvals.
            </div>
          ) : (
            <table>
              <tbody>
                {pending.map((a) => (
                  <tr key={a.id}>
                    <td>
                      <code>{a.capability}</code>
                    </td>
                    <td>
                      <span className={`cat cat-${a.category}`}>{a.category}</span>
                    </td>
                    <td className="muted">{a.requestedBy}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
        <section className="card" aria-labelledby="runs-h">
          <h2 id="runs-h">Recent runs</h2>
          {recentRuns.length === 0 ? (
            <div className="empty">
              <strong>No runs yet</strong>
              Open the Playground and press Ctrl+Enter, or connect an MCP client with an API key.
            </div>
          ) : (
            <table>
              <tbody>
                {recentRuns.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <Link href={`/runs/${r.id}`}>{r.title || r.id.slice(-8)}</Link>
                    </td>
                    <td className="muted">{r.surface}</td>
                    <td>
                      <span
                        className={`pill ${r.status === "ok" ? "pill-ok" : r.status === "error" ? "pill-bad" : "pill-wait"}`}
                      >
                        {r.errorKind ?? r.status}
                      </span>
                    </td>
                    <td className="muted" title={r.startedAt.toISOString()}>
                      {r.durationMs != null ? `${r.durationMs} ms` : "…"}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>
      <LiveFeed />
    </>
  );
}
