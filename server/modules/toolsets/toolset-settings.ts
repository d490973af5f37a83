/**
 * Console-side settings of a toolset: environment variables and secrets, timeout and allowed
 * hosts. Secrets are write-only here: they are stored, injected into the sandbox at call time
 * (./toolset-modules.ts) and redacted from results and logs, but never returned.
 */
import type { CapabilityRegistry } from "../../core/capabilities/registry";
import { AppError } from "../../core/errors";
import { isValidEnvName, isValidHostPattern, TIMEOUT_MAX_MS, TIMEOUT_MIN_MS } from "../../core/toolsets";
import type { Db } from "../../db";
import { storedEnvValue } from "../../services/stored-secrets";
import { declarationsOf, parseHosts, storedLanguage } from "./rows";
import { type EnvVarView, envViews } from "./toolset-queries";

/** The engine does not redact shorter values (they would mangle ordinary text), so refuse them. */
export const MIN_SECRET_LENGTH = 4;
export const MAX_ENV_VALUE_LENGTH = 8192;

/**
 * The running engine's registry: a toolset's settings are read once per module list, so a write
 * refreshes the list at once on this instance (others within the registry's cache time).
 */
type RegistryCache = Pick<CapabilityRegistry, "invalidate">;

async function toolsetRow(db: Db, name: string) {
  const row = await db.toolset.findUnique({
    where: { name },
    select: { id: true, currentVersionId: true, timeoutMs: true, allowedHosts: true },
  });
  if (!row) throw new AppError("NOT_FOUND", `no toolset named "${name}"`);
  return row;
}

async function declaredEnv(db: Db, currentVersionId: string | null) {
  if (!currentVersionId) return { hosts: [], env: [], description: "" };
  const v = await db.toolsetVersion.findUnique({
    where: { id: currentVersionId },
    select: { source: true, language: true },
  });
  return v ? declarationsOf(v.source, storedLanguage(v.language)) : { hosts: [], env: [], description: "" };
}

export async function listToolsetEnv(db: Db, toolset: string): Promise<EnvVarView[]> {
  const row = await toolsetRow(db, toolset);
  const rows = await db.toolsetEnvVar.findMany({
    where: { toolsetId: row.id },
    orderBy: { name: "asc" },
    select: { name: true, value: true, secret: true, updatedAt: true },
  });
  return envViews(await declaredEnv(db, row.currentVersionId), rows);
}

export interface SetEnvInput {
  toolset: string;
  name: string;
  value: string;
  /** Default: as declared (`@secret`), else as already stored, else false. */
  secret?: boolean;
}

/** Sets a variable; returns the masked view (a secret's value is not echoed). */
export async function setToolsetEnvVar(
  db: Db,
  input: SetEnvInput,
  registry?: RegistryCache,
): Promise<EnvVarView> {
  if (!isValidEnvName(input.name)) {
    throw new AppError(
      "BAD_INPUT",
      `"${input.name}" is not a variable name; use upper case, digits and _ (e.g. API_KEY)`,
    );
  }
  if (input.value.length > MAX_ENV_VALUE_LENGTH) {
    throw new AppError(
      "BAD_INPUT",
      `the value of ${input.name} is longer than ${MAX_ENV_VALUE_LENGTH} characters`,
    );
  }
  const row = await toolsetRow(db, input.toolset);
  const declarations = await declaredEnv(db, row.currentVersionId);
  const existing = await db.toolsetEnvVar.findUnique({
    where: { toolsetId_name: { toolsetId: row.id, name: input.name } },
    select: { secret: true },
  });
  const secret =
    input.secret ?? declarations.env.find((e) => e.name === input.name)?.secret ?? existing?.secret ?? false;
  if (secret && input.value.length < MIN_SECRET_LENGTH) {
    throw new AppError(
      "BAD_INPUT",
      `a secret must be at least ${MIN_SECRET_LENGTH} characters; shorter values cannot be masked reliably`,
    );
  }
  // A secret is stored sealed (services/stored-secrets.ts); the view below never shows it.
  const value = await storedEnvValue(db, { toolsetId: row.id, name: input.name, value: input.value, secret });
  const saved = await db.toolsetEnvVar.upsert({
    where: { toolsetId_name: { toolsetId: row.id, name: input.name } },
    create: { toolsetId: row.id, name: input.name, value, secret },
    update: { value, secret },
    select: { name: true, value: true, secret: true, updatedAt: true },
  });
  registry?.invalidate();
  return envViews(declarations, [saved]).find((v) => v.name === input.name) as EnvVarView;
}

export async function unsetToolsetEnvVar(
  db: Db,
  input: { toolset: string; name: string },
  registry?: RegistryCache,
): Promise<void> {
  const row = await toolsetRow(db, input.toolset);
  const { count } = await db.toolsetEnvVar.deleteMany({ where: { toolsetId: row.id, name: input.name } });
  if (count === 0) throw new AppError("NOT_FOUND", `${input.toolset} has no variable ${input.name}`);
  registry?.invalidate();
}

export interface ToolsetSettings {
  timeoutMs: number;
  allowedHosts: string[];
}

export async function updateToolsetSettings(
  db: Db,
  toolset: string,
  changes: { timeoutMs?: number; allowedHosts?: string[] },
  registry?: RegistryCache,
): Promise<ToolsetSettings> {
  const row = await toolsetRow(db, toolset);
  const data: { timeoutMs?: number; allowedHosts?: string } = {};
  if (changes.timeoutMs !== undefined) {
    if (
      !Number.isInteger(changes.timeoutMs) ||
      changes.timeoutMs < TIMEOUT_MIN_MS ||
      changes.timeoutMs > TIMEOUT_MAX_MS
    ) {
      throw new AppError(
        "BAD_INPUT",
        `timeout must be whole milliseconds from ${TIMEOUT_MIN_MS} to ${TIMEOUT_MAX_MS}`,
      );
    }
    data.timeoutMs = changes.timeoutMs;
  }
  if (changes.allowedHosts !== undefined) {
    const hosts = [...new Set(changes.allowedHosts.map((h) => h.trim().toLowerCase()).filter(Boolean))];
    const bad = hosts.filter((h) => h !== "*" && !isValidHostPattern(h));
    if (bad.length > 0) {
      throw new AppError(
        "BAD_INPUT",
        `not a host name: ${bad.join(", ")} (write e.g. api.example.com, *.example.com, localhost:8080, or * for any host)`,
      );
    }
    data.allowedHosts = JSON.stringify(hosts);
  }
  const saved = await db.toolset.update({
    where: { id: row.id },
    data,
    select: { timeoutMs: true, allowedHosts: true },
  });
  registry?.invalidate();
  return { timeoutMs: saved.timeoutMs, allowedHosts: parseHosts(saved.allowedHosts) };
}
