"use client";
import { useEffect, useState } from "react";

export function formatLeft(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, "0")}`;
}

/** "expires in 4:12", ticking each second; "expired" once the time is up. */
export function Countdown({ until, prefix = "expires in" }: { until: number; prefix?: string }) {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  if (now === null) return <span className="muted">{prefix} …</span>;
  const left = until - now;
  const urgent = left < 60_000;
  return (
    <time
      dateTime={new Date(until).toISOString()}
      title={new Date(until).toLocaleString()}
      className={left <= 0 ? "countdown expired" : urgent ? "countdown urgent" : "countdown"}
    >
      {left <= 0 ? "expired" : `${prefix} ${formatLeft(left)}`}
    </time>
  );
}
