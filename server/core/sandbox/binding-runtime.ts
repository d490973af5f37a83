/**
 * The one interface every toolset language runtime implements: the QuickJS sandbox pool for
 * `toolset.ts`, the Pyodide worker pool for `toolset.py`. The toolset module source picks a runtime
 * by the version's language and never calls a runtime any other way. A runtime runs one binding
 * call with the toolset's own limits, environment and host allow-list, outside the server's
 * JavaScript realm, and reports a guest failure as a value, not an exception.
 */
import type { HostFetch } from "./host-fetch";
import type { SandboxLimits } from "./limits";
import type { LogEntry, SandboxError } from "./protocol";
import type { SecretPlacement } from "./secret-fill";

export const TOOLSET_LANGUAGES = ["typescript", "python"] as const;
export type ToolsetLanguage = (typeof TOOLSET_LANGUAGES)[number];

export interface RunBindingRequest {
  /**
   * Who the code belongs to: `<toolset>@<contentHash>`. A runtime that keeps warm state (an
   * interpreter, a context) reuses it only for the same trust domain; two toolsets never share.
   */
  trustDomain?: string;
  /** The code to run: compiled ES module JavaScript (typescript), or the toolset.py source (python). */
  code: string;
  /** The binding's function name. */
  exportName: string;
  /** Positional arguments in parameter order, JSON values. */
  args: unknown[];
  /** Named arguments (python); a runtime that takes them ignores `args` for these names. */
  kwargs?: Record<string, unknown>;
  /**
   * The toolset's environment: plain variables, and secrets by NAME only (see `secrets`). The
   * runtime's binding host gives each secret in `secrets` the call's own placeholder
   * `{{secret:NAME:<nonce>}}`, whatever this holds for it.
   */
  env: Record<string, string>;
  /**
   * Secret values by name, for the host's egress only (fetch placeholders, signing helpers).
   * A runtime never hands a value to the code it runs.
   */
  secrets?: Record<string, string>;
  /** Where each secret may go in a request (`@secret NAME header body`); a name left out: headers. */
  secretPlacements?: Record<string, readonly SecretPlacement[]>;
  /** `api.example.com`, `api.example.com:8443`, `*.example.com`, `*`. */
  allowedHosts: string[];
  /** The toolset's own deadline. */
  timeoutMs: number;
  /** Default: the platform's fetch through the allow-list. */
  fetch?: HostFetch;
  /** Values replaced by "***" in the value, the error and the logs (second line of defence). */
  redact?: string[];
  limits?: Partial<SandboxLimits>;
  signal?: AbortSignal;
  /**
   * The sandbox call that asked (`CallSite.sandboxCall`). A runtime that can may run the binding
   * in that caller's worker and settle the guest's promise there; others ignore it.
   */
  caller?: unknown;
  /**
   * Stops the caller's own deadline (an action's) while the call waits for the runtime to be
   * ready, e.g. an interpreter's cold start; returns the resume function. That wait has the
   * runtime's own bound, and the toolset's `timeoutMs` starts only once the code can run.
   */
  pauseDeadline?: () => () => void;
}

export type BindingResult =
  | { ok: true; value: unknown; logs: LogEntry[]; durationMs: number }
  | {
      ok: false;
      /** `startup`: the code never ran, because the runtime was not ready in time. */
      error: { kind: SandboxError["kind"]; message: string; startup?: boolean };
      logs: LogEntry[];
      durationMs: number;
    };

export interface BindingRuntime {
  readonly language: ToolsetLanguage;
  runBinding(request: RunBindingRequest): Promise<BindingResult>;
  /** Stop every worker the runtime holds. */
  close(): Promise<void>;
}

/** Runtimes by language; a toolset whose language has none here cannot be called (and says so). */
export type BindingRuntimes = Partial<Record<ToolsetLanguage, BindingRuntime>>;
