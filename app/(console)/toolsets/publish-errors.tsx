"use client";
import type { ToolsetDiagnostic } from "@/server/core/toolsets/types";
import { ErrorNote } from "../../_components/error-note";

type Diagnostic = Partial<ToolsetDiagnostic> & Pick<ToolsetDiagnostic, "message">;

/** A publish error with its code, and the file:line findings of validation when there are any. */
export function PublishError({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error as { message: string; data?: { appCode?: string; details?: { errors?: Diagnostic[] } } };
  const findings = e.data?.details?.errors ?? [];
  if (findings.length === 0) return <ErrorNote error={error} />;
  return (
    <div className="error-box" role="alert">
      <code>{e.data?.appCode ?? "TOOLSET_INVALID"}</code> {e.message.split("\n")[0]}
      {findings.length > 0 && (
        <ul className="param-list small" style={{ marginTop: 4 }}>
          {findings.map((d) => (
            <li key={`${d.file}:${d.line}:${d.column}:${d.message}`}>
              <code>
                {d.file ?? "."}
                {d.line ? `:${d.line}` : ""}
                {d.column ? `:${d.column}` : ""}
              </code>{" "}
              {d.message}
              {d.hint && <span className="muted"> — {d.hint}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
