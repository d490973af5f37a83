import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { AuthCard } from "@/app/_components/auth-card";
import { getDb } from "@/server/db";
import { setupTokenValid, userCount } from "@/server/services/auth";
import { SetupForm } from "./setup-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Set up" };

export default async function SetupPage({ searchParams }: { searchParams: Promise<{ token?: string }> }) {
  const db = getDb();
  if ((await userCount(db)) > 0) redirect("/signin");
  const { token } = await searchParams;
  const valid = token ? await setupTokenValid(db, token) : false;
  return (
    <AuthCard title="Create the first admin">
      {valid && token ? (
        <SetupForm token={token} />
      ) : (
        <div className="stack">
          <p className="muted">
            {token
              ? "This setup link is not valid any more (used or expired)."
              : "This ToolStore has no users yet. Open the one-time setup link that `npm start` printed in its terminal."}
          </p>
          <p className="muted">Restart the server to print a fresh link.</p>
        </div>
      )}
    </AuthCard>
  );
}
