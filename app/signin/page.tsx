import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { AuthCard } from "@/app/_components/auth-card";
import { getDb } from "@/server/db";
import { hasUsers } from "@/server/services/auth";
import { SignInForm } from "./sign-in-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage() {
  if (!(await hasUsers(getDb()))) redirect("/setup");
  return (
    <AuthCard title="Sign in">
      <SignInForm />
    </AuthCard>
  );
}
