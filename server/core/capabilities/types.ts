/**
 * Capability contracts shared by the registry, the gate, the sandbox dispatcher and every surface.
 * Types and fixed vocabularies only; no behaviour lives here (the client bundle imports it).
 */
export const CATEGORIES = ["read", "write", "execute", "external"] as const;
export type Category = (typeof CATEGORIES)[number];

export const MODES = ["plan", "default", "auto"] as const;
export type Mode = (typeof MODES)[number];

export const SURFACES = ["playground", "mcp", "cli", "console"] as const;
export type Surface = (typeof SURFACES)[number];

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A JSON Schema document (draft 2020-12 subset that ajv understands). */
export type JsonSchema = { [key: string]: unknown };

export interface CapabilitySpec {
  /** Wire name `module.export`, e.g. `weather.get_weather`. */
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /** Required; there is no silent default. */
  category: Category;
  /** Optional one-line text for the approval card, rendered from the snapshot. */
  userMessage?: (args: JsonObject) => string;
  /**
   * `nested`: the call's effects are the capability calls it makes through the same run (a skill
   * script), each journaled itself, so a replay may run it again like a read.
   */
  journal?: "nested";
}

/** Who acts, through which surface, in which mode, with which modules mounted. */
export interface Session {
  /** Stable id of the session that grants are scoped to (a console tab session, an API key session). */
  id: string;
  userId: string;
  surface: Surface;
  mode: Mode;
  /** Module names (without the `toolstore/` prefix) this session may import. */
  mountedModules: string[];
  apiKeyId?: string;
  /** Display label for approval cards: "alice (playground)" or `key "laptop-claude"`. */
  actorLabel: string;
}

/** Handle of an image kept in the asset store; pixels never ride in the envelope. */
export interface ImageRef {
  asset_id: string;
  mime: string;
  width: number;
  height: number;
}

export interface CapabilityRun {
  /** Id of the action run; for a direct call (console "try", tests) a fresh id with no ActionRun row. */
  readonly runId: string;
  readonly session: Session;
  /** The only call path: snapshot, validate, gate, audit, impl. */
  invoke(name: string, args: unknown): Promise<unknown>;
  /** Abort signal that fires when the run ends or is cancelled. */
  readonly signal: AbortSignal;
  /** (engine extension) True when the run is an action in the sandbox, false for a direct call. */
  readonly sandboxed?: boolean;
  /** (engine extension) Record an image this run produced so it appears in the envelope's `images`. */
  reportImage?(image: ImageRef): void;
  /**
   * (engine extension) Stop the action's deadline while an impl waits for something that is not
   * the action's work (a runtime's cold start); returns the resume function. Absent for direct calls.
   */
  pauseDeadline?(): () => void;
}

/**
 * Where a call came from, for an impl that can serve it there: `sandboxCall` is the sandbox's
 * opaque handle of the guest's pending call (a runtime that runs code, like the QuickJS pool, may
 * run a binding in the caller's own worker and settle the guest's promise there). Absent for
 * direct calls and for calls an impl makes itself.
 */
export interface CallSite {
  readonly sandboxCall?: unknown;
}

export type CapabilityImpl = (run: CapabilityRun, args: JsonObject, site?: CallSite) => Promise<unknown>;

export interface CapabilityExport {
  spec: CapabilitySpec;
  impl: CapabilityImpl;
  /**
   * Version of this export alone, when its module's exports change independently (an external
   * MCP server's tools are pinned one by one). Grants and version-pinned rules bind to it.
   * Default: the module's versionHash.
   */
  versionHash?: string;
}

/**
 * Where a module comes from: `builtin` (a platform module), or the kind its source plug-in
 * declares (`toolset`, `mcp`, the next source's). The core never branches on a source's kind.
 */
export type ModuleKind = "builtin" | (string & {});

/** One import specifier `toolstore/<name>` grouping exports. */
export interface CapabilityModule {
  /** Module name without prefix: `weather` for `toolstore/weather`. */
  name: string;
  description: string;
  source: ModuleKind;
  /** Content hash of the code behind the module (toolset version hash; builtin version string). */
  versionHash: string;
  exports: CapabilityExport[];
  /** (engine extension) Agent-facing documentation (a toolset's doc.md); `store.info` returns it. */
  doc?: string;
}
