/**
 * The host side of a toolset binding's calls, shared by every runtime (the QuickJS pool, the
 * Pyodide runtime): the one place where a binding's secrets meet its requests. It checks each URL
 * against the toolset's allowed hosts before anything else, sends the request through egress
 * (egress.ts: aliases, this call's `{{secret:NAME:<nonce>}}` placeholders filled where the toolset
 * declared them, for hosts declared by name, masking of what comes back), signs with `hmac` on the
 * host, and masks every form of every secret value in what a run hands back (value, error, logs).
 * The nonce is made here, once per call: `env` gives the code its placeholders, and what a run
 * hands back shows them without it, so no caller ever holds one that would be filled. A runtime only moves requests and replies across its own
 * boundary; a failed call is a value with one of the codes below, never an exception.
 */
import { isAppError } from "../errors";
import { telemetry } from "../telemetry";
import { traceEgress } from "../trace-spans";
import {
  createEgressFetch,
  type EgressOptions,
  type HmacRequest,
  hmacWithSecret,
  redactSecrets,
} from "./egress";
import { type HostFetchRequest, hostOfUrl, isHostAllowed } from "./host-fetch";
import type { LogEntry } from "./protocol";
import { callPlaceholder, newSecretNonce } from "./secret-fill";

/** Why a binding's host call failed: the guest sees it as `e.error` (TypeScript) or httpx's `error` (Python). */
export type BindingHostErrorCode =
  /** The URL's host is not among the toolset's allowed hosts; nothing was sent. */
  | "permission_denied"
  /** A malformed request, an unknown host call, an unknown secret or a bad hmac option. */
  | "bad_input"
  /** The request ran past its timeout. */
  | "timeout"
  /** More requests in one call than the runtime allows. */
  | "limit_exceeded"
  /** The request failed at egress: the network, a secret refused for the host, a body over the cap. */
  | "fetch_failed";

export interface BindingHostError {
  error: BindingHostErrorCode;
  message: string;
}

export type BindingHostReply = { ok: true; value: unknown } | { ok: false; error: BindingHostError };

/** A guest's request as it crosses: a per-request timeout is optional (Python's httpx sets one). */
export type BindingFetchRequest = Partial<HostFetchRequest> & { url: string; timeoutMs?: number };

/** Egress as for createEgressFetch (its `fetch`, when given, must re-check redirect targets itself). */
export interface BindingHostOptions extends Omit<EgressOptions, "nonce"> {
  /** Fetch calls one run may make; beyond it a call fails `limit_exceeded`. Default: no cap here. */
  maxFetches?: number;
  /** The toolset's environment as RunBindingRequest.env holds it (see BindingHost.env). */
  env?: Readonly<Record<string, string>>;
}

export interface BindingHost {
  /** The environment the call's code gets: each secret as this call's placeholder. */
  readonly env: Record<string, string>;
  /** One host call by name (`fetch`, `hmac`) with the guest's JSON request. */
  call(name: string, json: string, signal?: AbortSignal): Promise<BindingHostReply>;
  fetch(request: BindingFetchRequest, signal?: AbortSignal): Promise<BindingHostReply>;
  hmac(request: HmacRequest): BindingHostReply;
  /** Whether any value is masked; when none is, a result needs no pass on the way back. */
  readonly masks: boolean;
  /** `text` with every form of every secret value replaced by `***`. */
  redact(text: string): string;
  redactLogs(logs: readonly LogEntry[]): LogEntry[];
  /** A run's JSON result, masked: the text, and its value (the text itself if masking broke the JSON). */
  redactResult(json: string | null): { json: string; value: unknown };
}

/** The refusal of a URL whose host the toolset does not allow: the same code and words in every runtime. */
export function refusedHost(url: string, allowedHosts: readonly string[]): BindingHostError {
  return {
    error: "permission_denied",
    message: `host not allowed: ${hostOfUrl(url)} is not among this toolset's allowed hosts (${allowedHosts.join(", ") || "none"}); an admin adds it in the console (Toolsets → settings → hosts), or the toolset declares it with @hosts in its header`,
  };
}

