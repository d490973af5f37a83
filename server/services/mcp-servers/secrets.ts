/**
 * Secret values of MCP servers, kept behind two functions so encryption at rest (issue #12, a key
 * file) replaces only this file. Until then a sealed value is the value with a version prefix:
 * the database holds it, the console and CLI never show it, and only a connection opens it.
 * Placeholders `{{secret:NAME}}` in env and header values are resolved here, at connect time.
 */
import { AppError } from "../../core/errors";

const PLAIN_PREFIX = "plain:v1:";

/** The stored form of a secret value. */
export function sealSecret(value: string): string {
  return `${PLAIN_PREFIX}${value}`;
}

/** The value of a stored secret. */
export function openSecret(sealed: string): string {
  if (sealed.startsWith(PLAIN_PREFIX)) return sealed.slice(PLAIN_PREFIX.length);
  throw new AppError("CONFIG_INVALID", "a stored MCP server secret is in an unknown format");
}

const PLACEHOLDER = /\{\{secret:([A-Za-z_][A-Za-z0-9_]*)\}\}/g;

/** Secret names a value refers to. */
export function secretNames(value: string): string[] {
  return [...value.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
}

/**
 * Replaces every `{{secret:NAME}}` with the opened value. Throws CONFIG_INVALID naming the missing
 * secret and the fix, so the server's status says what to do.
 */
export function resolveSecretPlaceholders(
  values: Record<string, string>,
  secrets: ReadonlyMap<string, string>,
  server: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = value.replace(PLACEHOLDER, (_, name: string) => {
      const sealed = secrets.get(name);
      if (sealed === undefined) {
        throw new AppError(
          "CONFIG_INVALID",
          `${key} names the secret "${name}", which is not set: set it on the server's page or with \`npm run toolstore -- mcp-servers secret ${server} ${name}=<value>\``,
        );
      }
      return openSecret(sealed);
    });
  }
  return out;
}
