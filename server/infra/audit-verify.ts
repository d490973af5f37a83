/**
 * `audit verify`: walks the hash chain in order and names the first entry that does not hold (an
 * edited, inserted or deleted row); then, given the checkpoint file and the secret keys, compares
 * the table with the last signed checkpoint, which is what shows the newest entries deleted.
 */
import type { Db } from "../db";
import {
  type AuditCheckpoint,
  checkpointProblem,
  checkpointSigned,
  readCheckpoint,
} from "./audit-checkpoint";
import { type AuditEntryRow, auditHash, GENESIS_HASH } from "./audit-log";

type BrokenChain = {
  ok: false;
  entries: number;
  brokenSeq: number;
  brokenId: string | null;
  problem: string;
};

export type AuditVerdict =
  | { ok: true; entries: number; headHash: string; checkpoint: CheckpointState }
  | BrokenChain;

/** What verify knew of the checkpoint: the one it checked, none in the file, or not asked. */
export type CheckpointState = AuditCheckpoint | "none" | "not checked";

export interface ChainAnchor {
  /** The checkpoint file (audit-checkpoint.ts). */
  file: string;
  /** The secret keys that may have signed it (current first). */
  secretKeys: readonly Buffer[];
}

/**
 * Walks the chain in order and names the first entry that does not hold; then, with an anchor,
 * compares the table with the last checkpoint, which shows the newest entries deleted.
 */
export async function verifyAuditChain(db: Db, pageSize = 1000, anchor?: ChainAnchor): Promise<AuditVerdict> {
  const chain = await walkChain(db, pageSize);
  if (!chain.ok || !anchor) return chain.ok ? { ...chain, checkpoint: "not checked" } : chain;
  const cp = readCheckpoint(anchor.file);
  if (cp === null) return { ...chain, checkpoint: "none" };
  const broken = (brokenSeq: number, problem: string): AuditVerdict => ({
    ok: false,
    entries: chain.entries,
    brokenSeq,
    brokenId: null,
    problem,
  });
  if (cp === "unreadable" || !checkpointSigned(cp, anchor.secretKeys)) {
    return broken(0, `the checkpoint ${anchor.file} is not one this server's secret key signed`);
  }
  const row = await db.auditEntry.findUnique({ where: { seq: cp.seq }, select: { hash: true } });
  const tail = chain.entries > 0 ? { seq: chain.entries, hash: chain.headHash } : null;
  const problem = checkpointProblem(cp, tail, row?.hash ?? null);
  if (problem) return broken(Math.min(chain.entries + 1, cp.seq), problem);
  return { ...chain, checkpoint: cp };
}

async function walkChain(
  db: Db,
  pageSize: number,
): Promise<{ ok: true; entries: number; headHash: string } | BrokenChain> {
  let expectedSeq = 1;
  let prevHash = GENESIS_HASH;
  let count = 0;
  for (;;) {
    const page: AuditEntryRow[] = await db.auditEntry.findMany({
      where: { seq: { gte: expectedSeq } },
      orderBy: { seq: "asc" },
      take: pageSize,
    });
    if (page.length === 0) return { ok: true, entries: count, headHash: prevHash };
    for (const row of page) {
      const problem =
        row.seq !== expectedSeq
          ? `entry #${expectedSeq} is missing (deleted): #${expectedSeq - 1} is followed by #${row.seq}`
          : row.prevHash !== prevHash
            ? `entry #${row.seq} does not follow #${row.seq - 1}: its previous hash does not match`
            : auditHash(row) !== row.hash
              ? `entry #${row.seq} was changed after it was written: its hash does not match its content`
              : null;
      if (problem) {
        const missing = row.seq !== expectedSeq;
        return {
          ok: false,
          entries: count,
          brokenSeq: missing ? expectedSeq : row.seq,
          brokenId: missing ? null : row.id,
          problem,
        };
      }
      prevHash = row.hash;
      expectedSeq += 1;
      count += 1;
    }
  }
}