export function createBindingHost(options: BindingHostOptions): BindingHost {
  const secrets = options.secrets ?? {};
  const masked = [...new Set([...Object.values(secrets), ...(options.redact ?? [])])].filter(
    (value) => value.length > 0,
  );
  const nonce = newSecretNonce();
  // The call that runs the binding: its requests arrive from a worker, outside its async context.
  const traceParent = telemetry().current();
  const egress = createEgressFetch({ ...options, nonce });
  let fetches = 0;
  const env: Record<string, string> = { ...(options.env ?? {}) };
  for (const name of Object.keys(secrets)) env[name] = callPlaceholder(name, nonce);
  const redact = (text: string) => redactSecrets(text, masked).replaceAll(`:${nonce}}}`, "}}");

  async function fetch(request: BindingFetchRequest, signal?: AbortSignal): Promise<BindingHostReply> {
    fetches += 1;
    if (options.maxFetches !== undefined && fetches > options.maxFetches) {
      const message = `limit of ${options.maxFetches} HTTP requests per call reached`;
      return { ok: false, error: { error: "limit_exceeded", message } };
    }
    if (typeof request?.url !== "string") return badInput("malformed fetch request");
    if (!isHostAllowed(request.url, options.allowedHosts)) {
      return { ok: false, error: refusedHost(request.url, options.allowedHosts) };
    }
    const { timeoutMs, ...plain } = request;
    const ownTimeout =
      typeof timeoutMs === "number" && timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
    const bounded = ownTimeout && signal ? AbortSignal.any([signal, ownTimeout]) : (ownTimeout ?? signal);
    let span: ReturnType<typeof traceEgress> | undefined;
    try {
      const outgoing: HostFetchRequest = {
        url: plain.url,
        method: plain.method ?? "GET",
        headers: { ...plain.headers },
        ...(plain.body === undefined ? {} : { body: plain.body }),
      };
      span = traceEgress(traceParent, outgoing);
      const response = await egress(outgoing, bounded);
      span.end(response.status);
      return { ok: true, value: response };
    } catch (error) {
      span?.end(null, error instanceof Error ? error.name : "fetch_failed");
      const message = redact(error instanceof Error ? error.message : String(error));
      // The request's own timeout, however the fetch under egress reported the abort.
      const code = timedOut(error) || ownTimeout?.aborted ? "timeout" : "fetch_failed";
      return { ok: false, error: { error: code, message } };
    }
  }

  function hmac(request: HmacRequest): BindingHostReply {
    try {
      return { ok: true, value: hmacWithSecret(request, secrets) };
    } catch (error) {
      return badInput((error as Error).message);
    }
  }

  return {
    env,
    fetch,
    hmac,
    async call(name, json, signal) {
      if (name !== "fetch" && name !== "hmac") return badInput(`unknown host call ${name}`);
      let request: unknown;
      try {
        request = JSON.parse(json);
      } catch {
        return badInput(`malformed ${name} request`);
      }
      return name === "fetch" ? fetch(request as BindingFetchRequest, signal) : hmac(request as HmacRequest);
    },
    masks: masked.length > 0 || Object.keys(secrets).length > 0,
    redact,
    redactLogs: (logs) => logs.map((l) => ({ level: l.level, text: redact(l.text) })),
    redactResult(json) {
      const text = json === null ? "null" : redact(json);
      try {
        return { json: text, value: JSON.parse(text) };
      } catch {
        // Masking broke the JSON (a secret spanning syntax); the text is the value.
        return { json: text, value: text };
      }
    },
  };
}

function badInput(message: string): BindingHostReply {
  return { ok: false, error: { error: "bad_input", message } };
}

function timedOut(error: unknown): boolean {
  if (isAppError(error)) return error.code === "LIMIT_EXCEEDED" && /timed out/.test(error.message);
  return error instanceof Error && error.name === "TimeoutError";
}
