/**
 * Where this ToolStore's authorization server and protected resource live, from the origin it is
 * reached at (TOOLSTORE_PUBLIC_URL when set, else the request's own checked Host): the issuer,
 * the endpoints, and the one resource (`<origin>/api/mcp`) that tokens are bound to.
 */

import { SUPPORTED_SCOPES } from "./authorize";
import type { ClientLookupOptions } from "./clients";
import { isLoopbackUrl } from "./clients";

export interface OAuthSite {
  issuer: string;
  resource: string;
  resourceMetadataUrl: string;
  clientLookup: ClientLookupOptions;
}

export const MCP_PATH = "/api/mcp";

export function oauthSite(origin: string, fetchFn?: typeof fetch): OAuthSite {
  const issuer = origin.replace(/\/$/, "");
  return {
    issuer,
    resource: `${issuer}${MCP_PATH}`,
    resourceMetadataUrl: `${issuer}/.well-known/oauth-protected-resource${MCP_PATH}`,
    clientLookup: { allowLoopbackHttp: isLoopbackUrl(new URL(issuer)), fetchFn },
  };
}

/** RFC 9728 protected resource metadata of /api/mcp. */
export function protectedResourceMetadata(site: OAuthSite) {
  return {
    resource: site.resource,
    authorization_servers: [site.issuer],
    bearer_methods_supported: ["header"],
    scopes_supported: [...SUPPORTED_SCOPES],
    resource_name: "ToolStore MCP",
    resource_documentation: `${site.issuer}/keys`,
  };
}

/** RFC 8414 authorization server metadata. */
export function authorizationServerMetadata(site: OAuthSite) {
  return {
    issuer: site.issuer,
    authorization_endpoint: `${site.issuer}/oauth/authorize`,
    token_endpoint: `${site.issuer}/oauth/token`,
    registration_endpoint: `${site.issuer}/oauth/register`,
    revocation_endpoint: `${site.issuer}/oauth/revoke`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
    revocation_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
    scopes_supported: [...SUPPORTED_SCOPES],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}
