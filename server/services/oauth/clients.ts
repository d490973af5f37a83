/**
 * OAuth clients of ToolStore's authorization server: dynamic registration (RFC 7591) and client ID
 * metadata documents (an https URL as client_id, fetched and cached). Both are limited: a capped
 * body, at most MAX_REDIRECT_URIS exact redirect URIs that are https or loopback http, a cap on
 * registrations per hour across instances (counted in the database), and abandoned registrations
 * pruned. A confidential client gets a secret once; only its hash is kept.
 */
import { z } from "zod";
import type { Db } from "../../db";
import { newToken, sha256 } from "../auth";
import { OAuthError } from "./errors";

export const MAX_REDIRECT_URIS = 10;
const MAX_URI_CHARS = 1_000;
export const MAX_REGISTRATION_BYTES = 16 * 1024;
export const MAX_METADATA_DOCUMENT_BYTES = 16 * 1024;
export const REGISTRATIONS_PER_HOUR = 100;
const ABANDONED_AFTER_MS = 24 * 60 * 60_000;
const DOCUMENT_FRESH_MS = 60 * 60_000;
const DOCUMENT_TIMEOUT_MS = 5_000;
const SECRET_PREFIX = "tscs_";

export const AUTH_METHODS = ["none", "client_secret_post", "client_secret_basic"] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

export interface KnownClient {
  id: string;
  kind: "registered" | "metadata_document";
  name: string;
  redirectUris: string[];
  authMethod: AuthMethod;
  clientUri?: string;
  logoUri?: string;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function isLoopbackUrl(url: URL): boolean {
  return LOOPBACK.has(url.hostname);
}

/** A redirect URI ToolStore will send codes to: absolute, no fragment, https or loopback http. */
export function checkRedirectUri(value: string): string | null {
  if (value.length > MAX_URI_CHARS) return `redirect URI is longer than ${MAX_URI_CHARS} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `redirect URI "${value}" is not an absolute URL`;
  }
  if (url.hash) return `redirect URI "${value}" has a fragment; remove the #part`;
  if (url.username || url.password) return `redirect URI "${value}" carries credentials`;
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && isLoopbackUrl(url)) return null;
  if (url.protocol === "http:") return `redirect URI "${value}" uses http on a non-loopback host; use https`;
  // Private-use schemes (RFC 8252 section 7.1) of native apps: a reverse domain name with a dot.
  if (/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol)) return null;
  return `redirect URI "${value}" has scheme ${url.protocol} ; use https, loopback http or a reverse-domain scheme`;
}

const clientMetadataSchema = z.object({
  redirect_uris: z
    .array(z.string())
    .min(1, "redirect_uris needs at least one URI")
    .max(MAX_REDIRECT_URIS, `redirect_uris has at most ${MAX_REDIRECT_URIS} URIs`),
  client_name: z.string().trim().max(100, "client_name has at most 100 characters").optional(),
  client_uri: z.string().max(MAX_URI_CHARS).optional(),
  logo_uri: z.string().max(MAX_URI_CHARS).optional(),
  token_endpoint_auth_method: z.string().optional(),
  grant_types: z.array(z.string()).max(10).optional(),
  response_types: z.array(z.string()).max(10).optional(),
  scope: z.string().max(1_000).optional(),
  software_id: z.string().max(200).optional(),
  software_version: z.string().max(100).optional(),
});
type ClientMetadata = z.infer<typeof clientMetadataSchema>;

