import type { Metadata } from "next";
import { hasRole, requireUser } from "../../../_lib/session";
import { McpServerDetail } from "./mcp-server-detail";
import "../../../_styles/admin-pages.css";
import "../mcp-servers.css";

export const dynamic = "force-dynamic";

export async function generateMetadata({ params }: { params: Promise<{ name: string }> }): Promise<Metadata> {
  return { title: `${(await params).name} · MCP servers` };
}

export default async function McpServerPage({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  const user = await requireUser();
  return <McpServerDetail name={decodeURIComponent(name)} canEdit={hasRole(user, "admin")} />;
}
