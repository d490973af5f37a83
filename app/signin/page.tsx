import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { getDb } from "@/server/db";
import { userCount } from "@/server/services/auth";
import { SignInForm } from "./sign-in-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage() {
  if ((await userCount(getDb())) === 0) redirect("/setup");
  return (
    <main className="auth-wrap">
      <div className="card auth-card">
        <div className="brand" style={{ marginBottom: 16 }}>
          <span className="brand-mark" aria-hidden /> ToolStore
        </div>
        <h1>Sign in</h1>
        <SignInForm />
      </div>
    </main>
  );
}
