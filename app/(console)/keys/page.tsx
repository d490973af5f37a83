import type { Metadata } from "next";
import { loadEnv } from "@/server/env";
import { Forbidden } from "../../_components/forbidden";
import { requireRole } from "../../_lib/session";
import { KeysAdmin } from "./keys-admin";
import { OAuthGrants } from "./oauth-grants";
import "../../_styles/admin-pages.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "API keys" };

export default async function KeysPage() {
  const { user, allowed } = await requireRole("admin");
  if (!allowed) return <Forbidden need="admin" have={user.role} />;
  return (
    <>
      <div className="page-head">
        <div>
          <h1>API keys</h1>
          <p>
            An MCP client connects with a key, or signs in by OAuth and gets a grant. The key decides who
            acts, in which mode, and which modules it can import.
          </p>
        </div>
      </div>
      <div className="stack">
        <KeysAdmin publicUrl={loadEnv().TOOLSTORE_PUBLIC_URL ?? null} projectDir={process.cwd()} />
        <OAuthGrants publicUrl={loadEnv().TOOLSTORE_PUBLIC_URL ?? null} />
      </div>
    </>
  );
}
