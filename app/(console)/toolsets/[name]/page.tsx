import type { Metadata } from "next";
import { hasRole, requireUser } from "../../../_lib/session";
import { ToolsetDetail } from "./toolset-detail";
import "../../../_styles/admin-pages.css";

export const dynamic = "force-dynamic";

export async function generateMetadata({ params }: { params: Promise<{ name: string }> }): Promise<Metadata> {
  return { title: `${(await params).name} · Toolsets` };
}

export default async function ToolsetPage({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  const user = await requireUser();
  return (
    <ToolsetDetail
      name={decodeURIComponent(name)}
      canEdit={hasRole(user, "admin")}
      canRun={hasRole(user, "approver")}
      sessionId={user.sessionId}
    />
  );
}
