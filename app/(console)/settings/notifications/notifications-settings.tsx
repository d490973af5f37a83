"use client";
/**
 * Settings → Notifications: this device's push switch, which requests notify me, my channels
 * (and the team's) with their health, a test button and the last error, forms to add webhooks
 * and email, and the recent deliveries (channel, status, time; never contents).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { DataTable } from "@/app/_components/data-table";
import { EmptyState } from "@/app/_components/empty-state";
import { ErrorNote } from "@/app/_components/error-note";
import { RelativeTime } from "@/app/_components/relative-time";
import { useTRPC } from "@/app/_lib/trpc";
import { AddEmail, AddWebhook } from "./add-channel";
import { FilterForm } from "./filter-form";
import { PushToggle } from "./push-toggle";

export function NotificationsSettings() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const settings = useSettings();
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.notifications.settings.queryKey() });
  const test = useMutation(trpc.notifications.test.mutationOptions({ onSettled: refresh }));
  const remove = useMutation(trpc.notifications.remove.mutationOptions({ onSuccess: refresh }));
  const setEnabled = useMutation(trpc.notifications.setEnabled.mutationOptions({ onSuccess: refresh }));
  const data = settings.data;
  if (settings.error) return <ErrorNote error={settings.error} />;
  if (!data) return <p className="muted">Loading…</p>;
  const names = new Map(data.channels.map((c) => [c.id, c.name]));

  return (
    <div className="stack notify-settings">
      {!data.notified && (
        <p className="card muted">
          You have the viewer role: you can watch the queue but are not notified. Approvers and admins are.
        </p>
      )}
      <div className="grid grid-2">
        <section className="card stack" aria-labelledby="device-h">
          <h2 id="device-h">This device</h2>
          <PushToggle vapidPublicKey={data.vapidPublicKey} onChange={refresh} />
          <p className="muted">
            Tapping a notification opens the request's card. Install the console as an app for the best result
            on a phone.
          </p>
        </section>
        <section className="card stack" aria-labelledby="filter-h">
          <h2 id="filter-h">Which requests notify me</h2>
          <FilterForm
            key={JSON.stringify(data.filter)}
            initial={data.filter}
            keys={data.keys}
            onSaved={refresh}
          />
        </section>
      </div>

      <section className="card stack" aria-labelledby="channels-h">
        <h2 id="channels-h">Channels</h2>
        <ErrorNote error={test.error ?? remove.error ?? setEnabled.error} />
        {data.channels.length === 0 ? (
          <EmptyState className="empty-compact" title="No channels yet">
            Turn on push above, add a webhook or an email below, or run{" "}
            <code>npm run toolstore -- notifications add-webhook &lt;url&gt;</code>.
          </EmptyState>
        ) : (
          <ul className="notify-channels">
            {data.channels.map((c) => (
              <ChannelRow
                key={c.id}
                channel={c}
                test={test}
                onToggle={() => setEnabled.mutate({ id: c.id, enabled: !c.enabled })}
                onRemove={() => remove.mutate({ id: c.id })}
              />
            ))}
          </ul>
        )}
      </section>

      {data.notified && (
        <div className="grid grid-2">
          <section className="card stack" aria-labelledby="webhook-h">
            <h2 id="webhook-h">Add a webhook</h2>
            <AddWebhook canManageTeam={data.canManageTeam} onAdded={refresh} />
          </section>
          <section className="card stack" aria-labelledby="email-h">
            <h2 id="email-h">Add an email address</h2>
            <AddEmail configured={data.emailConfigured} onAdded={refresh} />
          </section>
        </div>
      )}

      <section className="card stack" aria-labelledby="deliveries-h">
        <h2 id="deliveries-h">Recent deliveries</h2>
        {data.deliveries.length === 0 ? (
          <EmptyState className="empty-compact" title="Nothing sent yet">
            Requests that wait for approval are sent to your channels within a second or two.
          </EmptyState>
        ) : (
          <DataTable
            label="Recent deliveries"
            rows={data.deliveries}
            rowKey={(d) => d.id}
            columns={[
              { label: "When", cell: (d) => <RelativeTime value={d.sentAt ?? d.createdAt} /> },
              { label: "Channel", cell: (d) => names.get(d.channelId) ?? d.channelId },
              {
                label: "What",
                cell: (d) =>
                  d.kind === "test"
                    ? "test"
                    : `${d.kind} · ${d.approvalCount} request${d.approvalCount === 1 ? "" : "s"}`,
              },
              {
                label: "Status",
                cell: (d) => (
                  <span title={d.lastError ?? undefined}>
                    {d.status}
                    {d.attempts > 1 ? ` (${d.attempts} tries)` : ""}
                  </span>
                ),
              },
            ]}
          />
        )}
      </section>
    </div>
  );
}

type Settings = NonNullable<ReturnType<typeof useSettings>["data"]>;

function useSettings() {
  const trpc = useTRPC();
  return useQuery(trpc.notifications.settings.queryOptions());
}

/** One channel: what and where, its health or last error, and its buttons. */
function ChannelRow({
  channel: c,
  test,
  onToggle,
  onRemove,
}: {
  channel: Settings["channels"][number];
  test: {
    isPending: boolean;
    data?: { ok: boolean; error: string | null };
    variables?: { id: string };
    mutate: (v: { id: string }) => void;
  };
  onToggle: () => void;
  onRemove: () => void;
}) {
  return (
    <li className="notify-channel" data-testid="notification-channel">
      <div className="stack" style={{ gap: 2, minWidth: 0 }}>
        <strong>{c.name}</strong>
        <span className="muted mono notify-target">
          {c.kind}
          {c.format ? `/${c.format}` : ""} · {c.target}
          {c.signed ? " · signed" : ""}
          {c.userId === null ? " · team" : ""}
        </span>
        {c.lastError ? (
          <span className="error-text" data-testid="channel-error">
            Last error {c.lastErrorAt && <RelativeTime value={c.lastErrorAt} />}: {c.lastError}
          </span>
        ) : (
          <span className="muted" data-testid="channel-health">
            {c.enabled ? "On" : "Off"} · last sent{" "}
            {c.lastOkAt ? <RelativeTime value={c.lastOkAt} /> : "never"}
          </span>
        )}
        {test.data && test.variables?.id === c.id && (
          <span role="status" className={test.data.ok ? "muted" : "error-text"}>
            {test.data.ok ? "Test sent." : `Test failed: ${test.data.error}`}
          </span>
        )}
      </div>
      <div className="row notify-actions">
        <button
          type="button"
          className="btn btn-sm"
          disabled={test.isPending}
          onClick={() => test.mutate({ id: c.id })}
        >
          Send a test
        </button>
        <button
          type="button"
          className="btn btn-sm"
          onClick={onToggle}
          aria-label={`${c.enabled ? "Turn off" : "Turn on"} ${c.name}`}
        >
          {c.enabled ? "Turn off" : "Turn on"}
        </button>
        <button
          type="button"
          className="btn btn-sm btn-danger"
          onClick={onRemove}
          aria-label={`Remove ${c.name}`}
        >
          Remove
        </button>
      </div>
    </li>
  );
}
