"use client";
import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ErrorNote } from "../_components/error-note";
import { TextField } from "../_components/text-field";
import { useTRPC } from "../_lib/trpc";

export function SetupForm({ token }: { token: string }) {
  const trpc = useTRPC();
  const [form, setForm] = useState({ username: "", displayName: "", password: "" });
  const setup = useMutation(
    trpc.auth.completeSetup.mutationOptions({
      // A full page load, so the tab's live socket opens with the new session.
      onSuccess: () => window.location.replace("/"),
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    setup.mutate({ token, ...form });
  }
  const set = (key: keyof typeof form) => (value: string) => setForm({ ...form, [key]: value });
  return (
    <form onSubmit={submit}>
      <TextField
        label="Username"
        autoComplete="username"
        value={form.username}
        onChange={set("username")}
        required
        autoFocus
      />
      <TextField
        label="Display name"
        autoComplete="name"
        value={form.displayName}
        onChange={set("displayName")}
        required
      />
      <TextField
        label="Password"
        hint="at least 10 characters"
        type="password"
        autoComplete="new-password"
        value={form.password}
        onChange={set("password")}
        required
        minLength={10}
      />
      <ErrorNote error={setup.error} />
      <button className="btn btn-primary" type="submit" disabled={setup.isPending}>
        {setup.isPending ? "Creating…" : "Create admin and sign in"}
      </button>
    </form>
  );
}
