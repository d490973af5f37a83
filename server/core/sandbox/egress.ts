/**
 * Secrets as handles: toolset code holds a secret's NAME (its `env` entry is the placeholder
 * `{{secret:NAME}}`), and the host puts the value in only at egress — in the headers and body of
 * an outgoing request to a host the toolset declared by name (a bare `*` entry never receives
 * secrets), or inside a host-side signing helper that returns only the signature. Every binding
 * runtime (QuickJS, Pyodide) sends its guest's requests through `createEgressFetch`, and MCP
 * upstream headers use the same placeholder syntax through `fillSecretPlaceholders`.
 *
 * Redaction is the second line of defence: each value is masked in its raw form, its JSON-escaped
 * form, base64 (standard and URL-safe), hex (either case) and percent-encoding, in what comes back
 * from egress (response body, headers, errors) and in what a run returns (value, error, logs).
 */
import { createHmac } from "node:crypto";
import { AppError } from "../errors";
import {
  createAllowlistFetch,
  type HostFetch,
  type HostFetchRequest,
  type HostFetchResponse,
  hostOfUrl,
  isHostAllowed,
} from "./host-fetch";

/** The placeholder a toolset (or an MCP upstream header) writes where a secret's value goes. */
export const SECRET_PLACEHOLDER_PATTERN = /\{\{secret:([A-Za-z_][A-Za-z0-9_]*)\}\}/g;
const HAS_PLACEHOLDER = /\{\{secret:[A-Za-z_][A-Za-z0-9_]*\}\}/;

export function secretPlaceholder(name: string): string {
  return `{{secret:${name}}}`;
}

export function hasSecretPlaceholder(text: string | undefined): boolean {
  return text !== undefined && HAS_PLACEHOLDER.test(text);
}

export interface ToolsetVariable {
  name: string;
  value: string;
  secret: boolean;
}

/** What a runtime gets for a toolset's variables: code sees names, egress holds values. */
export interface ToolsetEnvironment {
  /** Plain variables by value; secrets as their placeholder. */
  env: Record<string, string>;
  /** Secret values by name, for egress only. */
  secrets: Record<string, string>;
  /** Values to mask (second line of defence). */
  redact: string[];
}

export function toolsetEnvironment(variables: readonly ToolsetVariable[]): ToolsetEnvironment {
  const env: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  for (const v of variables) {
    if (v.secret) {
      env[v.name] = secretPlaceholder(v.name);
      secrets[v.name] = v.value;
    } else {
      env[v.name] = v.value;
    }
  }
  return { env, secrets, redact: Object.values(secrets) };
}

/** Secrets go only to hosts a toolset names; `*` lets code reach anywhere, so it never qualifies. */
export function secretsAllowedFor(url: string, allowedHosts: readonly string[]): boolean {
  return isHostAllowed(
    url,
    allowedHosts.filter((h) => h.trim() !== "*"),
  );
}

/** Replace every placeholder in `text` with its value; an unknown name is an error, never left in. */
export function fillSecretPlaceholders(text: string, secrets: Readonly<Record<string, string>>): string {
  return text.replace(SECRET_PLACEHOLDER_PATTERN, (_match, name: string) => {
    if (!Object.hasOwn(secrets, name)) {
      throw new AppError("BAD_INPUT", `unknown secret ${name}: set it for this toolset in the console`);
    }
    return secrets[name] as string;
  });
}

/**
 * The request as it leaves the host: placeholders in header values and the body filled in. A
 * placeholder in the URL is refused (URLs end up in logs, redirects and the response), and so is
 * any placeholder bound for a host the toolset did not declare by name.
 */
export function fillRequestSecrets(
  request: HostFetchRequest,
  secrets: Readonly<Record<string, string>>,
  allowedHosts: readonly string[],
): HostFetchRequest {
  refuseUrlPlaceholder(request.url);
  const used =
    Object.values(request.headers).some(hasSecretPlaceholder) || hasSecretPlaceholder(request.body);
  if (!used) return request;
  if (!secretsAllowedFor(request.url, allowedHosts)) {
    throw new AppError(
      "FORBIDDEN",
      `secrets are sent only to hosts this toolset declares by name, not to ${hostOfUrl(request.url)}`,
    );
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.headers)) headers[k] = fillSecretPlaceholders(v, secrets);
  return {
    ...request,
    headers,
    ...(request.body !== undefined ? { body: fillSecretPlaceholders(request.body, secrets) } : {}),
  };
}

/** Every form in which a value is masked. */
export function secretForms(value: string): string[] {
  const forms = new Set<string>([value]);
  forms.add(JSON.stringify(value).slice(1, -1));
  // A value escaped twice (JSON inside a JSON string) is still the value.
  forms.add(JSON.stringify(JSON.stringify(value)).slice(3, -3));
  const bytes = Buffer.from(value, "utf8");
  forms.add(bytes.toString("base64"));
  forms.add(bytes.toString("base64").replace(/=+$/, ""));
  forms.add(bytes.toString("base64url"));
  forms.add(bytes.toString("hex"));
  forms.add(bytes.toString("hex").toUpperCase());
  forms.add(encodeURIComponent(value));
  // Longest first, so a form that contains another is masked whole.
  return [...forms].filter((f) => f.length >= 4).sort((a, b) => b.length - a.length);
}

/** Mask every form of every value with "***". Values shorter than 4 characters are not masked. */
export function redactSecrets(text: string, values: readonly string[] | undefined): string {
  if (!values || values.length === 0) return text;
  let out = text;
  for (const value of values) {
    if (value.length < 4) continue;
    for (const form of secretForms(value)) out = out.split(form).join("***");
  }
  return out;
}

