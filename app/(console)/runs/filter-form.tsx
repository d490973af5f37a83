"use client";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import type { FormEvent } from "react";
import type { RunFilters } from "@/server/services/runs";

/** The runs filter bar; plain GET query parameters, applied as soon as a choice changes. */
export function FilterForm({
  values,
  surfaces,
  statuses,
  keys,
  capabilities,
}: {
  values: RunFilters;
  surfaces: string[];
  statuses: string[];
  keys: { id: string; name: string; prefix: string }[];
  capabilities: string[];
}) {
  const router = useRouter();
  const pathname = usePathname();
  function apply(form: HTMLFormElement) {
    const params = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (typeof v === "string" && v.trim()) params.set(k, v.trim());
    router.push(`${pathname}${params.size ? `?${params}` : ""}`);
  }
  function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    apply(e.currentTarget);
  }
  const active = Boolean(values.surface || values.status || values.key || values.capability);
  return (
    <form className="filters" onSubmit={onSubmit} aria-label="Filter runs">
      <label>
        Surface
        <select
          name="surface"
          defaultValue={values.surface ?? ""}
          onChange={(e) => e.currentTarget.form && apply(e.currentTarget.form)}
        >
          <option value="">All</option>
          {surfaces.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        Status
        <select
          name="status"
          defaultValue={values.status ?? ""}
          onChange={(e) => e.currentTarget.form && apply(e.currentTarget.form)}
        >
          <option value="">All</option>
          {statuses.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        API key
        <select
          name="key"
          defaultValue={values.key ?? ""}
          onChange={(e) => e.currentTarget.form && apply(e.currentTarget.form)}
        >
          <option value="">All</option>
          {keys.map((k) => (
            <option key={k.id} value={k.id}>
              {k.name} ({k.prefix}…)
            </option>
          ))}
        </select>
      </label>
      <label>
        Capability
        <input
          name="capability"
          list="capability-names"
          defaultValue={values.capability ?? ""}
          placeholder="e.g. assets.save or weather.*"
        />
        <datalist id="capability-names">
          {capabilities.map((c) => (
            <option key={c} value={c} />
          ))}
        </datalist>
      </label>
      <button type="submit" className="btn">
        Filter
      </button>
      {active && (
        <Link href={pathname} className="btn btn-sm" style={{ alignSelf: "center" }}>
          Clear
        </Link>
      )}
    </form>
  );
}
