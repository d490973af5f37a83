"use client";
import { useMutation } from "@tanstack/react-query";
import { useSearchParams } from "next/navigation";
import { type FormEvent, useState } from "react";
import { ErrorNote } from "../_components/error-note";
import { TextField } from "../_components/text-field";
import { useTRPC } from "../_lib/trpc";

export function SignInForm() {
  const trpc = useTRPC();
  const next = useSearchParams().get("next");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const signIn = useMutation(
    trpc.auth.signIn.mutationOptions({
      // A full page load: nothing of the tab's state (its cache, its live socket) predates the session.
      onSuccess: () => window.location.replace(next?.startsWith("/") && !next.startsWith("//") ? next : "/"),
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    signIn.mutate({ username, password });
  }
  return (
    <form onSubmit={submit}>
      <TextField
        label="Username"
        autoComplete="username"
        value={username}
        onChange={setUsername}
        required
        autoFocus
      />
      <TextField
        label="Password"
        type="password"
        autoComplete="current-password"
        value={password}
        onChange={setPassword}
        required
      />
      <ErrorNote error={signIn.error} />
      <button className="btn btn-primary" type="submit" disabled={signIn.isPending}>
        {signIn.isPending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
