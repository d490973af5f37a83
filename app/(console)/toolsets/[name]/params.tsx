/**
 * A binding's parameters from its input schema: name, type, default, description. The types come
 * from the same renderer as the execute_code description and the editor's typings.
 */
import { schemaParams } from "@/server/core/capabilities/schema-to-ts";

export function Params({ schema }: { schema: unknown }) {
  const params = schemaParams(schema);
  if (params.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="param-list">
      {params.map((p) => (
        <li key={p.key}>
          <span className="param">
            <code>
              {p.label}: {p.type}
            </code>
            {p.default !== undefined && <span className="muted small"> = {p.default}</span>}
          </span>
          {p.description && <div className="small muted">{p.description}</div>}
        </li>
      ))}
    </ul>
  );
}
