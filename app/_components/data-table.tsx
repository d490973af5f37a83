/**
 * The console's one data table: a header row from the columns, one row per item. It scrolls
 * inside itself when wide, and under 768 px each row becomes a card whose cells carry their
 * column's label (data-table.css), unless `cards` is off (a matrix, a compact summary).
 */
import { type CSSProperties, Fragment, type ReactNode } from "react";
import "./data-table.css";

export interface Column<R> {
  /** Column header text; also the label a cell shows in the card layout. */
  label: string;
  /** Keep the header for screen readers only (an actions column). */
  hideLabel?: boolean;
  cell: (row: R) => ReactNode;
  className?: string;
  /** Classes of the header cell (`num` right-aligns it over a numeric column). */
  headClassName?: string;
  style?: CSSProperties;
}

/** Rows under a heading row of their own (`<th scope="rowgroup">`), such as a module's exports. */
export interface RowGroup<R> {
  key: string;
  heading: ReactNode;
  rows: readonly R[];
}

type RowsOrGroups<R> =
  | { rows: readonly R[]; groups?: undefined }
  | { groups: readonly RowGroup<R>[]; rows?: undefined };

export function DataTable<R>({
  columns,
  rows,
  groups,
  rowKey,
  rowProps,
  detail,
  label,
  dense = true,
  cards = true,
  hideHeader = false,
  className,
  testId,
}: RowsOrGroups<R> & {
  columns: readonly Column<R>[];
  rowKey: (row: R) => string;
  rowProps?: (row: R) => { className?: string; "data-testid"?: string; id?: string };
  /** A full-width row under a row (an inline editor, its history); nothing when it returns null. */
  detail?: (row: R) => ReactNode;
  /** Accessible name of the table. */
  label?: string;
  dense?: boolean;
  /** Under 768 px, a card per row (default); off, the table keeps its grid and scrolls. */
  cards?: boolean;
  /** The header row for screen readers only (a compact summary that needs no visible header). */
  hideHeader?: boolean;
  /** More classes on the table. */
  className?: string;
  testId?: string;
}) {
  const classes = ["data-table", cards && "data-table-cards", dense && "dense", className].filter(Boolean);
  const body = (list: readonly R[]) =>
    list.map((row) => {
      const extra = detail?.(row);
      return (
        <Fragment key={rowKey(row)}>
          <tr {...rowProps?.(row)}>
            {columns.map((c) => (
              <td key={c.label} className={c.className} data-label={c.hideLabel ? undefined : c.label}>
                {c.cell(row)}
              </td>
            ))}
          </tr>
          {extra != null && extra !== false && (
            <tr className="inline-row">
              <td colSpan={columns.length}>{extra}</td>
            </tr>
          )}
        </Fragment>
      );
    });
  return (
    <div className="table-wrap data-table-wrap">
      <table className={classes.join(" ")} aria-label={label} data-testid={testId}>
        <thead className={hideHeader ? "visually-hidden" : undefined}>
          <tr>
            {columns.map((c) => (
              <th key={c.label} scope="col" className={c.headClassName} style={c.style}>
                {c.hideLabel ? <span className="visually-hidden">{c.label}</span> : c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {groups
            ? groups.map((g) => (
                <Fragment key={g.key}>
                  <tr className="group-row">
                    <th scope="rowgroup" colSpan={columns.length}>
                      {g.heading}
                    </th>
                  </tr>
                  {body(g.rows)}
                </Fragment>
              ))
            : body(rows)}
        </tbody>
      </table>
    </div>
  );
}
