/**
 * The console's one data table: a header row from the columns, one row per item. It scrolls
 * inside itself when wide, and under 768 px each row becomes a card whose cells carry their
 * column's label (data-table.css).
 */
import type { CSSProperties, ReactNode } from "react";
import "./data-table.css";

export interface Column<R> {
  /** Column header text; also the label a cell shows in the card layout. */
  label: string;
  /** Keep the header for screen readers only (an actions column). */
  hideLabel?: boolean;
  cell: (row: R) => ReactNode;
  className?: string;
  style?: CSSProperties;
}

export function DataTable<R>({
  columns,
  rows,
  rowKey,
  rowProps,
  label,
  dense = true,
  testId,
}: {
  columns: readonly Column<R>[];
  rows: readonly R[];
  rowKey: (row: R) => string;
  rowProps?: (row: R) => { className?: string; "data-testid"?: string };
  /** Accessible name of the table. */
  label?: string;
  dense?: boolean;
  testId?: string;
}) {
  return (
    <div className="table-wrap data-table-wrap">
      <table className={dense ? "dense data-table" : "data-table"} aria-label={label} data-testid={testId}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.label} scope="col" style={c.style}>
                {c.hideLabel ? <span className="visually-hidden">{c.label}</span> : c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} {...rowProps?.(row)}>
              {columns.map((c) => (
                <td key={c.label} className={c.className} data-label={c.hideLabel ? undefined : c.label}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
