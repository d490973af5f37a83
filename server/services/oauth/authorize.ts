/**
 * The authorization endpoint's logic: checking an authorization request (client, exact redirect
 * URI, response type, PKCE S256, resource indicator) and turning the signed-in user's consent into
 * a short-lived single-use code. The page that asks for consent is the console's; this decides.
 * Errors before the redirect URI is trusted are shown to the user; later ones go back to the client.
 */
import { MODES, type Mode } from "../../core/capabilities/types";
import type { Db } from "../../db";
import { newToken, sha256 } from "../auth";
import type { Role } from "../roles";
import { findClient, type KnownClient } from "./clients";
import type { OAuthErrorCode } from "./errors";
import type { OAuthSite } from "./site";

export const CODE_TTL_MS = 60_000;
export const SUPPORTED_SCOPES = ["mcp"] as const;

/** The strongest mode each role may hand to a client (a grant never acts beyond its user's role). */
export const MAX_MODE_BY_ROLE: Record<Role, Mode> = { viewer: "plan", approver: "default", admin: "auto" };

export function modesForRole(role: Role): Mode[] {
  return MODES.slice(0, MODES.indexOf(MAX_MODE_BY_ROLE[role]) + 1);
}

export interface AuthorizationRequest {
  client: KnownClient;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  resource: string;
  scope: string;
}

export type AuthorizeCheck =
  | { ok: true; request: AuthorizationRequest }
  /** Shown on the page: the client or its redirect URI cannot be trusted with a redirect. */
  | { ok: false; redirect: null; message: string }
  /** Sent back to the client's redirect URI. */
  | { ok: false; redirect: string; message: string };

export function errorRedirect(
  redirectUri: string,
  state: string | null,
  issuer: string,
  error: OAuthErrorCode,
  description: string,
): string {
  const url = new URL(redirectUri);
  url.searchParams.set("error", error);
  url.searchParams.set("error_description", description);
  if (state !== null) url.searchParams.set("state", state);
  url.searchParams.set("iss", issuer);
  return url.toString();
}

export async function checkAuthorizationRequest(
  db: Db,
  site: OAuthSite,
  params: URLSearchParams,
): Promise<AuthorizeCheck> {
  const clientId = params.get("client_id") ?? "";
  let client: KnownClient;
  try {
    client = await findClient(db, clientId, site.clientLookup);
  } catch (error) {
    return { ok: false, redirect: null, message: (error as Error).message };
  }
  const asked = params.get("redirect_uri");
  const redirectUri = asked ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  if (!redirectUri) {
    return { ok: false, redirect: null, message: "redirect_uri is required: the client registered several" };
  }
  if (!client.redirectUris.includes(redirectUri)) {
    return {
      ok: false,
      redirect: null,
      message: `redirect_uri "${redirectUri.slice(0, 200)}" is not one that ${client.name} registered (the match is exact)`,
    };
  }
  const state = params.get("state");
  const fail = (error: OAuthErrorCode, message: string): AuthorizeCheck => ({
    ok: false,
    redirect: errorRedirect(redirectUri, state, site.issuer, error, message),
    message,
  });
  if (params.get("response_type") !== "code") {
    return fail("unsupported_response_type", 'response_type must be "code"');
  }
  const challenge = params.get("code_challenge");
  if (!challenge || params.get("code_challenge_method") !== "S256") {
    return fail("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256");
  }
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
    return fail(
      "invalid_request",
      "code_challenge must be the base64url SHA-256 of the code verifier (43 characters)",
    );
  }
  const resources = params.getAll("resource");
  if (resources.length > 1) return fail("invalid_target", "send at most one resource");
  const resource = resources[0] ?? site.resource;
  if (resource !== site.resource) {
    return fail("invalid_target", `this server issues tokens only for the resource ${site.resource}`);
  }
  const scope = (params.get("scope") ?? "")
    .split(" ")
    .filter((s) => (SUPPORTED_SCOPES as readonly string[]).includes(s))
    .join(" ");
  return { ok: true, request: { client, redirectUri, state, codeChallenge: challenge, resource, scope } };
}

export interface Consent {
  userId: string;
  role: Role;
  mode: Mode;
  /** Module names; ["*"] for every module. */
  modules: string[];
}

/** The user allowed: a code for the client, sent to its redirect URI with the state and issuer. */
export async function approveAuthorization(
  db: Db,
  site: OAuthSite,
  request: AuthorizationRequest,
  consent: Consent,
): Promise<string> {
  if (!modesForRole(consent.role).includes(consent.mode)) {
    throw new Error(`a ${consent.role} can grant at most mode ${MAX_MODE_BY_ROLE[consent.role]}`);
  }
  const modules = [...new Set(consent.modules)];
  if (modules.length === 0 || modules.some((m) => !/^(\*|[a-z][a-z0-9_-]*)$/.test(m))) {
    throw new Error("mount at least one module (lower-case names like weather), or * for all");
  }
  const code = `tsac_${newToken(32)}`;
  await db.oAuthCode.create({
    data: {
      codeHash: sha256(code),
      clientId: request.client.id,
      userId: consent.userId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      resource: request.resource,
      scope: request.scope,
      mode: consent.mode,
      modules: JSON.stringify(modules),
      expiresAt: new Date(Date.now() + CODE_TTL_MS),
    },
  });
  const url = new URL(request.redirectUri);
  url.searchParams.set("code", code);
  if (request.state !== null) url.searchParams.set("state", request.state);
  url.searchParams.set("iss", site.issuer);
  return url.toString();
}

export function denyAuthorization(site: OAuthSite, request: AuthorizationRequest): string {
  return errorRedirect(
    request.redirectUri,
    request.state,
    site.issuer,
    "access_denied",
    "the user denied access",
  );
}