function redactResponse(response: HostFetchResponse, values: readonly string[]): HostFetchResponse {
  if (values.length === 0) return response;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(response.headers)) headers[k] = redactSecrets(v, values);
  return {
    ...response,
    statusText: redactSecrets(response.statusText, values),
    url: redactSecrets(response.url, values),
    headers,
    body: redactSecrets(response.body, values),
  };
}

export interface EgressOptions {
  allowedHosts: readonly string[];
  /** Secret values by name (RunBindingRequest.secrets). */
  secrets?: Readonly<Record<string, string>>;
  /** Extra values to mask in what comes back (RunBindingRequest.redact). */
  redact?: readonly string[];
  timeoutMs: number;
  maxBodyBytes?: number;
  /** A caller-supplied fetch (tests, embedders); it must re-check redirect targets itself. */
  fetch?: HostFetch;
  /** Where declared hosts are really sent (AllowlistFetchOptions.hostAliases). */
  hostAliases?: Readonly<Record<string, string>>;
}

/**
 * The guest's fetch as the host runs it: the allow-list, secrets filled in for declared hosts,
 * and every value masked in the response and in errors. With the default fetch, a redirect to
 * another origin drops the headers that carried a secret, and refuses to resend a body that did.
 */
export function createEgressFetch(options: EgressOptions): HostFetch {
  const secrets = options.secrets ?? {};
  const masked = [...new Set([...Object.values(secrets), ...(options.redact ?? [])])];
  const inner: HostFetch =
    options.fetch ??
    createAllowlistFetch({
      allowedHosts: options.allowedHosts,
      timeoutMs: options.timeoutMs,
      maxBodyBytes: options.maxBodyBytes ?? 4 << 20,
      prepareHop: (request, firstUrl) => prepareHop(request, firstUrl, secrets, options.allowedHosts),
      ...(options.hostAliases ? { hostAliases: options.hostAliases } : {}),
    });
  return async (request, signal) => {
    refuseUrlPlaceholder(request.url);
    // With the default fetch every hop is prepared there; a supplied fetch gets the filled request.
    const outgoing = options.fetch ? fillRequestSecrets(request, secrets, options.allowedHosts) : request;
    try {
      return redactResponse(await inner(outgoing, signal), masked);
    } catch (error) {
      if (error instanceof AppError) {
        throw new AppError(error.code, redactSecrets(error.message, masked), { details: error.details });
      }
      const failure = new Error(redactSecrets((error as Error).message ?? String(error), masked));
      // Kept: callers tell a timeout (TimeoutError) from other failures by it.
      if (error instanceof Error) failure.name = error.name;
      throw failure;
    }
  };
}

function prepareHop(
  request: HostFetchRequest,
  firstUrl: string,
  secrets: Readonly<Record<string, string>>,
  allowedHosts: readonly string[],
): HostFetchRequest {
  if (sameOrigin(request.url, firstUrl)) return fillRequestSecrets(request, secrets, allowedHosts);
  if (hasSecretPlaceholder(request.body)) {
    throw new AppError(
      "FORBIDDEN",
      `refused to resend a body with a secret to ${hostOfUrl(request.url)} after a redirect`,
    );
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.headers)) if (!hasSecretPlaceholder(v)) headers[k] = v;
  return { ...request, headers };
}

export type HmacAlgorithm = "sha1" | "sha256" | "sha384" | "sha512";
const HMAC_ALGORITHMS = new Set<string>(["sha1", "sha256", "sha384", "sha512"]);
const SIGNATURE_ENCODINGS = new Set<string>(["hex", "base64", "base64url"]);

export interface HmacRequest {
  /** The secret's name, or its placeholder as `env` holds it. */
  secret: string;
  data: string;
  algorithm?: string;
  encoding?: string;
}

/** HMAC of `data` keyed by a secret the caller names; returns only the signature. */
export function hmacWithSecret(request: HmacRequest, secrets: Readonly<Record<string, string>>): string {
  const name = /^\{\{secret:([A-Za-z_][A-Za-z0-9_]*)\}\}$/.exec(request.secret)?.[1] ?? request.secret;
  if (typeof name !== "string" || !Object.hasOwn(secrets, name)) {
    throw new AppError(
      "BAD_INPUT",
      `unknown secret ${String(name).slice(0, 100)}: set it for this toolset in the console`,
    );
  }
  const algorithm = request.algorithm ?? "sha256";
  if (!HMAC_ALGORITHMS.has(algorithm)) {
    throw new AppError("BAD_INPUT", `hmac algorithm must be one of ${[...HMAC_ALGORITHMS].join(", ")}`);
  }
  const encoding = request.encoding ?? "hex";
  if (!SIGNATURE_ENCODINGS.has(encoding)) {
    throw new AppError("BAD_INPUT", `hmac encoding must be one of ${[...SIGNATURE_ENCODINGS].join(", ")}`);
  }
  if (typeof request.data !== "string") throw new AppError("BAD_INPUT", "hmac data must be a string");
  return createHmac(algorithm, secrets[name] as string)
    .update(request.data, "utf8")
    .digest(encoding as "hex" | "base64" | "base64url");
}

function refuseUrlPlaceholder(url: string): void {
  if (hasSecretPlaceholder(url) || hasSecretPlaceholder(safeDecode(url))) {
    throw new AppError(
      "BAD_INPUT",
      "a secret placeholder may appear in headers and the body only, not in the URL",
    );
  }
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

function safeDecode(url: string): string {
  try {
    return decodeURIComponent(url);
  } catch {
    return url;
  }
}
