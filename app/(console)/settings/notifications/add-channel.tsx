"use client";
/** Forms that add a channel: a webhook (JSON, Slack, ntfy; optional signing secret) and an email address. */
import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ErrorNote } from "@/app/_components/error-note";
import { TextField } from "@/app/_components/text-field";
import { useTRPC } from "@/app/_lib/trpc";

const FORMATS = [
  { value: "json", label: "JSON (signed with a secret)" },
  { value: "slack", label: "Slack incoming webhook" },
  { value: "ntfy", label: "ntfy topic" },
] as const;

export function AddWebhook({ canManageTeam, onAdded }: { canManageTeam: boolean; onAdded: () => void }) {
  const trpc = useTRPC();
  const add = useMutation(trpc.notifications.addWebhook.mutationOptions({ onSuccess: onAdded }));
  const [form, setForm] = useState({
    url: "",
    format: "json" as (typeof FORMATS)[number]["value"],
    secret: "",
    name: "",
    team: false,
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    add.mutate(
      {
        url: form.url,
        format: form.format,
        name: form.name || undefined,
        secret: form.secret || undefined,
        team: form.team,
      },
      { onSuccess: () => setForm({ ...form, url: "", secret: "", name: "" }) },
    );
  }

  return (
    <form className="stack" onSubmit={submit} aria-label="Add a webhook">
      <TextField
        label="Webhook URL"
        hint={form.format === "ntfy" ? "https://ntfy.sh/<topic>" : undefined}
        value={form.url}
        onChange={(url) => setForm({ ...form, url })}
        type="url"
        required
        placeholder="https://hooks.slack.com/services/…"
      />
      <label>
        Format
        <select
          value={form.format}
          onChange={(e) => setForm({ ...form, format: e.target.value as typeof form.format })}
        >
          {FORMATS.map((f) => (
            <option key={f.value} value={f.value}>
              {f.label}
            </option>
          ))}
        </select>
      </label>
      <TextField
        label={form.format === "ntfy" ? "Access token" : "Signing secret"}
        hint="optional"
        value={form.secret}
        onChange={(secret) => setForm({ ...form, secret })}
        type="password"
        autoComplete="off"
      />
      <TextField
        label="Name"
        hint="optional"
        value={form.name}
        onChange={(name) => setForm({ ...form, name })}
      />
      {canManageTeam && (
        <label className="check">
          <input
            type="checkbox"
            checked={form.team}
            onChange={(e) => setForm({ ...form, team: e.target.checked })}
          />
          Team channel: told of every request, whatever my filter
        </label>
      )}
      <ErrorNote error={add.error} />
      <button className="btn btn-primary" type="submit" disabled={add.isPending}>
        Add webhook
      </button>
    </form>
  );
}

export function AddEmail({ configured, onAdded }: { configured: boolean; onAdded: () => void }) {
  const trpc = useTRPC();
  const add = useMutation(trpc.notifications.addEmail.mutationOptions({ onSuccess: onAdded }));
  const [address, setAddress] = useState("");
  if (!configured) {
    return (
      <p className="muted">
        Email needs an SMTP server: set <code>TOOLSTORE_SMTP_URL</code> (e.g.{" "}
        <code>smtps://user:pass@smtp.example.com</code>) and restart.
      </p>
    );
  }
  return (
    <form
      className="stack"
      aria-label="Add an email address"
      onSubmit={(e) => {
        e.preventDefault();
        add.mutate({ address }, { onSuccess: () => setAddress("") });
      }}
    >
      <TextField label="Email address" value={address} onChange={setAddress} type="email" required />
      <ErrorNote error={add.error} />
      <button className="btn" type="submit" disabled={add.isPending}>
        Add email
      </button>
    </form>
  );
}
