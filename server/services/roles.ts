/**
 * Console roles, weakest first: a viewer reads, an approver also decides approvals, an admin
 * also changes settings. No imports, so the console's client bundle takes the values from here.
 */
export const ROLES = ["viewer", "approver", "admin"] as const;
export type Role = (typeof ROLES)[number];

export function roleAtLeast(role: Role, min: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(min);
}
