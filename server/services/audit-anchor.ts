/**
 * Where this server's audit checkpoints live and which keys sign them: the file beside the secret
 * key (server/services/secret-box.ts), signed under a key derived from the current secret key and
 * checked against every key held (a rotation keeps the previous one). No key, no checkpoints.
 */
import type { Db } from "../db";
import { loadEnv } from "../env";
import {
  type AuditCheckpointWriter,
  checkpointFilePath,
  createCheckpointWriter,
} from "../infra/audit-checkpoint";
import type { ChainAnchor } from "../infra/audit-verify";
import { logger } from "../infra/log";
import { loadSecretKeys } from "./secret-box";
import { secretBoxConfigFor } from "./stored-secrets";

/** A checkpoint at least every this many entries, besides the time limit. */
const CHECKPOINT_EVERY_ENTRIES = 100;

/** The checkpoint file and the keys that may sign it, or null when this server has no secret key. */
export function auditAnchorFor(db: Db): ChainAnchor | null {
  const config = secretBoxConfigFor(db);
  const loaded = loadSecretKeys({ ...config, create: false });
  return loaded ? { file: checkpointFilePath(config.keyFile), secretKeys: loaded.keys } : null;
}

const writers = new WeakMap<Db, AuditCheckpointWriter | null>();

/**
 * The process's checkpoint writer for a database. `everyEntries: 1` for a short-lived process
 * (a CLI command), which would otherwise exit before the timer.
 */
export function auditCheckpointsFor(
  db: Db,
  options: { everyEntries?: number } = {},
): AuditCheckpointWriter | null {
  if (writers.has(db)) return writers.get(db) ?? null;
  const anchor = auditAnchorFor(db);
  const secretKey = anchor?.secretKeys[0];
  const writer =
    anchor && secretKey
      ? createCheckpointWriter({
          file: anchor.file,
          secretKey,
          everyEntries: options.everyEntries ?? CHECKPOINT_EVERY_ENTRIES,
          everyMs: Math.round(loadEnv().TOOLSTORE_AUDIT_CHECKPOINT_SECONDS * 1000),
          log: (line) => logger("audit").error(line),
        })
      : null;
  // The write is synchronous, so it still happens on the way out (Next.js exits on SIGTERM).
  if (writer) process.once("exit", () => writer.flush());
  writers.set(db, writer);
  return writer;
}
