/** OAuth grants: the Keys page's list (client, user, mode, modules, last used) and revocation. */
import { AppError } from "../../core/errors";
import type { Db } from "../../db";
import { forgetApiKeyChecks } from "../api-keys";

export type RevokeReason = "user" | "client" | "refresh_token_reused" | "code_reused";

/** Revokes a grant, its key and its tokens; the next request with any of them fails, on every instance. */
export async function revokeGrant(db: Db, grantId: string, reason: RevokeReason): Promise<boolean> {
  const grant = await db.oAuthGrant.findUnique({ where: { id: grantId }, select: { apiKeyId: true } });
  if (!grant) return false;
  const now = new Date();
  const [revoked] = await db.$transaction([
    db.oAuthGrant.updateMany({
      where: { id: grantId, revokedAt: null },
      data: { revokedAt: now, revokedReason: reason },
    }),
    db.apiKey.updateMany({ where: { id: grant.apiKeyId, revokedAt: null }, data: { revokedAt: now } }),
    db.oAuthToken.updateMany({ where: { grantId, revokedAt: null }, data: { revokedAt: now } }),
  ]);
  forgetApiKeyChecks(db);
  return revoked.count === 1;
}

/** The console's revoke button. */
export async function revokeGrantById(db: Db, grantId: string): Promise<void> {
  const exists = await db.oAuthGrant.findUnique({ where: { id: grantId }, select: { id: true } });
  if (!exists) throw new AppError("NOT_FOUND", "No such OAuth grant.");
  if (!(await revokeGrant(db, grantId, "user")))
    throw new AppError("CONFLICT", "This grant is already revoked.");
}

export async function listGrants(db: Db) {
  const grants = await db.oAuthGrant.findMany({
    orderBy: [{ revokedAt: "asc" }, { createdAt: "desc" }],
    take: 500,
    select: {
      id: true,
      clientId: true,
      userId: true,
      apiKeyId: true,
      resource: true,
      redirectUri: true,
      createdAt: true,
      revokedAt: true,
      revokedReason: true,
    },
  });
  const [clients, keys] = await Promise.all([
    db.oAuthClient.findMany({
      where: { id: { in: [...new Set(grants.map((g) => g.clientId))] } },
      select: { id: true, name: true, kind: true },
    }),
    db.apiKey.findMany({
      where: { id: { in: grants.map((g) => g.apiKeyId) } },
      select: { id: true, mode: true, modules: true, lastUsedAt: true, user: { select: { username: true } } },
    }),
  ]);
  const clientById = new Map(clients.map((c) => [c.id, c]));
  const keyById = new Map(keys.map((k) => [k.id, k]));
  return grants.map((g) => {
    const key = keyById.get(g.apiKeyId);
    const client = clientById.get(g.clientId);
    return {
      id: g.id,
      clientId: g.clientId,
      clientName: client?.name ?? g.clientId,
      clientKind: client?.kind ?? "registered",
      redirectHost: new URL(g.redirectUri).host || g.redirectUri,
      owner: key?.user.username ?? "",
      mode: key?.mode ?? "plan",
      modules: JSON.parse(key?.modules ?? "[]") as string[],
      createdAt: g.createdAt,
      lastUsedAt: key?.lastUsedAt ?? null,
      revokedAt: g.revokedAt,
      revokedReason: g.revokedReason,
    };
  });
}
