/**
 * Every command of `npm run toolstore --`, in help order. To add one: write it in its own file
 * under server/cli/ as a `CliCommand` and list it here.
 */
import { auditCommand } from "./audit-command";
import { categoriesCommand } from "./categories-command";
import type { CliCommand } from "./command";
import { keysCommand } from "./keys-command";
import { mcpCommand } from "./mcp-command";
import { mcpServersCommand } from "./mcp-servers-command";
import { migrateApiCommand } from "./migrate-api-command";
import { migrateDockerCommand } from "./migrate-docker-command";
import { notificationsCommand } from "./notifications-command";
import { publishToolsetCommand } from "./publish-toolset-command";
import { rulesCommand } from "./rules-command";
import { secretsCommand } from "./secrets-command";
import { syncToolsetsCommand } from "./sync-toolsets-command";
import { toolsetEnvCommand } from "./toolset-env-command";
import { toolsetSettingsCommand } from "./toolset-settings-command";
import { toolsetsCommand } from "./toolsets-command";
import { validateSkillCommand } from "./validate-skill-command";
import { validateToolsetCommand } from "./validate-toolset-command";

export const COMMANDS: readonly CliCommand[] = [
  validateToolsetCommand,
  publishToolsetCommand,
  syncToolsetsCommand,
  toolsetsCommand,
  toolsetEnvCommand,
  toolsetSettingsCommand,
  migrateApiCommand,
  validateSkillCommand,
  migrateDockerCommand,
  keysCommand,
  mcpCommand,
  mcpServersCommand,
  secretsCommand,
  notificationsCommand,
  notificationsCommand,
  categoriesCommand,
  auditCommand,
  rulesCommand,
];
