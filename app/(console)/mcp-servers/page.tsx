import type { Metadata } from "next";
import { requireUser } from "../../_lib/session";
import { McpServersList } from "./mcp-servers-list";
import "../../_styles/admin-pages.css";
import "./mcp-servers.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "MCP servers" };

export default async function McpServersPage() {
  const user = await requireUser();
  return <McpServersList canEdit={user.role === "admin"} />;
}
