/**
 * Connections to upstream MCP servers, one per server per process, through the official SDK
 * Client. A stdio server's process starts on first use, is restarted with backoff after a crash,
 * stops when idle, counts against a process cap, and is killed when ToolStore closes or exits.
 * It gets only its configured environment plus the SDK's small inherited set (HOME, LOGNAME,
 * PATH, SHELL, TERM, USER: PATH so `npx`/`node` resolve, HOME for npm's cache), never
 * ToolStore's own variables. Its stderr is kept, capped. Every connect lists the tools and hands
 * them to `onTools` (the pin check); a `tools/list_changed` notification does the same.
 */
import { createHash } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AppError } from "../../core/errors";
import {
  explainConnectError,
  httpStatusOf,
  toolChangedError,
  unavailableError,
  upstreamCallError,
} from "./connection-errors";
import { type Connection, listUpstreamTools, openConnection, type ServerState } from "./connection-open";
import { toolHash, type UpstreamTool } from "./tools";

export { explainConnectError } from "./connection-errors";

/** What a connection needs, secrets already resolved. */
export interface ConnectionConfig {
  name: string;
  transport: "stdio" | "http";
  command?: string | null;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string | null;
  headers?: Record<string, string>;
  /** Set for a server ToolStore holds OAuth tokens for (upstream-oauth.ts); part of the config key. */
  oauth?: boolean;
  /** The HTTP transport's fetch (adds and refreshes the OAuth token); not part of the config key. */
  fetch?: (url: string | URL, init?: RequestInit) => Promise<Response>;
  callTimeoutMs: number;
}

export interface ConnectionStatus {
  status: "connecting" | "ready" | "error" | "unauthorized" | "stopped";
  lastError?: string | null;
  stderrTail?: string;
}

export interface ConnectionManagerOptions {
  /** Most stdio processes alive at once; the least recently used idle one is stopped for a new one. */
  maxProcesses?: number;
  /** A connection unused this long is closed (its process stopped). */
  idleMs?: number;
  /** First restart delay after a crash; doubles per crash up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /**
   * A live connection lists the tools again before a call when its list is older than this, so a
   * server that swaps a tool without `tools/list_changed` is caught within this time.
   */
  relistMs?: number;
  onStatus?(name: string, status: ConnectionStatus): void | Promise<void>;
  onTools?(name: string, tools: UpstreamTool[]): void | Promise<void>;
}

export interface ConnectionManager {
  /** Calls a tool; the signal cancels it upstream (notifications/cancelled). */
  callTool(
    config: ConnectionConfig,
    tool: string,
    args: Record<string, unknown>,
    options?: { signal?: AbortSignal; expectHash?: string; meta?: Record<string, string> | undefined },
  ): Promise<CallToolResult>;
  /** Connects (if needed) and lists the tools; also hands them to onTools. */
  listTools(config: ConnectionConfig): Promise<UpstreamTool[]>;
  /** Closes one server's connection (after a config change or removal). */
  disconnect(name: string): Promise<void>;
  /** Servers with a live or starting connection. */
  connectedNames(): string[];
  /** Pids of live stdio processes by server name (status pages, tests). */
  processes(): Map<string, number>;
  stderrOf(name: string): string;
  close(): Promise<void>;
}

function configKey(config: ConnectionConfig): string {
  const { callTimeoutMs: _ignored, ...rest } = config;
  return createHash("sha256").update(JSON.stringify(rest)).digest("hex");
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AppError("CONFLICT", "the run has ended"));
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(timer);
      reject(new AppError("CONFLICT", "the run has ended"));
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** One tools/call on a live connection; the run's signal cancels it upstream. */
async function callOnConnection(
  c: Connection,
  tool: string,
  args: Record<string, unknown>,
  signal: AbortSignal | undefined,
  meta?: Record<string, string>,
): Promise<CallToolResult> {
  c.inflight += 1;
  c.lastUsed = Date.now();
  // One signal per call: the SDK keeps its abort listener, and a run makes many calls.
  const cancel = new AbortController();
  const onAbort = () => cancel.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) cancel.abort(signal.reason);
  try {
    // `_meta` carries the W3C trace context (SEP-414) when traces are on.
    const params = meta ? { name: tool, arguments: args, _meta: meta } : { name: tool, arguments: args };
    return (await c.client.callTool(params, undefined, {
      timeout: c.config.callTimeoutMs,
      signal: cancel.signal,
    })) as CallToolResult;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    c.inflight -= 1;
    c.lastUsed = Date.now();
  }
}

/** Stopping ToolStore ends every child, also on an exit that skips close(). Returns the unhook. */
function killOnExit(states: Map<string, ServerState>): () => void {
  const killAll = () => {
    for (const state of states.values()) {
      const pid = state.connection?.pid;
      if (pid) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    }
  };
  process.on("exit", killAll);
  return () => process.off("exit", killAll);
}

/** Closes connections unused for `idleMs`; a server whose stderr grew gets its status (and tail) written. */
function sweepIdle(
  states: Map<string, ServerState>,
  idleMs: number,
  stop: (name: string, connection: Connection) => Promise<void>,
  report: (name: string, status: ConnectionStatus) => void,
): void {
  const now = Date.now();
  for (const [name, state] of states) {
    const c = state.connection;
    if (c && c.inflight === 0 && now - c.lastUsed > idleMs) {
      void stop(name, c).then(() => report(name, { status: "stopped", lastError: null }));
    } else if (state.stderrDirty) {
      report(name, { status: c?.open ? "ready" : "stopped" });
    }
  }
}

/**
 * The stdio process to stop so a new one fits under the cap: the least recently used idle one,
 * or none while there is room. All busy: LIMIT_EXCEEDED.
 */
