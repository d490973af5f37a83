"use client";
/**
 * An HTTP server's OAuth card: whether ToolStore holds a token for it, until when, the last refresh
 * and error, and Authorize (or Reauthorize), which sends the admin's browser to the server's sign-in.
 */
import { useMutation, useQuery } from "@tanstack/react-query";
import { BusyButton } from "../../../_components/busy-button";
import { ErrorNote } from "../../../_components/error-note";
import { RelativeTime } from "../../../_components/relative-time";
import { useTRPC } from "../../../_lib/trpc";

export function McpServerOAuth({
  name,
  canEdit,
  status,
}: {
  name: string;
  canEdit: boolean;
  status: string;
}) {
  const trpc = useTRPC();
  const state = useQuery({ ...trpc.mcpServers.oauth.queryOptions({ name }), refetchInterval: 5000 });
  const authorize = useMutation(
    trpc.mcpServers.authorize.mutationOptions({
      onSuccess: ({ url }) => {
        window.location.assign(url);
      },
    }),
  );
  const o = state.data;
  if (!o && status !== "unauthorized") return null;
  const label = o?.needsReauth ? "Reauthorize" : o?.authorized ? "Authorize again" : "Authorize";
  return (
    <section
      className={`card${o?.needsReauth ? " once" : ""}`}
      aria-labelledby="oauth-h"
      data-testid={o?.needsReauth ? "reauthorize-card" : "oauth-card"}
    >
      <h2 id="oauth-h">
        OAuth{" "}
        {o?.needsReauth ? (
          <span className="pill pill-bad">reauthorize</span>
        ) : o?.authorized ? (
          <span className="pill pill-ok">authorized</span>
        ) : (
          <span className="pill pill-wait">not authorized</span>
        )}
      </h2>
      {o?.authorized ? (
        <dl className="small">
          <dt>Issuer</dt>
          <dd className="mono">{o.issuer}</dd>
          <dt>Valid until</dt>
          <dd>{o.expiresAt ? <RelativeTime value={o.expiresAt} /> : "no expiry given"}</dd>
          <dt>Last refresh</dt>
          <dd>{o.lastRefreshAt ? <RelativeTime value={o.lastRefreshAt} /> : "not yet"}</dd>
          <dt>Authorized</dt>
          <dd>
            <RelativeTime value={o.authorizedAt} /> by {o.authorizedBy}
          </dd>
        </dl>
      ) : (
        <p className="small muted">
          This server asks for OAuth sign-in. Authorize once; ToolStore keeps the token sealed, sends it only
          to this server and refreshes it before it expires.
        </p>
      )}
      {o?.lastError && (
        <div className="error-box" role="status">
          {o.needsReauth ? "Calls fail until an admin authorizes again: " : ""}
          {o.lastError}
        </div>
      )}
      <ErrorNote error={authorize.error ?? state.error} />
      {canEdit && (
        <div>
          <BusyButton
            busy={authorize.isPending}
            busyLabel="Opening sign-in…"
            onClick={() => authorize.mutate({ name })}
          >
            {label}
          </BusyButton>
        </div>
      )}
    </section>
  );
}
