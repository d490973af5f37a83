/**
 * Toolset secrets at rest, over secret-box.ts: the process's box for a database (key from
 * TOOLSTORE_SECRET_KEY or the key file beside the database), sealing on write, opening at call
 * time, the one-time migration of rows stored in plain text before encryption existed, and key
 * rotation. A missing key never leads to a new key while sealed rows exist: the start stops with
 * a message that says which key to restore, and no row is touched.
 */
import fs from "node:fs";
import { AppError } from "../core/errors";
import { type Db, dbTarget, targetOfDb } from "../db";
import { loadEnv } from "../env";
import { registerLogSecrets } from "../infra/log";
import {
  createSecretBox,
  isSealed,
  keyFilePath,
  keyIdOf,
  loadSecretKeys,
  newSecretKeyText,
  parseSecretKey,
  SEALED_PREFIX,
  type SecretBox,
  writeKeyFile,
} from "./secret-box";

export function toolsetSecretContext(toolsetId: string, name: string): string {
  return `toolset-env:${toolsetId}:${name}`;
}

export function mcpSecretContext(serverId: string, name: string): string {
  return `mcp-server:${serverId}:${name}`;
}

export function channelSecretContext(kind: string, target: string): string {
  return `notification-channel:${kind}:${target}`;
}

/** The Setting row of the VAPID key pair Web Push signs with, and its private key's context. */
export const VAPID_SETTING = "notifications.vapid";
export const VAPID_CONTEXT = "notifications:vapid";

/** How MCP server secrets were stored before encryption at rest; sealed at the next start. */
export const MCP_PLAIN_PREFIX = "plain:v1:";

export interface SecretBoxConfig {
  envKey?: string;
  keyFile: string;
}

export function secretBoxConfigFor(db: Db): SecretBoxConfig {
  return { envKey: loadEnv().TOOLSTORE_SECRET_KEY, keyFile: keyFilePath(targetOfDb(db) ?? dbTarget()) };
}

const boxes = new WeakMap<Db, Promise<SecretBox>>();

/** The box for this database, prepared once per process (plaintext rows sealed on first use). */
export function secretBoxFor(db: Db, config?: SecretBoxConfig): Promise<SecretBox> {
  let box = boxes.get(db);
  if (!box) {
    box = prepareSecretBox(db, config ?? secretBoxConfigFor(db));
    box.catch(() => boxes.delete(db));
    boxes.set(db, box);
  }
  return box;
}

/** Sealed secrets in the database: toolset variables, MCP server secrets, upstream OAuth tokens, notification secrets. */
export async function sealedCount(db: Db): Promise<number> {
  const [toolsets, mcp, oauth, channels, vapid] = await Promise.all([
    db.toolsetEnvVar.count({ where: { value: { startsWith: SEALED_PREFIX } } }),
    db.mcpServerSecret.count({ where: { sealed: { startsWith: SEALED_PREFIX } } }),
    db.mcpServerOAuth.count({ where: { accessToken: { startsWith: SEALED_PREFIX } } }),
    // Notification channel secrets and the VAPID private key (server/services/notifications).
    db.notificationChannel.count({ where: { sealed: { startsWith: SEALED_PREFIX } } }),
    db.setting.count({ where: { key: "notifications.vapid" } }),
  ]);
  return toolsets + mcp + oauth + channels + vapid;
}

/** The sealed fields of upstream OAuth rows (upstream-oauth.ts), each with its context. */
const OAUTH_FIELDS = ["accessToken", "refreshToken", "pendingVerifier"] as const;
const OAUTH_PARTS: Record<(typeof OAUTH_FIELDS)[number], string> = {
  accessToken: "access",
  refreshToken: "refresh",
  pendingVerifier: "verifier",
};