function processToStop(
  states: Map<string, ServerState>,
  maxProcesses: number,
): { name: string; connection: Connection } | null {
  const live = [...states.entries()].filter(
    ([, s]) => s.connection && s.connection.config.transport === "stdio",
  );
  if (live.length < maxProcesses) return null;
  const idle = live
    .filter(([, s]) => s.connection && s.connection.inflight === 0)
    .sort(([, a], [, b]) => (a.connection?.lastUsed ?? 0) - (b.connection?.lastUsed ?? 0));
  const victim = idle[0];
  if (!victim?.[1].connection) {
    throw new AppError(
      "LIMIT_EXCEEDED",
      `all ${maxProcesses} MCP server processes are busy; try again when a call finishes`,
    );
  }
  return { name: victim[0], connection: victim[1].connection };
}

export function createConnectionManager(options: ConnectionManagerOptions = {}): ConnectionManager {
  const maxProcesses = options.maxProcesses ?? 16;
  const idleMs = options.idleMs ?? 10 * 60_000;
  const backoffMs = options.backoffMs ?? 250;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const relistMs = options.relistMs ?? 60_000;
  const states = new Map<string, ServerState>();
  let closed = false;

  const stateOf = (name: string): ServerState => {
    let state = states.get(name);
    if (!state) {
      state = { crashes: 0, retryAt: 0, stderr: "", stderrDirty: false };
      states.set(name, state);
    }
    return state;
  };

  const report = (name: string, status: ConnectionStatus) => {
    const state = stateOf(name);
    state.stderrDirty = false;
    void Promise.resolve(options.onStatus?.(name, { ...status, stderrTail: state.stderr })).catch(
      () => undefined,
    );
  };

  const unhookExit = killOnExit(states);
  const idleTimer = setInterval(
    () => sweepIdle(states, idleMs, stop, report),
    Math.max(1000, Math.min(idleMs / 4, 5000)),
  );
  idleTimer.unref();

  async function stop(name: string, connection: Connection): Promise<void> {
    connection.closing = true;
    connection.open = false;
    const state = states.get(name);
    if (state?.connection === connection) state.connection = undefined;
    await connection.client.close().catch(() => undefined);
  }

  async function makeRoom(): Promise<void> {
    const victim = processToStop(states, maxProcesses);
    if (victim) await stop(victim.name, victim.connection);
  }

  async function syncTools(connection: Connection): Promise<UpstreamTool[]> {
    const tools = await listUpstreamTools(connection.client, connection.config.callTimeoutMs);
    connection.toolHashes = new Map(tools.map((t) => [t.name, toolHash(t)]));
    connection.listedAt = Date.now();
    await options.onTools?.(connection.config.name, tools);
    return tools;
  }

  function connect(config: ConnectionConfig): Connection {
    const state = stateOf(config.name);
    return openConnection(config, configKey(config), {
      state,
      report: (status) => report(config.name, status),
      syncTools,
      closed: () => closed,
      backOff() {
        state.crashes += 1;
        state.retryAt = Date.now() + Math.min(maxBackoffMs, backoffMs * 2 ** (state.crashes - 1));
      },
    });
  }

  async function connected(config: ConnectionConfig, signal?: AbortSignal): Promise<Connection> {
    if (closed) throw new AppError("CONFLICT", "ToolStore is shutting down");
    const state = stateOf(config.name);
    const key = configKey(config);
    let c = state.connection;
    if (c && c.key !== key) {
      await stop(config.name, c);
      c = undefined;
    }
    if (!c) {
      const wait = state.retryAt - Date.now();
      if (wait > 0) await sleep(wait, signal);
      c = state.connection;
      if (!c) {
        if (config.transport === "stdio") await makeRoom();
        c = state.connection ?? connect(config);
      }
    }
    await c.ready;
    return c;
  }

  return {
    async callTool(config, tool, args, callOptions = {}) {
      const { signal, expectHash, meta } = callOptions;
      const c = await connected(config, signal);
      if (Date.now() - c.listedAt > relistMs) await syncTools(c);
      const listed = c.toolHashes.get(tool);
      if (expectHash && listed !== expectHash) throw toolChangedError(config, tool, listed);
      try {
        const result = await callOnConnection(c, tool, args, signal, meta);
        stateOf(config.name).crashes = 0;
        return result;
      } catch (error) {
        if (signal?.aborted)
          throw new AppError("CONFLICT", `the run ended; ${config.name}.${tool} was cancelled upstream`);
        if (config.transport === "http" && httpStatusOf(error) !== undefined) {
          // A credential revoked after connecting: the server's status names it, as at connect.
          const status = explainConnectError(config, error);
          report(config.name, status);
          throw unavailableError(config, status);
        }
        throw upstreamCallError(config, tool, error, stateOf(config.name).stderr);
      }
    },
    async listTools(config) {
      const c = await connected(config);
      c.lastUsed = Date.now();
      return syncTools(c);
    },
    async disconnect(name) {
      const c = states.get(name)?.connection;
      if (c) await stop(name, c);
      states.delete(name);
    },
    connectedNames() {
      return [...states.entries()].filter(([, s]) => s.connection).map(([name]) => name);
    },
    processes() {
      const out = new Map<string, number>();
      for (const [name, s] of states)
        if (s.connection?.pid && s.connection.open) out.set(name, s.connection.pid);
      return out;
    },
    stderrOf(name) {
      return states.get(name)?.stderr ?? "";
    },
    async close() {
      closed = true;
      clearInterval(idleTimer);
      await Promise.allSettled(
        [...states.entries()].map(([name, s]) => (s.connection ? stop(name, s.connection) : undefined)),
      );
      unhookExit();
    },
  };
}
