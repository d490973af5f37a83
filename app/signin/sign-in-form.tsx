"use client";
import { useMutation } from "@tanstack/react-query";
import { useRouter, useSearchParams } from "next/navigation";
import { type FormEvent, useState } from "react";
import { ErrorNote } from "../_components/error-note";
import { TextField } from "../_components/text-field";
import { useTRPC } from "../_lib/trpc";

export function SignInForm() {
  const trpc = useTRPC();
  const router = useRouter();
  const next = useSearchParams().get("next");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const signIn = useMutation(
    trpc.auth.signIn.mutationOptions({
      onSuccess: () => {
        router.replace(next?.startsWith("/") && !next.startsWith("//") ? next : "/");
        router.refresh();
      },
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
