/**
 * Secrets as handles: toolset code holds a secret's NAME (its `env` entry is the placeholder
 * `{{secret:NAME:<nonce>}}`, the nonce fresh for each call), and the host puts the value in only
 * at egress — where the toolset declared it may go (secret-fill.ts), in an outgoing request to a
 * host the toolset declared by name (a bare `*` entry never receives secrets), or inside a
 * host-side signing helper that returns only the signature. Every binding runtime (QuickJS,
 * Pyodide) sends its guest's requests through `createEgressFetch`.
 *
 * Redaction is the second line of defence: each value is masked in every form of `secretForms`
 * (raw, JSON-escaped once and twice, \u-escaped, HTML-escaped, base64, hex, percent-encoded, ...)
 * in what comes back from egress (response body, headers, errors) and in what a run returns.
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
import {
  type CallSecrets,
  fillCallSecrets,
  hasCallPlaceholder,
  newSecretNonce,
  type SecretPlacement,
  usesCallSecrets,
} from "./secret-fill";

/** The placeholder `env` holds for a secret before a call's host gives it the call's nonce. */
export function secretPlaceholder(name: string): string {
  return `{{secret:${name}}}`;
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

/**
 * The request as it leaves the host: this call's placeholders filled for their place
 * (secret-fill.ts), and refused for a host the toolset did not declare by name.
 */
export function fillRequestSecrets(
  request: HostFetchRequest,
  call: CallSecrets,
  allowedHosts: readonly string[],
): HostFetchRequest {
  if (!usesCallSecrets(request, call.nonce)) return request;
  if (!secretsAllowedFor(request.url, allowedHosts)) {
    throw new AppError(
      "FORBIDDEN",
      `secrets are sent only to hosts this toolset declares by name, not to ${hostOfUrl(request.url)}`,
    );
  }
  return fillCallSecrets(request, call);
}

/** Every form in which a value is masked: as written, and as common encoders and reflections show it. */
export function secretForms(value: string): string[] {
  const forms = new Set<string>([value]);
  const json = JSON.stringify(value).slice(1, -1);
  forms.add(json);
  // A value escaped twice (JSON inside a JSON string) is still the value.
  forms.add(JSON.stringify(JSON.stringify(value)).slice(3, -3));
  forms.add(unicodeEscaped(value));
  forms.add(unicodeEscaped(value).toUpperCase().replace(/\\U/g, "\\u"));
  // HTML escapers (named entities, decimal and hex references) over the value, and over its
  // JSON form: a JSON body reflected in an error page.
  for (const style of HTML_STYLES) {
    forms.add(htmlEscape(value, style));
    forms.add(htmlEscape(json, style));
  }
  const bytes = Buffer.from(value, "utf8");
  forms.add(bytes.toString("base64"));
  forms.add(bytes.toString("base64").replace(/=+$/, ""));
  forms.add(bytes.toString("base64url"));
  forms.add(bytes.toString("hex"));
  forms.add(bytes.toString("hex").toUpperCase());
  const percent = percentEncoded(value);
  forms.add(percent);
  forms.add(percent.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  forms.add(encodeURIComponent(value));
  forms.add(encodeURIComponent(value).replace(/%20/g, "+"));
  forms.add(encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  forms.add(percent.replace(/%/g, "="));
  // Longest first, so a form that contains another is masked whole.
  return [...forms].filter((f) => f.length >= 4).sort((a, b) => b.length - a.length);
}

/** Every character outside letters and digits as `\\uXXXX` (JSON encoders that escape all). */
function unicodeEscaped(value: string): string {
  return [...value]
    .map((c) =>
      /[A-Za-z0-9]/.test(c)
        ? c
        : c
            .split("")
            .map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, "0")}`)
            .join(""),
    )
    .join("");
}

/** Every byte but letters and digits percent-encoded (upper case), the strictest URL encoders' form. */
function percentEncoded(value: string): string {
  return [...Buffer.from(value, "utf8")]
    .map((b) =>
      /[A-Za-z0-9]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");
}

const HTML_NAMED: Record<string, string> = {
  '"': "&quot;",
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  "'": "&#39;",
};
type HtmlEscape = (c: string) => string | undefined;
const HTML_STYLES: HtmlEscape[] = [
  (c) => HTML_NAMED[c],
  (c) => (c === "'" ? "&apos;" : HTML_NAMED[c]),
  (c) => (c === "'" ? "&#x27;" : HTML_NAMED[c]),
  (c) => (/[A-Za-z0-9 ]/.test(c) ? undefined : `&#${c.codePointAt(0)};`),
  (c) => (/[A-Za-z0-9 ]/.test(c) ? undefined : `&#x${(c.codePointAt(0) ?? 0).toString(16)};`),
  (c) => (/[A-Za-z0-9 ]/.test(c) ? undefined : `&#x${(c.codePointAt(0) ?? 0).toString(16).toUpperCase()};`),
  (c) => (c in HTML_NAMED ? `&#${c.codePointAt(0)};` : undefined),
  (c) => (c in HTML_NAMED ? `&#x${(c.codePointAt(0) ?? 0).toString(16)};` : undefined),
];

function htmlEscape(value: string, style: HtmlEscape): string {
  return [...value].map((c) => style(c) ?? c).join("");
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
  /** The nonce of this call's placeholders; only they are filled. Default: a fresh one. */
  nonce?: string;
  /** Where each secret may go (RunBindingRequest.secretPlacements); default headers only. */
  placements?: Readonly<Record<string, readonly SecretPlacement[]>>;
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
  const call: CallSecrets = {
    nonce: options.nonce ?? newSecretNonce(),
    values: secrets,
    ...(options.placements ? { placements: options.placements } : {}),
  };
  const masked = [...new Set([...Object.values(secrets), ...(options.redact ?? [])])];
  const inner: HostFetch =
    options.fetch ??
    createAllowlistFetch({
      allowedHosts: options.allowedHosts,
      timeoutMs: options.timeoutMs,
      maxBodyBytes: options.maxBodyBytes ?? 4 << 20,
      prepareHop: (request, firstUrl) => prepareHop(request, firstUrl, call, options.allowedHosts),
      ...(options.hostAliases ? { hostAliases: options.hostAliases } : {}),
    });
  return async (request, signal) => {
    // With the default fetch every hop is prepared there; a supplied fetch gets the filled request.
    const outgoing = options.fetch ? fillRequestSecrets(request, call, options.allowedHosts) : request;
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
  call: CallSecrets,
  allowedHosts: readonly string[],
): HostFetchRequest {
  if (sameOrigin(request.url, firstUrl)) return fillRequestSecrets(request, call, allowedHosts);
  if (hasCallPlaceholder(request.body, call.nonce)) {
    throw new AppError(
      "FORBIDDEN",
      `refused to resend a body with a secret to ${hostOfUrl(request.url)} after a redirect`,
    );
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.headers)) {
    if (!hasCallPlaceholder(v, call.nonce)) headers[k] = v;
  }
  return { ...request, headers };
}

export type HmacAlgorithm = "sha1" | "sha256" | "sha384" | "sha512";
const HMAC_ALGORITHMS = new Set<string>(["sha1", "sha256", "sha384", "sha512"]);
const SIGNATURE_ENCODINGS = new Set<string>(["hex", "base64", "base64url"]);

export interface HmacRequest {
  /** The secret's name, or its placeholder as `env` holds it (with or without the call's nonce). */
  secret: string;
  data: string;
  algorithm?: string;
  encoding?: string;
}

/** HMAC of `data` keyed by a secret the caller names; returns only the signature. */
export function hmacWithSecret(request: HmacRequest, secrets: Readonly<Record<string, string>>): string {
  const name =
    /^\{\{secret:([A-Za-z_][A-Za-z0-9_]*)(?::[0-9a-f]+)?\}\}$/.exec(request.secret)?.[1] ?? request.secret;
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

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
