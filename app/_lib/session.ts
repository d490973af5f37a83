import "server-only";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { getDb } from "@/server/db";
import { REQUEST_PATH_HEADER } from "@/server/http/request-guard";
import {
  hasUsers,
  type Role,
  roleAtLeast,
  SESSION_COOKIE,
  type SessionUser,
  sessionUser,
} from "@/server/services/auth";

/** The signed-in user of a page request, or a redirect to sign-in (or to the setup notice). */
export async function requireUser(): Promise<SessionUser> {
  const db = getDb();
  const token = (await cookies()).get(SESSION_COOKIE)?.value;
  const user = await sessionUser(db, token);
  if (user) return user;
  if (!(await hasUsers(db))) redirect("/setup");
  const asked = (await headers()).get(REQUEST_PATH_HEADER);
  const back = asked?.startsWith("/") && !asked.startsWith("//") && asked !== "/" ? asked : null;
  redirect(back ? `/signin?next=${encodeURIComponent(back)}` : "/signin");
}

export function hasRole(user: SessionUser, min: Role): boolean {
  return roleAtLeast(user.role, min);
}

/** For pages that need more than viewer: the user, or null when the role is too low (render <Forbidden/>). */
export async function requireRole(min: Role): Promise<{ user: SessionUser; allowed: boolean }> {
  const user = await requireUser();
  return { user, allowed: roleAtLeast(user.role, min) };
}
