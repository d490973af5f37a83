/**
 * OAuth protocol errors (RFC 6749 section 5.2, RFC 7591 section 3.2.2, RFC 6750 section 3.1) as
 * values with their wire code and HTTP status, turned into a JSON response in one place.
 */

export type OAuthErrorCode =
  /** The request is malformed: a missing or repeated parameter, a bad body. */
  | "invalid_request"
  /** Unknown client, or its authentication failed. */
  | "invalid_client"
  /** A code or refresh token that is unknown, expired, used, revoked or not this client's. */
  | "invalid_grant"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  /** The resource indicator (RFC 8707) names a resource this server does not issue tokens for. */
  | "invalid_target"
  | "invalid_redirect_uri"
  | "invalid_client_metadata"
  | "access_denied"
  /** Too many registrations; the description says when to retry. */
  | "temporarily_unavailable"
  | "server_error";

export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = "OAuthError";
  }
}

export const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" } as const;

export function oauthJson(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...NO_STORE, ...headers },
  });
}

export function oauthErrorResponse(error: unknown): Response {
  if (error instanceof OAuthError) {
    const headers: Record<string, string> =
      error.code === "invalid_client" && error.status === 401
        ? { "www-authenticate": 'Basic realm="toolstore"' }
        : {};
    return oauthJson({ error: error.code, error_description: error.message }, error.status, headers);
  }
  throw error;
}
