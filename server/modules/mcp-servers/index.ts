/**
 * External MCP servers as gated capability modules: storage and review of servers and
 * their tools, the connection manager, and the registry source. Explicit exports only.
 */

export {
  type CategorizeResult,
  type CategorizeRule,
  categorizeTools,
  globMatches,
  parseCategorizeRule,
} from "./categorize";
export {
  DEFAULT_CALL_TIMEOUT_MS,
  MCP_TRANSPORTS,
  type McpServerConfig,
  type McpServerInput,
  mcpServerInput,
  parseMcpServersJson,
  parseServerInput,
} from "./config";
export {
  type ConnectionConfig,
  type ConnectionManager,
  type ConnectionManagerOptions,
  type ConnectionStatus,
  createConnectionManager,
  explainConnectError,
} from "./connections";
export {
  connectionConfigOf,
  createMcpModuleSource,
  type McpModuleSource,
  type McpModuleSourceOptions,
} from "./module-source";
export { mapToolResult } from "./results";
export { openSecrets, resolveSecretPlaceholders, sealSecret, secretNames } from "./secrets";
export {
  diffTools,
  getServer,
  listServers,
  type McpServerDetail,
  type McpServerSummary,
  type McpToolView,
  removeServer,
  saveServer,
  setServerSecret,
  setServerStatus,
  wireName,
} from "./servers";
export {
  type SyncReport,
  syncServerTools,
} from "./sync-tools";
export { assignExportNames, exportNameFor, proposeCategory, toolHash, type UpstreamTool } from "./tools";
