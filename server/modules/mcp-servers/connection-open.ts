/**
 * Opening one connection to an upstream MCP server: its transport (a stdio process whose stderr
 * is kept, capped, or streamable HTTP with the configured headers), the SDK client, the
 * handshake and the first tool listing. A crash or a failed start sets the server's status and
 * pushes its next start back (the manager's backoff); when to open a connection is the manager's.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { AppError } from "../../core/errors";
import { explainConnectError, unavailableError } from "./connection-errors";
import type { ConnectionConfig, ConnectionStatus } from "./connections";
import type { UpstreamTool } from "./tools";

const STDERR_TAIL_CHARS = 16_000;

export interface Connection {
  key: string;
  config: ConnectionConfig;
  client: Client;
  transport: Transport;
  ready: Promise<void>;
  open: boolean;
  inflight: number;
  lastUsed: number;
  pid: number | null;
  closing: boolean;
  /** Pin hash of each tool as last listed on this connection. */
  toolHashes: Map<string, string>;
  listedAt: number;
}

/** One server's state across its connections (a crash ends a connection, not the state). */
export interface ServerState {
  connection?: Connection;
  crashes: number;
  retryAt: number;
  stderr: string;
  stderrDirty: boolean;
}

interface OpenHooks {
  state: ServerState;
  report(status: ConnectionStatus): void;
  /** Lists the tools on the connection (and hands them to the pin check). */
  syncTools(connection: Connection): Promise<UpstreamTool[]>;
  /** The manager is closing: a connection closing then is no crash. */
  closed(): boolean;
  /** Pushes the next start back after a crash or a failed start, doubling per crash. */
  backOff(): void;
}

function transportOf(
  config: ConnectionConfig,
  state: ServerState,
): { transport: Transport; stdio?: StdioClientTransport } {
  if (config.transport === "stdio") {
    if (!config.command) throw new AppError("CONFIG_INVALID", `server "${config.name}" has no command`);
    const stdio = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      env: config.env ?? {},
      stderr: "pipe",
      ...(config.cwd ? { cwd: config.cwd } : {}),
    });
    stdio.stderr?.on("data", (chunk: Buffer) => {
      state.stderr = (state.stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
      state.stderrDirty = true;
    });
    return { transport: stdio, stdio };
  }
  if (!config.url) throw new AppError("CONFIG_INVALID", `server "${config.name}" has no url`);
  const transport = new StreamableHTTPClientTransport(new URL(config.url), {
    requestInit: { headers: config.headers ?? {} },
    ...(config.fetch ? { fetch: config.fetch } : {}),
  });
  return { transport };
}

/** Every page of tools/list, as ToolStore pins them. */
export async function listUpstreamTools(client: Client, timeoutMs: number): Promise<UpstreamTool[]> {
  const tools: UpstreamTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs });
    for (const t of page.tools) {
      tools.push({
        name: t.name,
        description: t.description ?? "",
        inputSchema: (t.inputSchema ?? { type: "object" }) as Record<string, unknown>,
        annotations: (t.annotations ?? {}) as Record<string, unknown>,
      });
    }
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/**
 * Starts a connection and makes it the server's; `ready` settles once it is usable (tools
 * listed) or rejects with the fix named. `key` tells a later call whether the config changed.
 */
export function openConnection(config: ConnectionConfig, key: string, hooks: OpenHooks): Connection {
  const { state } = hooks;
  const client = new Client({ name: "toolstore", version: "0.1.0" }, { capabilities: {} });
  const { transport, stdio } = transportOf(config, state);
  const connection: Connection = {
    key,
    config,
    client,
    transport,
    open: false,
    inflight: 0,
    lastUsed: Date.now(),
    pid: null,
    closing: false,
    toolHashes: new Map(),
    listedAt: 0,
    ready: Promise.resolve(),
  };
  client.onclose = () => {
    const wasOpen = connection.open;
    connection.open = false;
    if (state.connection === connection) state.connection = undefined;
    if (connection.closing || hooks.closed()) return;
    hooks.backOff();
    hooks.report({
      status: "error",
      lastError: wasOpen
        ? `the server's ${config.transport === "stdio" ? "process exited" : "connection closed"}; it restarts on the next call`
        : "the server closed the connection while starting",
    });
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    await hooks.syncTools(connection).catch(() => undefined);
  });
  state.connection = connection;
  hooks.report({ status: "connecting", lastError: null });
  connection.ready = (async () => {
    try {
      await client.connect(transport, { timeout: config.callTimeoutMs });
      connection.pid = stdio?.pid ?? null;
      connection.open = true;
      await hooks.syncTools(connection);
      hooks.report({ status: "ready", lastError: null });
    } catch (error) {
      connection.closing = true;
      if (state.connection === connection) state.connection = undefined;
      await client.close().catch(() => undefined);
      hooks.backOff();
      const status = explainConnectError(config, error);
      hooks.report(status);
      throw unavailableError(config, status);
    }
  })();
  connection.ready.catch(() => undefined);
  return connection;
}
