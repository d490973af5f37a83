import type { Metadata } from "next";
import Link from "next/link";
import { CopyButton } from "@/app/_components/copy-button";
import { JsonView } from "@/app/_components/json-view";
import { RelativeTime } from "@/app/_components/relative-time";
import { isAppError } from "@/server/core/errors";
import { getDb } from "@/server/db";
import { latestEventSeq } from "@/server/infra/events";
import { getRunManifests } from "@/server/services/action-manifest";
import { getRunDetail } from "@/server/services/runs";
import { requireUser } from "../../../_lib/session";
import { ActionManifestView } from "../../_run/action-manifest";
import { OutputPanes } from "../../_run/output-panes";
import { Timeline } from "../../_run/timeline";
import "../../workbench.css";
import { InterruptedNote } from "../interrupted-note";
import { ParkedNote } from "../parked-note";
import { StatusPill } from "../status-pill";
import { RunLive } from "./run-live";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Run" };

export default async function RunPage({ params }: { params: Promise<{ id: string }> }) {
  const user = await requireUser();
  const { id } = await params;
  const db = getDb();
  // Taken before the run is read, so the live view misses nothing that happens in between.
  const afterSeq = await latestEventSeq(db);
  let run: Awaited<ReturnType<typeof getRunDetail>>;
  try {
    run = await getRunDetail(db, id);
  } catch (error) {
    if (!isAppError(error) || error.code !== "NOT_FOUND") throw error;
    return (
      <div className="card empty" role="alert">
        <strong>
          <code>NOT_FOUND</code> There is no run {id}.
        </strong>
        It may have been removed. See every run in <Link href="/runs">Runs</Link>.
      </div>
    );
  }
  const running = run.status === "running" || run.status === "queued";
  // A parked run resumes after its approval: the page follows it as it follows a running one.
  const live = running || run.status === "waiting";
  const manifest = (await getRunManifests(db, [run.id])).get(run.id);
  const waiting = run.timeline.filter((r) => r.state === "waiting").map((r) => r.capability);
  return (
    <>
      <nav aria-label="Breadcrumb" className="muted crumbs">
        <Link href="/runs">Runs</Link> / <span className="mono">{run.id.slice(-8)}</span>
      </nav>
      <div className="page-head">
        <div>
          <h1>{run.title || "Untitled run"}</h1>
          <p className="row" style={{ gap: 6 }}>
            <StatusPill status={run.status} errorKind={run.errorKind} />
            <span>
              {run.surface} · {run.who} · mode {run.mode} · started <RelativeTime value={run.startedAt} />
              {run.durationMs != null ? ` · ${run.durationMs} ms` : ""}
            </span>
            {run.replays > 0 && (
              <span
                className="pill"
                data-testid="run-replays"
                title="Each time, the action ran again from the start and the calls it had made were answered from its journal"
              >
                resumed from its journal {run.replays === 1 ? "once" : `${run.replays} times`}
              </span>
            )}
          </p>
        </div>
        <div className="row">
          <span className="mono muted">{run.id}</span>
          <CopyButton text={run.id} label="Copy id" />
        </div>
      </div>
      {live && <RunLive runId={run.id} afterSeq={afterSeq} />}
      {run.parked && <ParkedNote parked={run.parked} />}
      {run.status === "interrupted" && <InterruptedNote envelope={run.envelope} />}
      <div className="run-grid">
        <section className="card" aria-labelledby="code-h">
          <h2 id="code-h">Action</h2>
          {manifest ? (
            <ActionManifestView manifest={manifest} highlight={waiting} showCalls={false} />
          ) : (
            <pre className="code-view">{run.code}</pre>
          )}
        </section>
        <section className="card" aria-labelledby="tl-h">
          <h2 id="tl-h">Gate decisions</h2>
          {running && <div className="progress" role="progressbar" aria-label="Run in progress" />}
          <Timeline
            rows={run.timeline}
            canDecide={user.role !== "viewer"}
            empty={
              <>
                <strong>No capability calls</strong>
                {live ? "Calls appear here as the gate decides them." : "This action called no capability."}
              </>
            }
          />
        </section>
      </div>
      <section className="card out-card" aria-label="Output" style={{ marginTop: 12 }}>
        <OutputPanes envelope={run.envelope} running={live} idPrefix="run" />
      </section>
      <section className="card" aria-labelledby="env-h" style={{ marginTop: 12 }}>
        <details>
          <summary>
            <h2 id="env-h" style={{ display: "inline" }}>
              Envelope
            </h2>{" "}
            <span className="muted">what the surface received, as JSON</span>
          </summary>
          {run.envelope ? (
            <div style={{ marginTop: 8 }}>
              <JsonView value={run.envelope} label="Envelope" />
            </div>
          ) : (
            <div className="empty">The run has not finished; its envelope appears when it does.</div>
          )}
        </details>
      </section>
    </>
  );
}
