"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ROLES, type Role } from "@/server/services/roles";
import { DataTable } from "../../../_components/data-table";
import { ErrorNote } from "../../../_components/error-note";
import { useTRPC } from "../../../_lib/trpc";

export function UsersAdmin({ selfId }: { selfId: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const users = useQuery(trpc.users.list.queryOptions());
  const invalidate = () => qc.invalidateQueries({ queryKey: trpc.users.list.queryKey() });
  const create = useMutation(trpc.users.create.mutationOptions({ onSuccess: invalidate }));
  const setRole = useMutation(trpc.users.setRole.mutationOptions({ onSuccess: invalidate }));
  const [form, setForm] = useState({ username: "", displayName: "", password: "", role: "viewer" as Role });

  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate(form, {
      onSuccess: () => setForm({ username: "", displayName: "", password: "", role: "viewer" }),
    });
  }

  return (
    <div className="grid" style={{ gridTemplateColumns: "minmax(0, 2fr) minmax(260px, 1fr)" }}>
      <section className="card">
        <h2>People</h2>
        <ErrorNote error={users.error ?? setRole.error} />
        <DataTable
          label="People"
          dense={false}
          rows={users.data ?? []}
          rowKey={(u) => u.id}
          columns={[
            { label: "Username", cell: (u) => <code>{u.username}</code> },
            { label: "Name", cell: (u) => u.displayName },
            {
              label: "Role",
              cell: (u) => (
                <select
                  aria-label={`Role of ${u.username}`}
                  value={u.role}
                  disabled={u.id === selfId || setRole.isPending}
                  onChange={(e) => setRole.mutate({ userId: u.id, role: e.target.value as Role })}
                >
                  {ROLES.map((r) => (
                    <option key={r}>{r}</option>
                  ))}
                </select>
              ),
            },
          ]}
        />
      </section>
      <section className="card">
        <h2>Add a user</h2>
        <form className="stack" onSubmit={submit}>
          <label>
            Username
            <input
              value={form.username}
              onChange={(e) => setForm({ ...form, username: e.target.value })}
              required
            />
          </label>
          <label>
            Display name
            <input
              value={form.displayName}
              onChange={(e) => setForm({ ...form, displayName: e.target.value })}
              required
            />
          </label>
          <label>
            Initial password <span className="field-hint">at least 10 characters</span>
            <input
              type="password"
              autoComplete="new-password"
              value={form.password}
              onChange={(e) => setForm({ ...form, password: e.target.value })}
              required
            />
          </label>
          <label>
            Role
            <select value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as Role })}>
              {ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </label>
          <ErrorNote error={create.error} />
          <button className="btn btn-primary" type="submit" disabled={create.isPending}>
            Add user
          </button>
        </form>
      </section>
    </div>
  );
}
