import type { Metadata } from "next";
import Link from "next/link";
import { DataTable } from "@/app/_components/data-table";
import { JsonView } from "@/app/_components/json-view";
import { RelativeTime } from "@/app/_components/relative-time";
import { getDb } from "@/server/db";
import { listAuditEntries, parseAuditQuery } from "@/server/infra/audit-log";
import { Forbidden } from "../../_components/forbidden";
import { requireRole } from "../../_lib/session";
import "../workbench.css";
import "./audit.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Audit" };

const PAGE = 100;

function parsed(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export default async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { user, allowed } = await requireRole("admin");
  if (!allowed) return <Forbidden need="admin" have={user.role} />;
  const raw = await searchParams;
  const query = parseAuditQuery(raw);
  const entries = await listAuditEntries(getDb(), { ...query, limit: PAGE });
  const text = (k: string) => (typeof raw[k] === "string" ? (raw[k] as string) : "");
  const params = (extra: Record<string, string | undefined>) => {
    const p = new URLSearchParams();
    for (const k of ["action", "actor", "target", "from", "to"]) if (text(k)) p.set(k, text(k));
    for (const [k, v] of Object.entries(extra)) if (v) p.set(k, v);
    return p.toString();
  };
  const filtered = ["action", "actor", "target", "from", "to"].some((k) => text(k));
  const last = entries.at(-1);
  return (
    <div className="audit-page">
      <div className="page-head">
        <div>
          <h1>Audit</h1>
          <p>
            Every gate decision and every admin action, newest first. Each entry carries the hash of the one
            before; <code>npm run toolstore -- audit verify</code> checks the whole chain.
          </p>
        </div>
        <a className="btn" href={`/api/audit/export?${params({})}`} download>
          Export JSON lines
        </a>
      </div>
      <form className="filters" method="get" action="/audit" aria-label="Filter the audit log">
        <label>
          Action
          <input name="action" defaultValue={text("action")} placeholder="gate. · rules. · apiKeys.revoke" />
        </label>
        <label>
          Who
          <input name="actor" defaultValue={text("actor")} placeholder="username or gate" />
        </label>
        <label>
          Target
          <input name="target" defaultValue={text("target")} placeholder="rule:… · weather.get_weather" />
        </label>
        <label>
          From
          <input name="from" type="date" defaultValue={text("from")} />
        </label>
        <label>
          To
          <input name="to" type="date" defaultValue={text("to")} />
        </label>
        <button type="submit" className="btn btn-sm">
          Filter
        </button>
        {filtered && <Link href="/audit">Clear</Link>}
      </form>
      <div className="card" style={{ padding: 0 }}>
        {entries.length === 0 ? (
          <div className="empty">
            {filtered ? (
              <>
                <strong>No entries match these filters</strong>
                <Link href="/audit">Clear the filters</Link> to see the whole log.
              </>
            ) : (
              <>
                <strong>The audit log is empty</strong>
                Entries appear when an action calls a capability or an admin changes something.
              </>
            )}
          </div>
        ) : (
          <DataTable
            label="Audit entries"
            className="runs-table audit-table"
            dense={false}
            rows={entries}
            rowKey={(e) => e.id}
            rowProps={(e) => ({ "data-testid": `audit-${e.seq}` })}
            columns={[
              { label: "#", className: "num mono", headClassName: "num", cell: (e) => e.seq },
              { label: "When", className: "muted", cell: (e) => <RelativeTime value={e.at} /> },
              {
                label: "Who",
                cell: (e) => (
                  <>
                    {e.actorName || e.actorType}
                    <div className="small muted">{e.actorType}</div>
                  </>
                ),
              },
              { label: "Action", cell: (e) => <code>{e.action}</code> },
              { label: "Target", className: "audit-target", cell: (e) => e.target },
              { label: "Details", cell: (e) => <AuditDetails entry={e} /> },
            ]}
          />
        )}
      </div>
      <div className="row" style={{ justifyContent: "space-between", marginTop: 10 }}>
        {query.beforeSeq ? <Link href={`/audit?${params({})}`}>← Newest entries</Link> : <span />}
        {entries.length === PAGE && last && (
          <Link href={`/audit?${params({ before: String(last.seq) })}`}>Older entries →</Link>
        )}
      </div>
    </div>
  );
}

type AuditEntry = Awaited<ReturnType<typeof listAuditEntries>>[number];

/** The entry's before and after state and its details, folded. */
function AuditDetails({ entry: e }: { entry: AuditEntry }) {
  return (
    <details>
      <summary className="small">
        {e.before !== null || e.after !== null ? "before / after" : "details"}
      </summary>
      <div className="audit-detail">
        {e.before !== null && <Labelled label="Before" value={parsed(e.before)} />}
        {e.after !== null && <Labelled label="After" value={parsed(e.after)} />}
        <Labelled label="Details" value={parsed(e.detail)} />
        <div className="small muted mono">hash {e.hash.slice(0, 16)}…</div>
      </div>
    </details>
  );
}

function Labelled({ label, value }: { label: string; value: unknown }) {
  return (
    <div>
      <div className="small muted">{label}</div>
      <JsonView value={value} />
    </div>
  );
}
