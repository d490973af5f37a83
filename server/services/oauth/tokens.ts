/**
 * The token endpoint (authorization code with PKCE S256, refresh token rotation with reuse
 * detection), revocation (RFC 7009) and the access-token check of /api/mcp. Tokens are opaque
 * random strings; only their sha256 is stored, with the resource (RFC 8707 audience) they are for.
 * A code exchange creates the grant and the ApiKey row the grant acts as.
 */
import { calculatePKCECodeChallenge } from "oauth4webapi";
import type { Db } from "../../db";
import { type ApiKeyIdentity, apiKeyIdentityById, OAUTH_KEY_PREFIX } from "../api-keys";
import { newToken, sha256 } from "../auth";
import { authenticateClient, type KnownClient, readCapped } from "./clients";
import { OAuthError, oauthErrorResponse, oauthJson } from "./errors";
import { revokeGrant } from "./grants";
import type { OAuthSite } from "./site";

export const ACCESS_PREFIX = "tsat_";
const REFRESH_PREFIX = "tsrt_";
export const ACCESS_TTL_MS = 60 * 60_000;
export const REFRESH_TTL_MS = 30 * 24 * 60 * 60_000;
const MAX_FORM_BYTES = 16 * 1024;

export interface TokenLifetimes {
  accessMs: number;
  refreshMs: number;
}

async function readForm(req: Request): Promise<URLSearchParams> {
  if (req.method !== "POST") throw new OAuthError("invalid_request", "use POST", 405);
  const type = req.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    throw new OAuthError("invalid_request", "send the parameters as application/x-www-form-urlencoded");
  }
  const text = await readCapped(req, MAX_FORM_BYTES);
  if (text === null) throw new OAuthError("invalid_request", "the request body is too large", 413);
  const form = new URLSearchParams(text);
  for (const key of new Set(form.keys())) {
    if (form.getAll(key).length > 1) throw new OAuthError("invalid_request", `parameter ${key} is repeated`);
  }
  return form;
}

async function issuePair(
  db: Db,
  grant: { id: string; apiKeyId: string; resource: string; scope: string },
  ttl: TokenLifetimes,
) {
  const access = `${ACCESS_PREFIX}${newToken(32)}`;
  const refresh = `${REFRESH_PREFIX}${newToken(32)}`;
  const now = Date.now();
  const row = (token: string, kind: string, ms: number) => ({
    tokenHash: sha256(token),
    grantId: grant.id,
    apiKeyId: grant.apiKeyId,
    kind,
    resource: grant.resource,
    expiresAt: new Date(now + ms),
  });
  await db.oAuthToken.createMany({
    data: [row(access, "access", ttl.accessMs), row(refresh, "refresh", ttl.refreshMs)],
  });
  return {
    access_token: access,
    token_type: "Bearer",
    expires_in: Math.floor(ttl.accessMs / 1000),
    refresh_token: refresh,
    ...(grant.scope ? { scope: grant.scope } : {}),
  };
}

function checkResource(form: URLSearchParams, bound: string) {
  const resource = form.get("resource");
  if (resource !== null && resource !== bound) {
    throw new OAuthError("invalid_target", `this grant is for the resource ${bound}, not ${resource}`);
  }
}

async function exchangeCode(db: Db, client: KnownClient, form: URLSearchParams, ttl: TokenLifetimes) {
  const code = form.get("code");
  if (!code) throw new OAuthError("invalid_request", "code is required");
  const codeHash = sha256(code);
  const row = await db.oAuthCode.findUnique({ where: { codeHash } });
  if (!row) throw new OAuthError("invalid_grant", "unknown authorization code");
  const claimed = await db.oAuthCode.updateMany({
    where: { codeHash, usedAt: null },
    data: { usedAt: new Date() },
  });
  if (claimed.count !== 1) {
    // A code used twice was stolen or replayed: what the first use got is revoked (RFC 6749 4.1.2).
    const again = await db.oAuthCode.findUnique({ where: { codeHash }, select: { grantId: true } });
    if (again?.grantId) await revokeGrant(db, again.grantId, "code_reused");
    throw new OAuthError(
      "invalid_grant",
      "the authorization code was already used; the grant it gave is revoked",
    );
  }
  if (row.expiresAt.getTime() < Date.now())
    throw new OAuthError("invalid_grant", "the authorization code expired; authorize again");
  if (row.clientId !== client.id)
    throw new OAuthError("invalid_grant", "the authorization code was issued to another client");
  const redirectUri = form.get("redirect_uri");
  if (redirectUri !== null && redirectUri !== row.redirectUri) {
    throw new OAuthError("invalid_grant", "redirect_uri does not match the one of the authorization request");
  }
  const verifier = form.get("code_verifier");
  if (!verifier || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) {
    throw new OAuthError("invalid_request", "code_verifier is required (43 to 128 unreserved characters)");
  }
  if ((await calculatePKCECodeChallenge(verifier)) !== row.codeChallenge) {
    throw new OAuthError("invalid_grant", "code_verifier does not match the code_challenge (PKCE S256)");
  }
  checkResource(form, row.resource);
  const user = await db.user.findUnique({ where: { id: row.userId }, select: { disabledAt: true } });
  if (!user || user.disabledAt) throw new OAuthError("invalid_grant", "the user who consented is disabled");
  const key = await db.apiKey.create({
    data: {
      name: client.name.slice(0, 60),
      userId: row.userId,
      mode: row.mode,
      modules: row.modules,
      prefix: OAUTH_KEY_PREFIX,
      // Nobody holds a key with this hash: the grant's tokens are its only way in.
      keyHash: sha256(`oauth-grant:${newToken(32)}`),
    },
    select: { id: true },
  });
  const grant = await db.oAuthGrant.create({
    data: {
      clientId: client.id,
      userId: row.userId,
      apiKeyId: key.id,
      resource: row.resource,
      redirectUri: row.redirectUri,
      scope: row.scope,
    },
  });
  await db.oAuthCode.update({ where: { codeHash }, data: { grantId: grant.id } });
  await db.oAuthClient.update({ where: { id: client.id }, data: { lastUsedAt: new Date() } });
  return issuePair(db, grant, ttl);
}