async function resealOAuthRows(db: Db, box: SecretBox) {
  const rows = await db.mcpServerOAuth.findMany();
  return rows.map((row) => {
    const data: Record<string, string | null> = {};
    for (const field of OAUTH_FIELDS) {
      const value = row[field];
      const context = mcpSecretContext(row.serverId, `oauth:${OAUTH_PARTS[field]}`);
      data[field] = value && isSealed(value) ? box.seal(box.open(value, context), context) : value;
    }
    const info = JSON.parse(row.clientInfo ?? "{}") as { sealedSecret?: string };
    if (info.sealedSecret) {
      const context = mcpSecretContext(row.serverId, "oauth:client_secret");
      info.sealedSecret = box.seal(box.open(info.sealedSecret, context), context);
      data.clientInfo = JSON.stringify(info);
    }
    return db.mcpServerOAuth.update({ where: { serverId: row.serverId }, data, select: { serverId: true } });
  });
}

/** Notification channel secrets and the VAPID private key (server/services/notifications). */
async function resealNotificationRows(db: Db, box: SecretBox) {
  const channels = await db.notificationChannel.findMany({
    where: { sealed: { startsWith: SEALED_PREFIX } },
    select: { id: true, kind: true, target: true, sealed: true },
  });
  const channelUpdates = channels.map((row) => {
    const context = channelSecretContext(row.kind, row.target);
    return db.notificationChannel.update({
      where: { id: row.id },
      data: { sealed: box.seal(box.open(row.sealed as string, context), context) },
      select: { id: true },
    });
  });
  const vapid = await db.setting.findUnique({ where: { key: VAPID_SETTING } });
  if (!vapid) return channelUpdates;
  const stored = JSON.parse(vapid.value) as { publicKey: string; privateKey: string };
  const privateKey = box.seal(box.open(stored.privateKey, VAPID_CONTEXT), VAPID_CONTEXT);
  const vapidUpdate = db.setting.update({
    where: { key: VAPID_SETTING },
    data: { value: JSON.stringify({ ...stored, privateKey }) },
    select: { key: true },
  });
  return [...channelUpdates, vapidUpdate];
}

export async function prepareSecretBox(db: Db, config: SecretBoxConfig): Promise<SecretBox> {
  let loaded = loadSecretKeys({ ...config, create: false });
  if (!loaded) {
    const sealed = await sealedCount(db);
    if (sealed > 0) {
      throw new AppError(
        "CONFIG_INVALID",
        `${sealed} stored secret(s) are encrypted but no key was found: restore ${config.keyFile} or set TOOLSTORE_SECRET_KEY to the key they were sealed with; nothing was changed`,
      );
    }
    loaded = loadSecretKeys({ ...config, create: true });
  }
  const box = createSecretBox(loaded?.keys ?? []);
  await sealPlaintextSecrets(db, box);
  return box;
}

/** Rows stored before encryption: sealed in place (a row changed meanwhile is left to its writer). */
export async function sealPlaintextSecrets(db: Db, box: SecretBox): Promise<number> {
  const rows = await db.toolsetEnvVar.findMany({
    where: { secret: true, NOT: { value: { startsWith: SEALED_PREFIX } } },
    select: { id: true, toolsetId: true, name: true, value: true },
  });
  let sealed = 0;
  for (const row of rows) {
    const { count } = await db.toolsetEnvVar.updateMany({
      where: { id: row.id, value: row.value },
      data: { value: box.seal(row.value, toolsetSecretContext(row.toolsetId, row.name)) },
    });
    sealed += count;
  }
  const mcp = await db.mcpServerSecret.findMany({
    where: { sealed: { startsWith: MCP_PLAIN_PREFIX } },
    select: { id: true, serverId: true, name: true, sealed: true },
  });
  for (const row of mcp) {
    const plain = row.sealed.slice(MCP_PLAIN_PREFIX.length);
    const { count } = await db.mcpServerSecret.updateMany({
      where: { id: row.id, sealed: row.sealed },
      data: { sealed: box.seal(plain, mcpSecretContext(row.serverId, row.name)) },
    });
    sealed += count;
  }
  return sealed;
}

