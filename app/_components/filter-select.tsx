/**
 * A labelled select of a filter bar: "All" (the empty value) first, then the options. Uncontrolled
 * (`defaultValue`), since filter bars read their form as a whole.
 */
import type { ChangeEvent } from "react";

export function FilterSelect({
  label,
  name,
  value,
  options,
  onChange,
}: {
  label: string;
  name: string;
  value: string | undefined;
  options: readonly { value: string; label: string }[];
  onChange: (e: ChangeEvent<HTMLSelectElement>) => void;
}) {
  return (
    <label>
      {label}
      <select name={name} defaultValue={value ?? ""} onChange={onChange}>
        <option value="">All</option>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}
