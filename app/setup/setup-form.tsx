"use client";
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { ErrorNote } from "../_components/error-note";
import { useTRPC } from "../_lib/trpc";

export function SetupForm({ token }: { token: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [form, setForm] = useState({ username: "", displayName: "", password: "" });
  const setup = useMutation(
    trpc.auth.completeSetup.mutationOptions({
      onSuccess: () => {
        router.replace("/");
        router.refresh();
      },
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    setup.mutate({ token, ...form });
  }
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm({ ...form, [key]: e.target.value });
  return (
    <form onSubmit={submit}>
      <label>
        Username
        <input autoComplete="username" value={form.username} onChange={set("username")} required autoFocus />
      </label>
      <label>
        Display name
        <input autoComplete="name" value={form.displayName} onChange={set("displayName")} required />
      </label>
      <label>
        Password <span className="field-hint">at least 10 characters</span>
        <input
          type="password"
          autoComplete="new-password"
          value={form.password}
          onChange={set("password")}
          required
          minLength={10}
        />
      </label>
      <ErrorNote error={setup.error} />
      <button className="btn btn-primary" type="submit" disabled={setup.isPending}>
        {setup.isPending ? "Creating…" : "Create admin and sign in"}
      </button>
    </form>
  );
}
