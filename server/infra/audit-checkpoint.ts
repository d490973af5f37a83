/**
 * The audit log's anchor outside the database: the chain head (seq and hash) written now and then
 * to a file beside the secret key, signed with an HMAC under a key derived from the secret key. The
 * hash chain alone shows an edited or deleted row in the middle, not the newest rows deleted; with
 * a checkpoint, `audit verify` sees that rows up to its seq are missing or that its row changed.
 * Someone with write access to the database but not the key can neither forge nor lower it.
 *
 * Several processes may write one file: each write is a rename into place, and a process never
 * replaces a checkpoint of a higher seq (it re-reads after renaming and writes again if a lower one won).
 */
import { createHash, createHmac, hkdfSync, randomUUID, timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export const CHECKPOINT_FORMAT = "toolstore-audit-checkpoint/1";

export interface AuditCheckpoint {
  format: typeof CHECKPOINT_FORMAT;
  seq: number;
  hash: string;
  /** When the checkpoint was written (ISO). */
  at: string;
  /** Which secret key signed it (a rotation keeps the previous key, so older ones still check). */
  keyId: string;
  /** HMAC-SHA256 (hex) of `format:seq:hash:at` under the derived checkpoint key. */
  mac: string;
}

export interface ChainHead {
  seq: number;
  hash: string;
}

function checkpointKey(secretKey: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", secretKey, Buffer.alloc(0), "toolstore audit checkpoint v1", 32));
}

function keyIdOf(key: Buffer): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 16);
}

function macOf(key: Buffer, cp: Pick<AuditCheckpoint, "seq" | "hash" | "at">): string {
  return createHmac("sha256", key).update(`${CHECKPOINT_FORMAT}:${cp.seq}:${cp.hash}:${cp.at}`).digest("hex");
}

export function signCheckpoint(head: ChainHead, secretKey: Buffer, at: Date = new Date()): AuditCheckpoint {
  const key = checkpointKey(secretKey);
  const body = { seq: head.seq, hash: head.hash, at: at.toISOString() };
  return { format: CHECKPOINT_FORMAT, ...body, keyId: keyIdOf(key), mac: macOf(key, body) };
}

/** Whether one of the secret keys signed this checkpoint. */
export function checkpointSigned(cp: AuditCheckpoint, secretKeys: readonly Buffer[]): boolean {
  for (const secret of secretKeys) {
    const key = checkpointKey(secret);
    if (keyIdOf(key) !== cp.keyId) continue;
    const want = Buffer.from(macOf(key, cp), "hex");
    const got = Buffer.from(String(cp.mac), "hex");
    return got.length === want.length && timingSafeEqual(got, want);
  }
  return false;
}

export function checkpointFilePath(keyFile: string): string {
  return path.join(path.dirname(keyFile), "audit-checkpoint.json");
}

/** The checkpoint in the file, null when there is none; a file that is not one reads as "unreadable". */
export function readCheckpoint(file: string): AuditCheckpoint | null | "unreadable" {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    const cp = JSON.parse(text) as AuditCheckpoint;
    const ok = cp?.format === CHECKPOINT_FORMAT && Number.isInteger(cp.seq) && typeof cp.hash === "string";
    return ok ? cp : "unreadable";
  } catch {
    return "unreadable";
  }
}

/** Atomically writes `cp` unless the file already holds a checkpoint of a higher (or equal) seq. */
export function writeCheckpoint(file: string, cp: AuditCheckpoint): boolean {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = readCheckpoint(file);
    if (current && current !== "unreadable" && current.seq >= cp.seq) return attempt > 0;
    const tmp = `${file}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(cp)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, file);
  }
  return true;
}

export interface AuditCheckpointWriter {
  /** The chain head after this process committed entries up to it. */
  noteHead(head: ChainHead): void;
  /** Writes the newest head noted, if not written yet (shutdown, the end of a CLI command). */
  flush(): void;
  close(): void;
}

export interface CheckpointWriterOptions {
  file: string;
  /** The current secret key (the checkpoint key is derived from it). */
  secretKey: Buffer;
  /** Write once this many entries were appended since the last checkpoint. */
  everyEntries: number;
  /** And at most this long after an append (0: only by count and flush). */
  everyMs: number;
  log?: (line: string) => void;
}

export function createCheckpointWriter(options: CheckpointWriterOptions): AuditCheckpointWriter {
  let written = 0;
  let pending: ChainHead | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const head = pending;
    pending = null;
    if (!head || head.seq <= written) return;
    try {
      writeCheckpoint(options.file, signCheckpoint(head, options.secretKey));
      written = head.seq;
    } catch (error) {
      // The entries are committed; a checkpoint that cannot be written is retried with the next head.
      options.log?.(`audit checkpoint not written to ${options.file}: ${(error as Error).message}`);
    }
  };
  return {
    noteHead(head) {
      if (pending && pending.seq >= head.seq) return;
      pending = head;
      if (head.seq - written >= options.everyEntries) flush();
      else if (!timer && options.everyMs > 0) {
        timer = setTimeout(flush, options.everyMs);
        timer.unref?.();
      }
    },
    flush,
    close: flush,
  };
}

/**
 * What the table says against the checkpoint: null when it holds, else the problem. `tail` is the
 * table's newest entry (null when empty) and `hashAt` the stored hash of the checkpoint's seq.
 */
export function checkpointProblem(
  cp: AuditCheckpoint,
  tail: ChainHead | null,
  hashAt: string | null,
): string | null {
  const says = `the checkpoint of ${cp.at} says seq ${cp.seq}, hash ${cp.hash.slice(0, 16)}`;
  const newest = tail?.seq ?? 0;
  if (newest < cp.seq) return `the newest entries after seq ${newest} are missing: ${says}`;
  if (hashAt !== cp.hash) {
    return `entry #${cp.seq} is not the one that was checkpointed (hash ${(hashAt ?? "none").slice(0, 16)}): ${says}`;
  }
  return null;
}
