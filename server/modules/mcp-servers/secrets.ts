/**
 * Secret values of MCP servers, encrypted at rest with the same secret box as toolset secrets
 * (stored-secrets.ts: the key from TOOLSTORE_SECRET_KEY or the key file), bound to the server and
 * the secret's name. The console and CLI never show a value; only a connection opens it.
 * Placeholders `{{secret:NAME}}` in env and header values are resolved here, at connect time.
 */
import { AppError } from "../../core/errors";
import type { Db } from "../../db";
import { registerLogSecrets } from "../../infra/log";
import { isSealed } from "../../services/secret-box";
import {
  mcpSecretContext,
  MCP_PLAIN_PREFIX as PLAIN_PREFIX,
  secretBoxFor,
} from "../../services/stored-secrets";

/** The stored (sealed) form of a secret value. */
export async function sealSecret(db: Db, serverId: string, name: string, value: string): Promise<string> {
  return (await secretBoxFor(db)).seal(value, mcpSecretContext(serverId, name));
}

/** The values of a server's stored secrets, by name. */
export async function openSecrets(
  db: Db,
  serverId: string,
  rows: readonly { name: string; sealed: string }[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (rows.length === 0) return out;
  const box = await secretBoxFor(db);
  for (const row of rows) {
    if (row.sealed.startsWith(PLAIN_PREFIX)) out.set(row.name, row.sealed.slice(PLAIN_PREFIX.length));
    else if (isSealed(row.sealed))
      out.set(row.name, box.open(row.sealed, mcpSecretContext(serverId, row.name)));
    else
      throw new AppError(
        "CONFIG_INVALID",
        `the stored MCP server secret "${row.name}" is in an unknown format`,
      );
  }
  // Values opened for use are masked in every log line from now on.
  registerLogSecrets(out.values());
  return out;
}

const PLACEHOLDER = /\{\{secret:([A-Za-z_][A-Za-z0-9_]*)\}\}/g;

/** Secret names a value refers to. */
export function secretNames(value: string): string[] {
  return [...value.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
}

/**
 * Replaces every `{{secret:NAME}}` with its opened value (`secrets`: name -> value). Throws
 * CONFIG_INVALID naming the missing secret and the fix, so the server's status says what to do.
 */
export function resolveSecretPlaceholders(
  values: Record<string, string>,
  secrets: ReadonlyMap<string, string>,
  server: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = value.replace(PLACEHOLDER, (_, name: string) => {
      const opened = secrets.get(name);
      if (opened === undefined) {
        throw new AppError(
          "CONFIG_INVALID",
          `${key} names the secret "${name}", which is not set: set it on the server's page or with \`npm run toolstore -- mcp-servers secret ${server} ${name}=<value>\``,
        );
      }
      return opened;
    });
  }
  return out;
}
