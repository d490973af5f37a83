"use client";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import type { ChangeEvent, FormEvent } from "react";
import { FilterSelect } from "@/app/_components/filter-select";
import type { RunFilters } from "@/server/services/runs";

const plain = (values: string[]) => values.map((value) => ({ value, label: value }));

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
  const change = (e: ChangeEvent<HTMLSelectElement>) => e.currentTarget.form && apply(e.currentTarget.form);
  const selects = [
    { label: "Surface", name: "surface", value: values.surface, options: plain(surfaces) },
    { label: "Status", name: "status", value: values.status, options: plain(statuses) },
    {
      label: "API key",
      name: "key",
      value: values.key,
      options: keys.map((k) => ({ value: k.id, label: `${k.name} (${k.prefix}…)` })),
    },
  ];
  const active = Boolean(values.surface || values.status || values.key || values.capability);
  return (
    <form className="filters" onSubmit={onSubmit} aria-label="Filter runs">
      {selects.map((select) => (
        <FilterSelect key={select.name} {...select} onChange={change} />
      ))}
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
