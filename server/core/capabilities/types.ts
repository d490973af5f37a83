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

/** What a `toolstore/ui` call asks a client to do (the export names of the module). */
export const UI_CALLS = ["show", "ask", "confirm", "progress"] as const;
export type UiCall = (typeof UI_CALLS)[number];

/** One client connected to a run, as `ui.renderers()` reports it. */
export interface RendererInfo {
  /** Opaque id of the connection (a console tab's client id, an MCP session). */
  id: string;
  /** `console`: a playground tab; `mcp`: an MCP client. */
  kind: "console" | "mcp";
  /** For people: "playground tab of alice", `MCP client "claude-code" 1.2`. */
  label: string;
  /** The calls this client can render. */
  renders: UiCall[];
}

/**
 * The browser (or MCP client) round trip of `toolstore/ui`: a run has one when the surface that
 * started it can render; headless runs (CLI, MCP tasks, nested runs) have none.
 */
export interface ClientToolRouter {
  /** The clients connected to this run now (a console tab that closed is gone). */
  renderers(): RendererInfo[];
  /**
   * Routes one call to a client that renders it and resolves with the person's answer (`show`
   * and `progress` resolve once delivered). Throws AppError CLIENT_REQUIRED when no connected
   * client renders `call`, CLIENT_TIMEOUT when nobody answered in `timeoutMs`, CLIENT_DECLINED
   * when the person declined. `signal` withdraws the prompt (the run ended).
   */
  execute(
    call: UiCall,
    args: JsonObject,
    options: { runId: string; capability: string; timeoutMs: number; signal: AbortSignal },
  ): Promise<JsonValue>;
}

export interface CapabilityRun {
  /** Browser round trip for ui capabilities; absent on headless runs. */
  readonly client?: ClientToolRouter;
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
