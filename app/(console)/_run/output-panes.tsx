"use client";
import { type KeyboardEvent, useEffect, useRef, useState } from "react";
import { JsonView } from "@/app/_components/json-view";
import type { ObservationEnvelope } from "@/server/core/actions/envelope";

type Tab = "result" | "logs" | "error" | "images";
const TABS: { id: Tab; label: string }[] = [
  { id: "result", label: "Result" },
  { id: "logs", label: "Logs" },
  { id: "error", label: "Error" },
  { id: "images", label: "Images" },
];

/** Result, logs, error and images of an envelope, each in its own tab (arrow keys move between them). */
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
  const tabRefs = useRef<Record<Tab, HTMLButtonElement | null>>({
    result: null,
    logs: null,
    error: null,
    images: null,
  });
  useEffect(() => {
    if (envelope) setTab(envelope.ok ? "result" : "error");
  }, [envelope]);
  const counts: Record<Tab, number | null> = {
    result: null,
    logs: envelope?.logs.length ?? null,
    error: envelope ? (envelope.error ? 1 : 0) : null,
    images: envelope?.images.length ?? null,
  };
  function onKey(e: KeyboardEvent) {
    if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
    const i = TABS.findIndex((t) => t.id === tab);
    const next = TABS[(i + (e.key === "ArrowRight" ? 1 : TABS.length - 1)) % TABS.length];
    if (!next) return;
    setTab(next.id);
    tabRefs.current[next.id]?.focus();
  }
  return (
    <div className="out">
      <div className="tabs" role="tablist" aria-label="Output" onKeyDown={onKey}>
        {TABS.map((t) => (
          <button
            key={t.id}
            ref={(el) => {
              tabRefs.current[t.id] = el;
            }}
            type="button"
            role="tab"
            id={`${idPrefix}-tab-${t.id}`}
            aria-controls={`${idPrefix}-panel-${t.id}`}
            aria-selected={tab === t.id}
            tabIndex={tab === t.id ? 0 : -1}
            className={`tab${t.id === "error" && envelope?.error ? " tab-bad" : ""}`}
            onClick={() => setTab(t.id)}
          >
            {t.label}
            {counts[t.id] ? <span className="tab-count">{counts[t.id]}</span> : null}
          </button>
        ))}
      </div>
      <div
        className="out-body"
        role="tabpanel"
        id={`${idPrefix}-panel-${tab}`}
        aria-labelledby={`${idPrefix}-tab-${tab}`}
        data-testid={`pane-${tab}`}
      >
        {!envelope ? (
          <div className="empty">
            {running
              ? "Running… the output appears when the action finishes."
              : "Run the action to see its output."}
          </div>
        ) : (
          <Pane tab={tab} envelope={envelope} />
        )}
      </div>
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
