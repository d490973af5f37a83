"use client";
import { useEffect, useState } from "react";
import { JsonView } from "@/app/_components/json-view";
import { TabPanel, Tabs } from "@/app/_components/tabs";
import type { ObservationEnvelope } from "@/server/core/actions/envelope";

type Tab = "result" | "logs" | "error" | "images";
const TABS: { id: Tab; label: string }[] = [
  { id: "result", label: "Result" },
  { id: "logs", label: "Logs" },
  { id: "error", label: "Error" },
  { id: "images", label: "Images" },
];

/** Result, logs, error and images of an envelope, each in its own tab. */
export function OutputPanes({
  envelope,
  running,
  idPrefix = "out",
}: {
  envelope: ObservationEnvelope | null;
  running: boolean;
  idPrefix?: string;
}) {
  const [tab, setTab] = useState<Tab>("result");
  useEffect(() => {
    if (envelope) setTab(envelope.ok ? "result" : "error");
  }, [envelope]);
  const counts: Record<Tab, number | null> = {
    result: null,
    logs: envelope?.logs.length ?? null,
    error: envelope ? (envelope.error ? 1 : 0) : null,
    images: envelope?.images.length ?? null,
  };
  return (
    <div className="out">
      <Tabs
        label="Output"
        idPrefix={idPrefix}
        selected={tab}
        onSelect={setTab}
        tabs={TABS.map((t) => ({
          id: t.id,
          label: (
            <>
              {t.label}
              {counts[t.id] ? <span className="tab-count">{counts[t.id]}</span> : null}
            </>
          ),
          ...(t.id === "error" && envelope?.error ? { className: "tab-bad" } : {}),
        }))}
      />
      <TabPanel className="out-body" idPrefix={idPrefix} selected={tab} data-testid={`pane-${tab}`}>
        {!envelope ? (
          <div className="empty">
            {running
              ? "Running… the output appears when the action finishes."
              : "Run the action to see its output."}
          </div>
        ) : (
          <Pane tab={tab} envelope={envelope} />
        )}
      </TabPanel>
    </div>
  );
}

function Pane({ tab, envelope }: { tab: Tab; envelope: ObservationEnvelope }) {
  switch (tab) {
    case "result":
      if (!envelope.ok) return <div className="empty">No result: the action failed. See Error.</div>;
      if (envelope.result === undefined)
        return <div className="empty">The action returned nothing. Return a JSON value to see it here.</div>;
      return <JsonView value={envelope.result} label="Result" />;
    case "logs":
      if (envelope.logs.length === 0)
        return <div className="empty">No logs. console.log output of the action appears here.</div>;
      return (
        <ol className="logs">
          {envelope.logs.map((l, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: log lines have no identity but their order
            <li key={i} className={`log log-${l.level}`}>
              <span className="log-level">{l.level}</span>
              <pre>{l.text}</pre>
            </li>
          ))}
        </ol>
      );
    case "error":
      if (!envelope.error) return <div className="empty">No error. The action finished normally.</div>;
      return (
        <div className="stack">
          <div className="error-box" role="alert">
            <code>{envelope.error.kind}</code> {envelope.error.message}
          </div>
          {envelope.error.stack && <pre className="muted stacktrace">{envelope.error.stack}</pre>}
        </div>
      );
    case "images":
      if (envelope.images.length === 0)
        return (
          <div className="empty">
            No images. Save a PNG with <code>save</code> from <code>toolstore/assets</code> to show it here.
          </div>
        );
      return <ImageGrid images={envelope.images} />;
  }
}

export function ImageGrid({ images }: { images: { asset_id: string; width: number; height: number }[] }) {
  return (
    <div className={images.length === 1 ? "images images-1" : "images"}>
      {images.map((img, i) => (
        <figure key={img.asset_id} className="image">
          <a href={`/api/assets/${img.asset_id}`} target="_blank" rel="noreferrer">
            {/* biome-ignore lint/performance/noImgElement: bytes come from our own authenticated route */}
            <img
              src={`/api/assets/${img.asset_id}`}
              alt={`Output ${i + 1} of the run, ${img.width}×${img.height} PNG`}
              width={img.width}
              height={img.height}
            />
          </a>
          <figcaption className="muted mono">
            {img.width}×{img.height} · #{img.asset_id.slice(-8)}
          </figcaption>
        </figure>
      ))}
    </div>
  );
}
