/**
 * Toolsets service: publishing and syncing versions, reading them for the console and the CLI,
 * settings (environment, secrets, timeout, hosts), and the registry source that runs bindings in
 * the sandbox pool. Pending category changes are decided in the one category-review flow (./plugin.ts). Explicit exports only.
 */
export {
  applyDeclaredHosts,
  type PendingCategory,
  type PublishInput,
  type PublishOrigin,
  type PublishResult,
  publishToolset,
} from "./publish-toolset";
export { loadToolsetsFolder, type SyncFailure, type SyncResult, syncToolsetsFolder } from "./sync-toolsets";
export {
  buildToolsetModule,
  type CachedVersion,
  createToolsetModuleSource,
  currentVersionHash,
  loadToolsetRuntime,
  type ToolsetModuleInput,
  type ToolsetModulesOptions,
  type ToolsetRuntime,
} from "./toolset-modules";
export {
  type CapabilityView,
  diffStoredVersions,
  type EnvVarView,
  getToolset,
  getToolsetVersion,
  listToolsets,
  listToolsetVersions,
  SECRET_MASK,
  type ToolsetDetail,
  type ToolsetSummary,
  type ToolsetVersionDetail,
  type VersionSummary,
} from "./toolset-queries";
export {
  listToolsetEnv,
  MAX_ENV_VALUE_LENGTH,
  MIN_SECRET_LENGTH,
  type SetEnvInput,
  setToolsetEnvVar,
  type ToolsetSettings,
  unsetToolsetEnvVar,
  updateToolsetSettings,
} from "./toolset-settings";