/** The stored form of a variable's value. */
export async function storedEnvValue(
  db: Db,
  row: { toolsetId: string; name: string; value: string; secret: boolean },
): Promise<string> {
  if (!row.secret) return row.value;
  return (await secretBoxFor(db)).seal(row.value, toolsetSecretContext(row.toolsetId, row.name));
}

/** The usable value of a stored variable (secrets opened). */
export async function openEnvValue(
  db: Db,
  row: { toolsetId: string; name: string; value: string; secret: boolean },
): Promise<string> {
  if (!row.secret && !isSealed(row.value)) return row.value;
  const box = await secretBoxFor(db);
  const value = isSealed(row.value)
    ? box.open(row.value, toolsetSecretContext(row.toolsetId, row.name))
    : row.value;
  // A value opened for use is masked in every log line from now on.
  registerLogSecrets([value]);
  return value;
}

export interface RotationResult {
  resealed: number;
  oldKeyId: string;
  newKeyId: string;
  /** When the key comes from TOOLSTORE_SECRET_KEY: the new key, to be set there. */
  newEnvKey?: string;
  keyFile?: string;
}

/**
 * Re-seal every secret with a new key. With a key file: the new key is written to
 * `<file>.next` first, the rows are re-sealed in one transaction, then the file is replaced and the
 * old key kept as `<file>.previous`. With TOOLSTORE_SECRET_KEY: the new key is printed, and the
 * old one stays readable from `<file>.previous` until TOOLSTORE_SECRET_KEY is changed.
 */
export async function rotateSecretKey(
  db: Db,
  config: SecretBoxConfig,
  newKeyText: string = newSecretKeyText(),
): Promise<RotationResult> {
  const next = parseSecretKey(newKeyText);
  if (!next) throw new AppError("BAD_INPUT", "the new key must be 32 bytes in base64 or hex");
  const old = await prepareSecretBox(db, config);
  const loaded = loadSecretKeys({ ...config, create: false });
  if (!loaded) throw new AppError("CONFIG_INVALID", "no current key to rotate from");
  const [current] = loaded.keys;
  writeKeyFile(`${config.keyFile}.next`, newKeyText);
  const box = createSecretBox([next, ...loaded.keys]);
  const rows = await db.toolsetEnvVar.findMany({
    where: { value: { startsWith: SEALED_PREFIX } },
    select: { id: true, toolsetId: true, name: true, value: true },
  });
  const mcpRows = await db.mcpServerSecret.findMany({
    where: { sealed: { startsWith: SEALED_PREFIX } },
    select: { id: true, serverId: true, name: true, sealed: true },
  });
  const oauthUpdates = await resealOAuthRows(db, box);
  const notificationUpdates = await resealNotificationRows(db, box);
  await db.$transaction([
    ...oauthUpdates,
    ...notificationUpdates,
    ...rows.map((row) => {
      const context = toolsetSecretContext(row.toolsetId, row.name);
      return db.toolsetEnvVar.update({
        where: { id: row.id },
        data: { value: box.seal(box.open(row.value, context), context) },
        select: { id: true },
      });
    }),
    ...mcpRows.map((row) => {
      const context = mcpSecretContext(row.serverId, row.name);
      return db.mcpServerSecret.update({
        where: { id: row.id },
        data: { sealed: box.seal(box.open(row.sealed, context), context) },
        select: { id: true },
      });
    }),
  ]);
  if (current) writeKeyFile(`${config.keyFile}.previous`, current.toString("base64"));
  const resealed = rows.length + mcpRows.length + oauthUpdates.length + notificationUpdates.length;
  if (loaded.source === "env") {
    boxes.delete(db);
    return {
      resealed,
      oldKeyId: old.keyId,
      newKeyId: keyIdOf(next),
      newEnvKey: newKeyText,
      keyFile: `${config.keyFile}.next`,
    };
  }
  fs.renameSync(`${config.keyFile}.next`, config.keyFile);
  boxes.delete(db);
  return {
    resealed,
    oldKeyId: old.keyId,
    newKeyId: keyIdOf(next),
    keyFile: config.keyFile,
  };
}
