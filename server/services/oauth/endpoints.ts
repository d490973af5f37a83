/**
 * The authorization server's HTTP endpoints over Web Request/Response, framework-free: metadata
 * documents, registration, token and revocation. Route files only pick the site and call these.
 * Metadata, registration, token and revocation carry no cookies, so any origin may read them (CORS).
 */
import type { Db } from "../../db";
import { MAX_REGISTRATION_BYTES, readCapped, registerClient } from "./clients";
import { OAuthError, oauthErrorResponse, oauthJson } from "./errors";
import { authorizationServerMetadata, type OAuthSite, protectedResourceMetadata } from "./site";
import { handleRevocationRequest, handleTokenRequest, type TokenLifetimes } from "./tokens";

export const CORS_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "authorization, content-type, mcp-protocol-version",
  "access-control-max-age": "600",
};

function withCors(res: Response): Response {
  for (const [k, v] of Object.entries(CORS_HEADERS)) res.headers.set(k, v);
  return res;
}

export function corsPreflight(): Response {
  return new Response(null, { status: 204, headers: CORS_HEADERS });
}

export function protectedResourceMetadataResponse(site: OAuthSite): Response {
  return withCors(oauthJson(protectedResourceMetadata(site), 200, { "cache-control": "max-age=300" }));
}

export function authorizationServerMetadataResponse(site: OAuthSite): Response {
  return withCors(oauthJson(authorizationServerMetadata(site), 200, { "cache-control": "max-age=300" }));
}

export async function handleRegistrationRequest(db: Db, req: Request): Promise<Response> {
  try {
    if (!(req.headers.get("content-type") ?? "").toLowerCase().startsWith("application/json")) {
      throw new OAuthError("invalid_client_metadata", "send the client metadata as application/json");
    }
    const text = await readCapped(req, MAX_REGISTRATION_BYTES);
    if (text === null) {
      throw new OAuthError(
        "invalid_client_metadata",
        `the client metadata exceeds ${MAX_REGISTRATION_BYTES / 1024} KiB`,
        413,
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new OAuthError("invalid_client_metadata", "the body is not JSON");
    }
    return withCors(oauthJson(await registerClient(db, body), 201));
  } catch (error) {
    return withCors(oauthErrorResponse(error));
  }
}

export interface OAuthEndpoints {
  register(req: Request): Promise<Response>;
  token(req: Request): Promise<Response>;
  revoke(req: Request): Promise<Response>;
  resourceMetadata(req: Request): Response;
  serverMetadata(req: Request): Response;
}

/** The endpoints of one deployment, for the site a request was addressed to. */
export function createOAuthEndpoints(
  db: Db,
  siteOf: (req: Request) => OAuthSite,
  ttl?: TokenLifetimes,
): OAuthEndpoints {
  return {
    register: (req) => handleRegistrationRequest(db, req),
    token: async (req) => withCors(await handleTokenRequest(db, siteOf(req), req, ttl)),
    revoke: async (req) => withCors(await handleRevocationRequest(db, siteOf(req), req)),
    resourceMetadata: (req) => protectedResourceMetadataResponse(siteOf(req)),
    serverMetadata: (req) => authorizationServerMetadataResponse(siteOf(req)),
  };
}
