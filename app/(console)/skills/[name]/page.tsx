import type { Metadata } from "next";
import { hasRole, requireUser } from "../../../_lib/session";
import { SkillDetail } from "./skill-detail";
import "../../../_styles/admin-pages.css";
import "../skills.css";

export const dynamic = "force-dynamic";

export async function generateMetadata({ params }: { params: Promise<{ name: string }> }): Promise<Metadata> {
  return { title: `${(await params).name} · Skills` };
}

export default async function SkillPage({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  const user = await requireUser();
  return <SkillDetail name={decodeURIComponent(name)} canEdit={hasRole(user, "admin")} />;
}
