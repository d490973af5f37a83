"use client";
/**
 * The library modules beside the capabilities: pure functions an action imports as
 * toolstore/lib/<name>. They run inside the action, so they have no category and never ask.
 */
import { useQuery } from "@tanstack/react-query";
import { ErrorNote } from "../../_components/error-note";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";

type Library = RouterOutputs["capabilities"]["libraries"][number];

export function LibraryExports({ library }: { library: Library }) {
  return (
    <ul className="lib-exports">
      {library.exports.map((e) => (
        <li key={e.name}>
          <code>{e.signature}</code> <span className="muted">— {e.description}</span>
        </li>
      ))}
    </ul>
  );
}

export function LibrariesList() {
  const trpc = useTRPC();
  const libraries = useQuery(trpc.capabilities.libraries.queryOptions());
  return (
    <section className="card" aria-labelledby="libs-h" data-testid="libraries">
      <h2 id="libs-h">Libraries</h2>
      <p className="muted">
        Pure functions an action imports as <code>toolstore/lib/&lt;name&gt;</code>. They run inside the
        action's sandbox with no access to capabilities, secrets or the network, so they have no category,
        make no gate decision and never ask for approval.
      </p>
      <ErrorNote error={libraries.error} />
      {libraries.data?.map((lib) => (
        <details key={lib.name} className="lib">
          <summary>
            <code>toolstore/lib/{lib.name}</code> <span className="pill">library</span>{" "}
            <span className="muted">
              {lib.description} · {lib.builtOn}
            </span>
          </summary>
          <LibraryExports library={lib} />
        </details>
      ))}
    </section>
  );
}
