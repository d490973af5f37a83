import type { Metadata } from "next";
import { requireUser } from "../../_lib/session";
import { SkillsList } from "./skills-list";
import "../../_styles/admin-pages.css";
import "./skills.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Skills" };

export default async function SkillsPage() {
  const user = await requireUser();
  return <SkillsList canEdit={user.role === "admin"} />;
}
