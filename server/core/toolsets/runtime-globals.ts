/**
 * The toolset runtime contract: the only globals a toolset's code may use besides the ECMAScript
 * built-ins (ES2023; no DOM, no Node). The sandbox pool provides them; ./check-types type-checks
 * `toolset.ts` against exactly this text, so code that reaches for anything else fails validation.
 */
export const TOOLSET_GLOBALS_FILE = "toolstore-globals.d.ts";

export const TOOLSET_GLOBALS_DTS = `
/**
 * This toolset's environment, as set in the console. Missing ones are undefined. A plain variable
 * holds its value; a secret holds only a placeholder fresh for each call ("{{secret:NAME:<nonce>}}"),
 * which the host replaces with the value in a fetch to this toolset's declared hosts, where the
 * header's \`@secret NAME header body query path\` lets it go (headers only by default).
 */
declare const env: Readonly<Record<string, string | undefined>>;

interface ToolsetHmacOptions {
  /** Default "sha256". */
  algorithm?: "sha1" | "sha256" | "sha384" | "sha512";
  /** Default "hex". */
  encoding?: "hex" | "base64" | "base64url";
}

/** HMAC of data keyed by a secret of this toolset, computed by the host: only the signature comes back. */
declare function hmac(secret: string, data: string, options?: ToolsetHmacOptions): Promise<string>;

interface ToolsetFetchInit {
  /** GET when left out. */
  method?: string;
  headers?: Record<string, string>;
  /** A string body; send JSON with JSON.stringify and a content-type header. */
  body?: string;
}

interface ToolsetFetchResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
  json(): Promise<unknown>;
}

/** HTTP(S) to the hosts allowed for this toolset only; any other host rejects. */
declare function fetch(url: string, init?: ToolsetFetchInit): Promise<ToolsetFetchResponse>;

/** Lines end up in the run's logs (capped; secrets masked). */
declare const console: {
  log(...values: unknown[]): void;
  info(...values: unknown[]): void;
  warn(...values: unknown[]): void;
  error(...values: unknown[]): void;
  debug(...values: unknown[]): void;
};
`;