function validateMetadata(input: unknown, allowSecret: boolean): ClientMetadata & { authMethod: AuthMethod } {
  const parsed = clientMetadataSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const code = issue?.path[0] === "redirect_uris" ? "invalid_redirect_uri" : "invalid_client_metadata";
    throw new OAuthError(code, `${issue?.path.join(".") || "body"}: ${issue?.message}`);
  }
  const meta = parsed.data;
  for (const uri of meta.redirect_uris) {
    const problem = checkRedirectUri(uri);
    if (problem) throw new OAuthError("invalid_redirect_uri", problem);
  }
  const grants = meta.grant_types ?? ["authorization_code"];
  const unsupportedGrant = grants.find((g) => g !== "authorization_code" && g !== "refresh_token");
  if (unsupportedGrant) {
    throw new OAuthError(
      "invalid_client_metadata",
      `grant type "${unsupportedGrant}" is not supported; use authorization_code and refresh_token`,
    );
  }
  const responses = meta.response_types ?? ["code"];
  if (responses.some((r) => r !== "code")) {
    throw new OAuthError("invalid_client_metadata", 'only the response type "code" is supported');
  }
  const method = meta.token_endpoint_auth_method ?? (allowSecret ? "client_secret_basic" : "none");
  if (!(AUTH_METHODS as readonly string[]).includes(method) || (!allowSecret && method !== "none")) {
    throw new OAuthError(
      "invalid_client_metadata",
      `token_endpoint_auth_method "${method}" is not supported; use ${allowSecret ? AUTH_METHODS.join(", ") : "none"}`,
    );
  }
  return { ...meta, authMethod: method as AuthMethod };
}

/** RFC 7591: registers a client and returns the registration response (the secret appears once). */
export async function registerClient(db: Db, body: unknown): Promise<Record<string, unknown>> {
  const meta = validateMetadata(body, true);
  const now = Date.now();
  await db.oAuthClient.deleteMany({
    where: { kind: "registered", lastUsedAt: null, createdAt: { lt: new Date(now - ABANDONED_AFTER_MS) } },
  });
  const recent = await db.oAuthClient.count({
    where: { kind: "registered", createdAt: { gt: new Date(now - 60 * 60_000) } },
  });
  if (recent >= REGISTRATIONS_PER_HOUR) {
    throw new OAuthError(
      "temporarily_unavailable",
      `more than ${REGISTRATIONS_PER_HOUR} clients registered in the last hour; retry later`,
      429,
    );
  }
  const id = `tsc_${newToken(18)}`;
  const secret = meta.authMethod === "none" ? undefined : `${SECRET_PREFIX}${newToken(32)}`;
  const stored = {
    ...meta,
    token_endpoint_auth_method: meta.authMethod,
    grant_types: meta.grant_types ?? ["authorization_code", "refresh_token"],
    response_types: ["code"],
  };
  const { authMethod: _, ...publicMeta } = stored;
  const row = await db.oAuthClient.create({
    data: {
      id,
      kind: "registered",
      name: meta.client_name || "Unnamed client",
      redirectUris: JSON.stringify(meta.redirect_uris),
      metadata: JSON.stringify({ ...publicMeta, secretHash: secret ? sha256(secret) : undefined }),
    },
  });
  return {
    ...publicMeta,
    client_id: id,
    client_id_issued_at: Math.floor(row.createdAt.getTime() / 1000),
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
  };
}

/** Whether a client_id is a metadata document URL (https, with a path). */
export function isMetadataDocumentId(clientId: string, allowLoopbackHttp: boolean): boolean {
  try {
    const url = new URL(clientId);
    if (url.pathname === "/" || url.hash) return false;
    return url.protocol === "https:" || (allowLoopbackHttp && url.protocol === "http:" && isLoopbackUrl(url));
  } catch {
    return false;
  }
}

