/**
 * Every command of `npm run toolstore --`, in help order. To add one: write it in its own file
 * under server/cli/ as a `CliCommand` and list it here.
 */
import type { CliCommand } from "./command";
import { keysCommand } from "./keys-command";
import { migrateApiCommand } from "./migrate-api-command";
import { validateToolsetCommand } from "./validate-toolset-command";

export const COMMANDS: readonly CliCommand[] = [validateToolsetCommand, migrateApiCommand, keysCommand];
