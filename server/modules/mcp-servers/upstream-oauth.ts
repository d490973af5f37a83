/**
 * ToolStore as the OAuth client of an upstream HTTP MCP server. An admin starts the flow on the
 * server's page: the server's 401 names its resource metadata, which names the authorization
 * server; ToolStore registers (dynamic registration, or its own client ID metadata document when
 * it is served over https and the server supports it), sends the admin there with PKCE S256 and
 * the resource indicator, and exchanges the code at the callback. Tokens are sealed like other
 * secrets, sent only to that server's origin, and refreshed before they expire with the resource,
 * at the token endpoint of the issuer that issued them (its metadata is kept, never rediscovered
 * for a refresh). A database lease lets one instance refresh at a time, so a rotated refresh token
 * is never spent twice. A refresh the issuer refuses marks the server "reauthorize".
 */
import { randomUUID } from "node:crypto";
import {
  discoverOAuthServerInfo,
  exchangeAuthorization,
  extractResourceMetadataUrl,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { OAuthError as SdkOAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { AppError } from "../../core/errors";
import type { Db } from "../../db";
import { newToken, sha256 } from "../../services/auth";
import { mcpSecretContext, secretBoxFor } from "../../services/stored-secrets";

/** Refresh this long before the access token expires. */
export const REFRESH_MARGIN_MS = 60_000;

/**
 * Whether the token should be refreshed now: within the margin of its expiry, where the margin is
 * a minute, or half the token's lifetime (at least 10 s) for tokens that live under two minutes: a
 * 30 s token would otherwise be refreshed on every call, and a burst of calls runs into the
 * issuer's rate limit.
 */
export function refreshDue(
  row: { expiresAt: Date | null; lastRefreshAt: Date | null; authorizedAt: Date | null },
  now = Date.now(),
): boolean {
  if (!row.expiresAt) return false;
  const issued = (row.lastRefreshAt ?? row.authorizedAt)?.getTime();
  const lifetime = issued === undefined ? Number.POSITIVE_INFINITY : row.expiresAt.getTime() - issued;
  return row.expiresAt.getTime() - now <= Math.min(REFRESH_MARGIN_MS, Math.max(lifetime / 2, 10_000));
}

/** Refusals that only a new authorization fixes; anything else (rate limits, outages) is retried. */
const REFUSED_CODES = new Set(["invalid_grant", "invalid_client", "unauthorized_client", "invalid_target"]);
const LEASE_MS = 30_000;
const PENDING_TTL_MS = 10 * 60_000;
const INSTANCE = randomUUID();

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface UpstreamOAuthState {
  authorized: boolean;
  issuer: string | null;
  resource: string | null;
  expiresAt: Date | null;
  lastRefreshAt: Date | null;
  authorizedAt: Date | null;
  authorizedBy: string | null;
  lastError: string | null;
  needsReauth: boolean;
  pending: boolean;
}

const context = (serverId: string, part: string) => mcpSecretContext(serverId, `oauth:${part}`);

async function seal(db: Db, serverId: string, part: string, value: string): Promise<string> {
  return (await secretBoxFor(db)).seal(value, context(serverId, part));
}

async function open(db: Db, serverId: string, part: string, sealed: string): Promise<string> {
  return (await secretBoxFor(db)).open(sealed, context(serverId, part));
}

export function reauthorizeError(name: string, why: string): AppError {
  return new AppError(
    "UNAUTHENTICATED",
    `The MCP server "${name}" needs to be authorized again (${why}). An admin opens its page under MCP servers and presses Authorize.`,
  );
}

async function serverRow(db: Db, name: string) {
  const row = await db.mcpServer.findUnique({
    where: { name },
    select: { id: true, name: true, transport: true, url: true },
  });
  if (!row) throw new AppError("NOT_FOUND", `No MCP server named "${name}".`);
  if (row.transport !== "http" || !row.url) {
    throw new AppError("BAD_INPUT", `"${name}" is a stdio server; OAuth applies to HTTP servers only.`);
  }
  return { ...row, url: row.url };
}

/** The 401 an unauthenticated initialize gets, for the resource metadata URL it names (if any). */
async function probeResourceMetadata(url: string, fetchFn: FetchLike): Promise<URL | undefined> {
  const res = await fetchFn(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "toolstore", version: "0.1.0" },
      },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  await res.body?.cancel().catch(() => {});
  return res.status === 401 ? extractResourceMetadataUrl(res) : undefined;
}

export interface StartOptions {
  /** ToolStore's own origin (where the admin's browser comes back). */
  origin: string;
  username: string;
  fetchFn?: FetchLike;
}

export function callbackUrl(origin: string): string {
  return `${origin}/oauth/upstream/callback`;
}

export function clientMetadataDocumentUrl(origin: string): string {
  return `${origin}/oauth/upstream/client.json`;
}

/** ToolStore's client ID metadata document (served at clientMetadataDocumentUrl). */
export function clientMetadataDocument(origin: string) {
  return {
    client_id: clientMetadataDocumentUrl(origin),
    client_name: "ToolStore",
    client_uri: origin,
    redirect_uris: [callbackUrl(origin)],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}

async function clientFor(
  db: Db,
  serverId: string,
  issuer: string,
  metadata: AuthorizationServerMetadata,
  origin: string,
  fetchFn: FetchLike,
): Promise<OAuthClientInformationMixed> {
  const existing = await db.mcpServerOAuth.findUnique({
    where: { serverId },
    select: { issuer: true, clientInfo: true },
  });
  if (existing?.clientInfo && existing.issuer === issuer) {
    const info = JSON.parse(existing.clientInfo) as OAuthClientInformationMixed & {
      redirect?: string;
      sealedSecret?: string;
    };
    if (info.redirect === callbackUrl(origin)) {
      const secret = info.sealedSecret
        ? await open(db, serverId, "client_secret", info.sealedSecret)
        : undefined;
      return { client_id: info.client_id, ...(secret ? { client_secret: secret } : {}) };
    }
  }
  if (metadata.client_id_metadata_document_supported && origin.startsWith("https://")) {
    return { client_id: clientMetadataDocumentUrl(origin) };
  }
  if (!metadata.registration_endpoint) {
    throw new AppError(
      "BAD_INPUT",
      `the authorization server ${issuer} offers neither dynamic registration nor client ID metadata documents (those need ToolStore on https); register ToolStore there by hand and use a static header instead`,
    );
  }
  const { client_id, client_secret } = await registerClient(issuer, {
    metadata,
    clientMetadata: { ...clientMetadataDocument(origin), client_id: undefined } as never,
    fetchFn,
  });
  return { client_id, ...(client_secret ? { client_secret } : {}) };
}

/** Starts an authorization: returns the URL to send the admin's browser to. */
export async function startUpstreamAuthorization(
  db: Db,
  name: string,
  options: StartOptions,
): Promise<string> {
  const fetchFn = options.fetchFn ?? fetch;
  const server = await serverRow(db, name);
  let info: Awaited<ReturnType<typeof discoverOAuthServerInfo>>;
  try {
    const resourceMetadataUrl = await probeResourceMetadata(server.url, fetchFn);
    info = await discoverOAuthServerInfo(server.url, { resourceMetadataUrl, fetchFn });
  } catch (error) {
    throw new AppError("BAD_INPUT", `OAuth discovery for "${name}" failed: ${(error as Error).message}`);
  }
  const metadata = info.authorizationServerMetadata;
  if (!metadata) {
    throw new AppError(
      "BAD_INPUT",
      `"${name}" names no OAuth authorization server with metadata (RFC 8414); use a static header`,
    );
  }
  if (!metadata.code_challenge_methods_supported?.includes("S256")) {
    throw new AppError(
      "BAD_INPUT",
      `the authorization server ${metadata.issuer} does not support PKCE S256; ToolStore will not authorize without it`,
    );
  }
  const issuer = metadata.issuer;
  const resource = info.resourceMetadata?.resource ?? server.url;
  const client = await clientFor(db, server.id, issuer, metadata, options.origin, fetchFn);
  const scope = info.resourceMetadata?.scopes_supported?.join(" ") || undefined;
  const state = newToken(24);
  const { authorizationUrl, codeVerifier } = await startAuthorization(issuer, {
    metadata,
    clientInformation: client,
    redirectUrl: callbackUrl(options.origin),
    scope,
    state,
    resource: new URL(resource),
  });
  const clientInfo = JSON.stringify({
    client_id: client.client_id,
    redirect: callbackUrl(options.origin),
    ...(client.client_secret
      ? { sealedSecret: await seal(db, server.id, "client_secret", client.client_secret) }
      : {}),
  });
  const data = {
    resource,
    resourceMetadataUrl: info.resourceMetadata ? (info.resourceMetadata.resource ?? null) : null,
    issuer,
    asMetadata: JSON.stringify(metadata),
    clientInfo,
    scope: scope ?? null,
    pendingStateHash: sha256(state),
    pendingVerifier: await seal(db, server.id, "verifier", codeVerifier),
    pendingBy: options.username,
    pendingAt: new Date(),
  };
  await db.mcpServerOAuth.upsert({
    where: { serverId: server.id },
    create: { serverId: server.id, ...data },
    update: data,
  });
  return authorizationUrl.toString();
}

async function clientInfoOf(
  db: Db,
  row: { serverId: string; clientInfo: string | null },
): Promise<OAuthClientInformationMixed> {
  const info = JSON.parse(row.clientInfo ?? "{}") as { client_id: string; sealedSecret?: string };
  const secret = info.sealedSecret
    ? await open(db, row.serverId, "client_secret", info.sealedSecret)
    : undefined;
  return { client_id: info.client_id, ...(secret ? { client_secret: secret } : {}) };
}

async function saveTokens(
  db: Db,
  serverId: string,
  tokens: OAuthTokens,
  keepRefresh: string | null,
  extra: Record<string, unknown>,
) {
  const refresh = tokens.refresh_token ?? keepRefresh;
  await db.mcpServerOAuth.update({
    where: { serverId },
    data: {
      accessToken: await seal(db, serverId, "access", tokens.access_token),
      refreshToken: refresh ? await seal(db, serverId, "refresh", refresh) : null,
      expiresAt: tokens.expires_in ? new Date(Date.now() + tokens.expires_in * 1000) : null,
      lastError: null,
      needsReauth: false,
      ...extra,
    },
  });
}

/** The browser came back with a code: exchange it (state, issuer and PKCE checked). Returns the server name. */
export async function completeUpstreamAuthorization(
  db: Db,
  params: URLSearchParams,
  options: { origin: string; fetchFn?: FetchLike },
): Promise<string> {
  const state = params.get("state");
  const row = state
    ? await db.mcpServerOAuth.findUnique({ where: { pendingStateHash: sha256(state) } })
    : null;
  if (!row?.pendingVerifier || !row.pendingAt || Date.now() - row.pendingAt.getTime() > PENDING_TTL_MS) {
    throw new AppError(
      "BAD_INPUT",
      "This authorization is unknown or older than 10 minutes; press Authorize again.",
    );
  }
  const server = await db.mcpServer.findUnique({ where: { id: row.serverId }, select: { name: true } });
  const name = server?.name ?? "";
  const clear = { pendingStateHash: null, pendingVerifier: null, pendingAt: null };
  const error = params.get("error");
  if (error) {
    await db.mcpServerOAuth.update({
      where: { serverId: row.serverId },
      data: {
        ...clear,
        lastError: `authorization refused: ${error} ${params.get("error_description") ?? ""}`.trim(),
      },
    });
    throw new AppError(
      "BAD_INPUT",
      `The authorization server refused: ${error}. ${params.get("error_description") ?? ""}`,
    );
  }
  const iss = params.get("iss");
  if (iss !== null && iss !== row.issuer) {
    throw new AppError(
      "BAD_INPUT",
      `The answer came from issuer ${iss}, not ${row.issuer}; not accepted (mix-up defence).`,
    );
  }
  const metadata = JSON.parse(row.asMetadata) as AuthorizationServerMetadata;
  const tokens = await exchangeAuthorization(row.issuer, {
    metadata,
    clientInformation: await clientInfoOf(db, row),
    authorizationCode: params.get("code") ?? "",
    codeVerifier: await open(db, row.serverId, "verifier", row.pendingVerifier),
    redirectUri: callbackUrl(options.origin),
    resource: new URL(row.resource),
    fetchFn: options.fetchFn,
  });
  await saveTokens(db, row.serverId, tokens, null, {
    ...clear,
    authorizedAt: new Date(),
    authorizedBy: row.pendingBy,
    lastRefreshAt: null,
  });
  return name;
}

/**
 * Refreshes under the lease. Returns false when another instance holds the lease (the caller
 * waits for its result). A refusal by the issuer marks the server for reauthorization.
 */
async function refreshUnderLease(
  db: Db,
  serverId: string,
  name: string,
  fetchFn: FetchLike,
): Promise<boolean> {
  const now = new Date();
  const took = await db.mcpServerOAuth.updateMany({
    where: { serverId, OR: [{ refreshLeaseUntil: null }, { refreshLeaseUntil: { lt: now } }] },
    data: { refreshLeaseUntil: new Date(now.getTime() + LEASE_MS), refreshLeaseBy: INSTANCE },
  });
  if (took.count !== 1) return false;
  try {
    const row = await db.mcpServerOAuth.findUnique({ where: { serverId } });
    if (!row?.refreshToken) throw reauthorizeError(name, "no refresh token was issued");
    // Another instance may have refreshed between our read and the lease.
    if (!refreshDue(row) && row.lastRefreshAt && row.lastRefreshAt > new Date(now.getTime() - LEASE_MS)) {
      return true;
    }
    const refreshToken = await open(db, serverId, "refresh", row.refreshToken);
    let tokens: OAuthTokens;
    try {
      tokens = await refreshAuthorization(row.issuer, {
        metadata: JSON.parse(row.asMetadata) as AuthorizationServerMetadata,
        clientInformation: await clientInfoOf(db, row),
        refreshToken,
        resource: new URL(row.resource),
        fetchFn,
      });
    } catch (error) {
      const refused = error instanceof SdkOAuthError && REFUSED_CODES.has(error.errorCode);
      const message = `refresh at ${row.issuer} failed: ${(error as Error).message}`;
      await db.mcpServerOAuth.update({
        where: { serverId },
        data: { lastError: message, needsReauth: refused },
      });
      throw refused
        ? reauthorizeError(name, message)
        : new AppError(
            "CONFIG_INVALID",
            `The MCP server "${name}": ${message}; it is retried on the next call.`,
          );
    }
    await saveTokens(db, serverId, tokens, refreshToken, { lastRefreshAt: new Date() });
    return true;
  } finally {
    await db.mcpServerOAuth.updateMany({
      where: { serverId, refreshLeaseBy: INSTANCE },
      data: { refreshLeaseUntil: null, refreshLeaseBy: null },
    });
  }
}

/** A usable access token for the server: refreshed first when it expires within the margin. */
export async function upstreamAccessToken(
  db: Db,
  serverId: string,
  name: string,
  options: { force?: boolean; fetchFn?: FetchLike } = {},
): Promise<string> {
  const deadline = Date.now() + LEASE_MS + 5_000;
  let forced = options.force ?? false;
  const seen = forced
    ? (await db.mcpServerOAuth.findUnique({ where: { serverId }, select: { accessToken: true } }))
        ?.accessToken
    : null;
  for (;;) {
    const row = await db.mcpServerOAuth.findUnique({ where: { serverId } });
    if (!row?.accessToken) throw reauthorizeError(name, "it was never authorized");
    if (row.needsReauth) throw reauthorizeError(name, row.lastError ?? "the last refresh failed");
    if (forced && row.accessToken !== seen) forced = false;
    if (!refreshDue(row) && !forced) return open(db, serverId, "access", row.accessToken);
    if (await refreshUnderLease(db, serverId, name, options.fetchFn ?? fetch)) {
      // Refreshed (here or by the lease's holder): use what it stored, without asking again.
      const after = await db.mcpServerOAuth.findUnique({ where: { serverId } });
      if (after?.needsReauth) throw reauthorizeError(name, after.lastError ?? "the last refresh failed");
      if (after?.accessToken) return open(db, serverId, "access", after.accessToken);
      throw reauthorizeError(name, "it was never authorized");
    }
    if (Date.now() > deadline)
      throw new AppError(
        "CONFIG_INVALID",
        `The MCP server "${name}": a token refresh on another instance did not finish.`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The fetch an OAuth-authorized server's transport uses: the bearer token goes only to the server's
 * own origin; a 401 makes one forced refresh and one retry.
 */
export function upstreamOAuthFetch(
  db: Db,
  server: { id: string; name: string; url: string },
  fetchFn: FetchLike = fetch,
): FetchLike {
  const origin = new URL(server.url).origin;
  return async (url, init) => {
    if (new URL(String(url)).origin !== origin) return fetchFn(url, init);
    const send = async (token: string) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${token}`);
      return fetchFn(url, { ...init, headers });
    };
    const first = await send(await upstreamAccessToken(db, server.id, server.name, { fetchFn }));
    if (first.status !== 401) return first;
    await first.body?.cancel().catch(() => {});
    return send(await upstreamAccessToken(db, server.id, server.name, { force: true, fetchFn }));
  };
}

export async function upstreamOAuthState(db: Db, name: string): Promise<UpstreamOAuthState | null> {
  const server = await db.mcpServer.findUnique({ where: { name }, select: { id: true } });
  if (!server) throw new AppError("NOT_FOUND", `No MCP server named "${name}".`);
  const row = await db.mcpServerOAuth.findUnique({ where: { serverId: server.id } });
  if (!row) return null;
  return {
    authorized: !!row.accessToken,
    issuer: row.issuer,
    resource: row.resource,
    expiresAt: row.expiresAt,
    lastRefreshAt: row.lastRefreshAt,
    authorizedAt: row.authorizedAt,
    authorizedBy: row.authorizedBy,
    lastError: row.lastError,
    needsReauth: row.needsReauth,
    pending: !!row.pendingAt && Date.now() - row.pendingAt.getTime() < PENDING_TTL_MS,
  };
}

/** Servers whose authorization must be renewed by an admin (the approvals inbox's cards). */
export async function serversNeedingReauth(db: Db): Promise<{ name: string; lastError: string | null }[]> {
  const rows = await db.mcpServerOAuth.findMany({
    where: { needsReauth: true },
    select: { serverId: true, lastError: true },
  });
  const servers = await db.mcpServer.findMany({
    where: { id: { in: rows.map((r) => r.serverId) } },
    select: { id: true, name: true },
  });
  const names = new Map(servers.map((s) => [s.id, s.name]));
  return rows.flatMap((r) =>
    names.has(r.serverId) ? [{ name: names.get(r.serverId) as string, lastError: r.lastError }] : [],
  );
}
