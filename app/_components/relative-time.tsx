"use client";
import { useEffect, useState } from "react";

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["week", 7 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
];

export function relativeText(date: Date, now: number): string {
  const seconds = Math.round((date.getTime() - now) / 1000);
  if (Math.abs(seconds) < 45) return "just now";
  const fmt = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return fmt.format(Math.round(seconds / size), unit);
  }
  return fmt.format(Math.round(seconds / 60), "minute");
}

/** "3 minutes ago", with the absolute time on hover; refreshed every 30 s. */
export function RelativeTime({ value }: { value: Date | string | number | null | undefined }) {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(t);
  }, []);
  if (value == null) return <span className="muted">never</span>;
  const date = value instanceof Date ? value : new Date(value);
  const absolute = date.toLocaleString();
  return (
    <time dateTime={date.toISOString()} title={absolute}>
      {now === null ? absolute : relativeText(date, now)}
    </time>
  );
}
