/**
 * Toolsets core: parse (never run) `toolset.ts`, validate a folder, compile and hash a version, diff
 * versions, map arguments to parameters, migrate legacy API definitions. Framework-free: no
 * database, no process.env. Explicit exports only.
 */

export {
  bindingInvocation,
  resolveStoreCall,
  toPositionalArgs,
} from "./call-args";
export { checkToolsetSyntax, checkToolsetTypes } from "./check-types";
export {
  compileToolset,
  compileToolsetFiles,
  computeContentHash,
  firstParagraph,
  transpileToolset,
} from "./compile-toolset";
export {
  type BindingChange,
  type BindingSummary,
  diffToolsetVersions,
  formatToolsetDiff,
  type ToolsetDiff,
  type ToolsetVersionView,
} from "./diff-toolset";
export {
  type LegacyApiParameter,
  type MigratedApi,
  type MigrateOptions,
  migrateLegacyApi,
} from "./migrate-api";
export {
  capabilityName,
  closestNames,
  isValidToolsetName,
  RESERVED_MODULE_NAMES,
  TOOLSET_NAME_PATTERN,
} from "./names";
export {
  codeFileOf,
  DOC_FILE,
  isValidEnvName,
  isValidHostPattern,
  PYTHON_SOURCE_FILE,
  parseToolsetSource,
  SOURCE_FILE,
  TIMEOUT_MAX_MS,
  TIMEOUT_MIN_MS,
} from "./parse-toolset";
export {
  isToolsetFolder,
  listToolsetFolders,
  MAX_TOOLSET_FILE_BYTES,
  readToolsetFolder,
} from "./read-toolset-folder";
export { TOOLSET_GLOBALS_DTS } from "./runtime-globals";
export type {
  CompiledToolset,
  ParsedToolset,
  ToolsetBinding,
  ToolsetDeclarations,
  ToolsetDiagnostic,
  ToolsetEnvDeclaration,
  ToolsetFiles,
  ToolsetLanguage,
} from "./types";
export {
  formatDiagnostic,
  type ToolsetInput,
  type ToolsetValidation,
  type ValidateOptions,
  validateToolset,
  validateToolsetFiles,
} from "./validate-toolset";
