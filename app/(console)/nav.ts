import type { Role } from "@/server/services/roles";

export interface NavItem {
  href: string;
  label: string;
  min: Role;
  /** Shows the live count of pending approvals. */
  badge?: "approvals";
}

/** The console's sections, in sidebar order. A section is listed only for roles that may open it. */
export const NAV: NavItem[] = [
  { href: "/", label: "Dashboard", min: "viewer" },
  { href: "/playground", label: "Playground", min: "viewer" },
  { href: "/approvals", label: "Approvals", min: "viewer", badge: "approvals" },
  { href: "/runs", label: "Runs", min: "viewer" },
  { href: "/toolsets", label: "Toolsets", min: "viewer" },
  { href: "/mcp-servers", label: "MCP servers", min: "viewer" },
  { href: "/skills", label: "Skills", min: "viewer" },
  { href: "/capabilities", label: "Capabilities", min: "viewer" },
  { href: "/rules", label: "Rules", min: "viewer" },
  { href: "/keys", label: "API keys", min: "admin" },
  { href: "/settings/notifications", label: "Notifications", min: "viewer" },
  { href: "/settings/users", label: "Users", min: "admin" },
  { href: "/audit", label: "Audit", min: "admin" },
];
