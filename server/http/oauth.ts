/**
 * The process's OAuth endpoints and the site a request was addressed to: TOOLSTORE_PUBLIC_URL when
 * set, else the request's own origin (its Host already checked by the request guard), so a client
 * that reaches ToolStore at http://localhost:3000 gets tokens for http://localhost:3000/api/mcp.
 */
import { readCookie } from "../api/cookies";
import { MODES, type Mode } from "../core/capabilities/types";
import { getDb } from "../db";
import { loadEnv, publicUrl } from "../env";
import { processSingleton } from "../infra/process-singletons";
import { completeUpstreamAuthorization } from "../modules/mcp-servers/upstream-oauth";
import { roleAtLeast, SESSION_COOKIE, sessionUser } from "../services/auth";
import {
  approveAuthorization,
  checkAuthorizationRequest,
  denyAuthorization,
} from "../services/oauth/authorize";
import { createOAuthEndpoints, type OAuthEndpoints } from "../services/oauth/endpoints";
import { type OAuthSite, oauthSite } from "../services/oauth/site";
import { getRequestGuard } from "./request-guard";

export function siteOfRequest(req: Request): OAuthSite {
  const env = loadEnv();
  return oauthSite(env.TOOLSTORE_PUBLIC_URL ?? getRequestGuard().requestOrigin(req) ?? publicUrl(env));
}

/** For a page: the site from the incoming request's headers. */
export function siteOfHeaders(headers: Headers): OAuthSite {
  const host = headers.get("host") ?? "127.0.0.1";
  return siteOfRequest(new Request(`http://${host}/`, { headers }));
}

export function getOAuthEndpoints(): OAuthEndpoints {
  return processSingleton("oauthEndpoints", () => createOAuthEndpoints(getDb(), siteOfRequest));
}

/**
 * POST /oauth/consent, the consent page's form: the signed-in user allows (with a mode and modules
 * their role permits) or denies; either way the browser goes back to the client's redirect URI.
 * The authorization request is checked again here: the form's copy of it is not trusted.
 */
export async function handleConsent(req: Request): Promise<Response> {
  const db = getDb();
  const site = siteOfRequest(req);
  const origin = req.headers.get("origin");
  if (origin !== new URL(site.issuer).origin && req.headers.get("sec-fetch-site") !== "same-origin") {
    return plain(403, "Forbidden: consent is given only from ToolStore's own consent page.");
  }
  const form = await req.formData();
  const query = new URLSearchParams(String(form.get("request") ?? ""));
  const user = await sessionUser(db, readCookie(req.headers.get("cookie"), SESSION_COOKIE));
  if (!user) return seeOther(`${site.issuer}/signin?next=${encodeURIComponent(`/oauth/authorize?${query}`)}`);
  const check = await checkAuthorizationRequest(db, site, query);
  if (!check.ok) return check.redirect ? seeOther(check.redirect) : plain(400, check.message);
  if (form.get("decision") !== "allow") return seeOther(denyAuthorization(site, check.request));
  const mode = String(form.get("mode") ?? "");
  const modules = form.get("mount") === "some" ? form.getAll("module").map(String) : ["*"];
  if (!(MODES as readonly string[]).includes(mode)) return plain(400, "Pick a mode: plan, default or auto.");
  try {
    const url = await approveAuthorization(db, site, check.request, {
      userId: user.id,
      role: user.role,
      mode: mode as Mode,
      modules,
    });
    return seeOther(url);
  } catch (error) {
    const back = `/oauth/authorize?${query}&consent_error=${encodeURIComponent((error as Error).message)}`;
    return seeOther(`${site.issuer}${back}`);
  }
}

function seeOther(location: string): Response {
  return new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });
}

function plain(status: number, text: string): Response {
  return new Response(`${text}\n`, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
}

/**
 * GET /oauth/upstream/callback: an admin's browser comes back from an upstream MCP server's
 * authorization server. The code is exchanged, the server is reached again (its tools listed), and
 * the browser goes back to the server's page.
 */
export async function handleUpstreamCallback(
  req: Request,
  reach: (name: string) => Promise<unknown>,
): Promise<Response> {
  const db = getDb();
  const site = siteOfRequest(req);
  const user = await sessionUser(db, readCookie(req.headers.get("cookie"), SESSION_COOKIE));
  const params = new URL(req.url).searchParams;
  if (!user)
    return seeOther(`${site.issuer}/signin?next=${encodeURIComponent(`/oauth/upstream/callback?${params}`)}`);
  if (!roleAtLeast(user.role, "admin")) return plain(403, "Only an admin can authorize an MCP server.");
  try {
    const name = await completeUpstreamAuthorization(db, params, { origin: site.issuer });
    await reach(name).catch(() => undefined);
    return seeOther(`${site.issuer}/mcp-servers/${encodeURIComponent(name)}?authorized=1`);
  } catch (error) {
    return plain(400, `Authorization failed: ${(error as Error).message}`);
  }
}