async function fetchMetadataDocument(
  url: string,
  fetchFn: typeof fetch,
): Promise<ClientMetadata & { authMethod: AuthMethod }> {
  let res: Response;
  try {
    res = await fetchFn(url, {
      headers: { accept: "application/json" },
      redirect: "manual",
      signal: AbortSignal.timeout(DOCUMENT_TIMEOUT_MS),
    });
  } catch (error) {
    throw new OAuthError(
      "invalid_client",
      `could not fetch the client metadata document ${url}: ${(error as Error).message}`,
    );
  }
  if (res.status !== 200) {
    throw new OAuthError(
      "invalid_client",
      `the client metadata document ${url} answered HTTP ${res.status}, not 200`,
    );
  }
  const text = await readCapped(res, MAX_METADATA_DOCUMENT_BYTES);
  if (text === null) {
    throw new OAuthError(
      "invalid_client",
      `the client metadata document ${url} is larger than ${MAX_METADATA_DOCUMENT_BYTES / 1024} KiB`,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new OAuthError("invalid_client", `the client metadata document ${url} is not JSON`);
  }
  if ((doc as { client_id?: unknown })?.client_id !== url) {
    throw new OAuthError("invalid_client", `the client metadata document's client_id must be exactly ${url}`);
  }
  try {
    return validateMetadata(doc, false);
  } catch (error) {
    throw new OAuthError("invalid_client", `client metadata document ${url}: ${(error as Error).message}`);
  }
}

/** The body as text, or null when it exceeds `max` bytes (read no further than that). */
export async function readCapped(res: Request | Response, max: number): Promise<string | null> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function toKnown(row: {
  id: string;
  kind: string;
  name: string;
  redirectUris: string;
  metadata: string;
}): KnownClient {
  const meta = JSON.parse(row.metadata) as {
    token_endpoint_auth_method?: AuthMethod;
    client_uri?: string;
    logo_uri?: string;
  };
  return {
    id: row.id,
    kind: row.kind as KnownClient["kind"],
    name: row.name,
    redirectUris: JSON.parse(row.redirectUris) as string[],
    authMethod: meta.token_endpoint_auth_method ?? "none",
    clientUri: meta.client_uri,
    logoUri: meta.logo_uri,
  };
}

export interface ClientLookupOptions {
  /** Accept http metadata document URLs on loopback hosts (a ToolStore that itself runs on loopback). */
  allowLoopbackHttp: boolean;
  fetchFn?: typeof fetch;
}

/** The client behind a client_id: a registered one, or a metadata document (fetched, cached an hour). */
export async function findClient(
  db: Db,
  clientId: string,
  options: ClientLookupOptions,
): Promise<KnownClient> {
  if (!clientId || clientId.length > MAX_URI_CHARS)
    throw new OAuthError("invalid_client", "client_id is missing or too long");
  const row = await db.oAuthClient.findUnique({ where: { id: clientId } });
  if (row && (row.kind === "registered" || Date.now() - row.fetchedAt.getTime() < DOCUMENT_FRESH_MS)) {
    return toKnown(row);
  }
  if (!isMetadataDocumentId(clientId, options.allowLoopbackHttp)) {
    throw new OAuthError(
      "invalid_client",
      `unknown client_id "${clientId.slice(0, 80)}"; register the client first (RFC 7591) or use an https client ID metadata document URL`,
    );
  }
  const meta = await fetchMetadataDocument(clientId, options.fetchFn ?? fetch);
  const data = {
    kind: "metadata_document",
    name: meta.client_name || new URL(clientId).host,
    redirectUris: JSON.stringify(meta.redirect_uris),
    metadata: JSON.stringify({ ...meta, authMethod: undefined, token_endpoint_auth_method: "none" }),
    fetchedAt: new Date(),
  };
  const saved = await db.oAuthClient.upsert({
    where: { id: clientId },
    create: { id: clientId, ...data },
    update: data,
  });
  return toKnown(saved);
}

/**
 * Client authentication at the token and revocation endpoints: HTTP Basic or client_secret_post for
 * clients registered with a secret, the bare client_id for public clients.
 */
export async function authenticateClient(
  db: Db,
  req: Request,
  form: URLSearchParams,
  options: ClientLookupOptions,
): Promise<KnownClient> {
  let clientId = form.get("client_id") ?? "";
  let secret = form.get("client_secret");
  const header = req.headers.get("authorization");
  if (header?.toLowerCase().startsWith("basic ")) {
    const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new OAuthError("invalid_client", "the Basic authorization header is malformed", 401);
    clientId = decodeURIComponent(decoded.slice(0, colon));
    secret = decodeURIComponent(decoded.slice(colon + 1));
  }
  if (!clientId) throw new OAuthError("invalid_client", "client_id is required", 401);
  const client = await findClient(db, clientId, options).catch((error: unknown) => {
    if (error instanceof OAuthError) throw new OAuthError("invalid_client", error.message, 401);
    throw error;
  });
  if (client.authMethod !== "none") {
    const row = await db.oAuthClient.findUnique({ where: { id: client.id }, select: { metadata: true } });
    const expected = (JSON.parse(row?.metadata ?? "{}") as { secretHash?: string }).secretHash;
    if (!secret || !expected || sha256(secret) !== expected) {
      throw new OAuthError(
        "invalid_client",
        "client authentication failed: wrong or missing client_secret",
        401,
      );
    }
  }
  return client;
}
