import type { Metadata } from "next";
import { requireUser } from "../../_lib/session";
import { ToolsetsList } from "./toolsets-list";
import "../../_styles/admin-pages.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Toolsets" };

export default async function ToolsetsPage() {
  const user = await requireUser();
  return <ToolsetsList canEdit={user.role === "admin"} />;
}
