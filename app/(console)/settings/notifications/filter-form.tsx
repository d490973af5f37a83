"use client";
/** Which requests notify me: all, none, or those of chosen categories, capability patterns or keys. */
import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ErrorNote } from "@/app/_components/error-note";
import { useTRPC } from "@/app/_lib/trpc";
import type { NotificationFilter } from "@/server/services/notifications/filter";

const CATEGORIES = ["read", "write", "execute", "external"] as const;

export function FilterForm({
  initial,
  keys,
  onSaved,
}: {
  initial: NotificationFilter;
  keys: { id: string; name: string }[];
  onSaved: () => void;
}) {
  const trpc = useTRPC();
  const save = useMutation(trpc.notifications.setFilter.mutationOptions({ onSuccess: onSaved }));
  const [filter, setFilter] = useState(initial);
  const [patterns, setPatterns] = useState(initial.capabilities.join(", "));

  function toggle<T extends string>(list: T[], value: T): T[] {
    return list.includes(value) ? list.filter((v) => v !== value) : [...list, value];
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const capabilities = patterns
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean);
    save.mutate({ ...filter, capabilities });
  }

  return (
    <form className="stack" onSubmit={submit} aria-label="Which requests notify me">
      <fieldset className="checks">
        {(["all", "matching", "none"] as const).map((mode) => (
          <label key={mode} className="check">
            <input
              type="radio"
              name="mode"
              checked={filter.mode === mode}
              onChange={() => setFilter({ ...filter, mode })}
            />
            {mode === "all" ? "Every request" : mode === "matching" ? "Only matching requests" : "None"}
          </label>
        ))}
      </fieldset>
      {filter.mode === "matching" && (
        <div className="stack" style={{ gap: 8 }}>
          <div className="checks">
            <span className="muted">Categories</span>
            {CATEGORIES.map((c) => (
              <label key={c} className="check">
                <input
                  type="checkbox"
                  checked={filter.categories.includes(c)}
                  onChange={() => setFilter({ ...filter, categories: toggle(filter.categories, c) })}
                />
                {c}
              </label>
            ))}
          </div>
          <label>
            Capabilities <span className="field-hint">comma separated; notes.* matches a whole module</span>
            <input
              value={patterns}
              onChange={(e) => setPatterns(e.target.value)}
              placeholder="notes.*, http.fetch"
            />
          </label>
          {keys.length > 0 && (
            <div className="checks">
              <span className="muted">API keys</span>
              {keys.map((k) => (
                <label key={k.id} className="check">
                  <input
                    type="checkbox"
                    checked={filter.keys.includes(k.id)}
                    onChange={() => setFilter({ ...filter, keys: toggle(filter.keys, k.id) })}
                  />
                  {k.name}
                </label>
              ))}
            </div>
          )}
        </div>
      )}
      <ErrorNote error={save.error} />
      <div className="row">
        <button className="btn" type="submit" disabled={save.isPending}>
          Save filter
        </button>
        {save.isSuccess && (
          <span className="muted" role="status">
            Saved
          </span>
        )}
      </div>
    </form>
  );
}
