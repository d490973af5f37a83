import type { Role } from "@/server/services/auth";

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
  { href: "/settings/users", label: "Users", min: "admin" },
];