async function refresh(db: Db, client: KnownClient, form: URLSearchParams, ttl: TokenLifetimes) {
  const token = form.get("refresh_token");
  if (!token) throw new OAuthError("invalid_request", "refresh_token is required");
  const tokenHash = sha256(token);
  const row = await db.oAuthToken.findUnique({ where: { tokenHash } });
  if (row?.kind !== "refresh") throw new OAuthError("invalid_grant", "unknown refresh token");
  const grant = await db.oAuthGrant.findUnique({ where: { id: row.grantId } });
  if (!grant || grant.revokedAt)
    throw new OAuthError("invalid_grant", "the grant was revoked; authorize again");
  if (grant.clientId !== client.id)
    throw new OAuthError("invalid_grant", "the refresh token was issued to another client");
  const rotated = await db.oAuthToken.updateMany({
    where: { tokenHash, usedAt: null, revokedAt: null },
    data: { usedAt: new Date() },
  });
  if (rotated.count !== 1) {
    if (row.usedAt || (await db.oAuthToken.findUnique({ where: { tokenHash } }))?.usedAt) {
      await revokeGrant(db, grant.id, "refresh_token_reused");
      throw new OAuthError(
        "invalid_grant",
        "the refresh token was already used (each refresh token works once); the grant is revoked, authorize again",
      );
    }
    throw new OAuthError("invalid_grant", "the refresh token was revoked");
  }
  if (row.expiresAt.getTime() < Date.now())
    throw new OAuthError("invalid_grant", "the refresh token expired; authorize again");
  checkResource(form, grant.resource);
  await db.apiKey.update({ where: { id: grant.apiKeyId }, data: { lastUsedAt: new Date() } });
  return issuePair(db, grant, ttl);
}

/** POST /oauth/token. */
export async function handleTokenRequest(
  db: Db,
  site: OAuthSite,
  req: Request,
  ttl: TokenLifetimes = { accessMs: ACCESS_TTL_MS, refreshMs: REFRESH_TTL_MS },
): Promise<Response> {
  try {
    const form = await readForm(req);
    const grantType = form.get("grant_type");
    if (grantType !== "authorization_code" && grantType !== "refresh_token") {
      throw new OAuthError(
        "unsupported_grant_type",
        `grant_type "${grantType ?? ""}" is not supported; use authorization_code or refresh_token`,
      );
    }
    const client = await authenticateClient(db, req, form, site.clientLookup);
    const body =
      grantType === "authorization_code"
        ? await exchangeCode(db, client, form, ttl)
        : await refresh(db, client, form, ttl);
    return oauthJson(body);
  } catch (error) {
    return oauthErrorResponse(error);
  }
}

/** POST /oauth/revoke (RFC 7009): a refresh token revokes its grant, an access token itself. */
export async function handleRevocationRequest(db: Db, site: OAuthSite, req: Request): Promise<Response> {
  try {
    const form = await readForm(req);
    const token = form.get("token");
    if (!token) throw new OAuthError("invalid_request", "token is required");
    const client = await authenticateClient(db, req, form, site.clientLookup);
    const row = await db.oAuthToken.findUnique({ where: { tokenHash: sha256(token) } });
    const grant = row && (await db.oAuthGrant.findUnique({ where: { id: row.grantId } }));
    // Unknown tokens and other clients' tokens get the same 200 (RFC 7009 section 2.2).
    if (row && grant && grant.clientId === client.id) {
      if (row.kind === "refresh") await revokeGrant(db, grant.id, "client");
      else
        await db.oAuthToken.update({ where: { tokenHash: row.tokenHash }, data: { revokedAt: new Date() } });
    }
    return new Response(null, { status: 200, headers: { "cache-control": "no-store" } });
  } catch (error) {
    return oauthErrorResponse(error);
  }
}

export type AccessTokenCheck = { ok: true; identity: ApiKeyIdentity } | { ok: false; reason: string };

/**
 * The identity of a presented access token, checked against the database on every request (so a
 * revocation on any instance stops the very next call) and against this resource (audience).
 */
export async function verifyAccessToken(db: Db, resource: string, token: string): Promise<AccessTokenCheck> {
  if (!token.startsWith(ACCESS_PREFIX) || token.length > 200)
    return { ok: false, reason: "not an access token" };
  const row = await db.oAuthToken.findUnique({ where: { tokenHash: sha256(token) } });
  if (row?.kind !== "access") return { ok: false, reason: "unknown access token" };
  if (row.revokedAt) return { ok: false, reason: "the access token was revoked" };
  if (row.expiresAt.getTime() <= Date.now())
    return { ok: false, reason: "the access token expired; refresh it" };
  if (row.resource !== resource) {
    return { ok: false, reason: `the access token is for the resource ${row.resource}, not ${resource}` };
  }
  const identity = await apiKeyIdentityById(db, row.apiKeyId);
  if (!identity) return { ok: false, reason: "the grant was revoked; authorize again" };
  return { ok: true, identity };
}
