/**
 * The audit log: an append-only, hash-chained record of every gate decision and every admin
 * action (who, what, when, before and after). Each entry's hash covers its canonical JSON and the
 * previous entry's hash, so an edited, inserted or deleted row breaks the chain at that point;
 * `verifyAuditChain` names the first broken entry.
 *
 * Appends are queued per process and written in groups: the group's hashes are chained on the head
 * (the last entry this process wrote, or read from the table), and the group is inserted with
 * consecutive `seq` values. `seq` is unique, so when another instance appended in between, the
 * insert fails as a whole and is retried on the re-read head: the chain stays linear across
 * instances without holding a lock.
 *
 * After each group the head is handed to the checkpoint writer, if one is attached
 * (audit-checkpoint.ts): the signed head outside the database is what shows a truncated tail.
 */
import { createHash } from "node:crypto";
import os from "node:os";
import type { Db } from "../db";
import { type AuditCheckpoint, type AuditCheckpointWriter, readCheckpoint } from "./audit-checkpoint";
import { type AuditRow, insertAuditEntries } from "./hot-sql";
import type { WriteBatcher } from "./write-batcher";

export const GENESIS_HASH = "0".repeat(64);

export type AuditActorType = "user" | "api_key" | "system" | "cli";

export interface AuditActor {
  type: AuditActorType;
  id?: string | null;
  name?: string;
}

/** Who acts from the command line: the operating-system user running it. */
export function cliActor(): AuditActor {
  let name = "cli";
  try {
    name = os.userInfo().username || name;
  } catch {
    // no passwd entry (some containers)
  }
  return { type: "cli", id: null, name };
}

export interface AuditInput {
  actor: AuditActor;
  action: string;
  target?: string;
  before?: unknown;
  after?: unknown;
  detail?: Record<string, unknown>;
  at?: Date;
}

export interface AuditEntryRow {
  id: string;
  seq: number;
  at: Date;
  actorType: string;
  actorId: string | null;
  actorName: string;
  action: string;
  target: string;
  before: string | null;
  after: string | null;
  detail: string;
  prevHash: string;
  hash: string;
}

type Hashed = Omit<AuditEntryRow, "id" | "hash">;

/** Stable JSON: object keys sorted, so a hash does not depend on key order. */
export function canonicalJson(input: unknown): string {
  // Dates and the like serialize as JSON.stringify would (toJSON), then keys are sorted.
  const value =
    input !== null &&
    typeof input === "object" &&
    typeof (input as { toJSON?: unknown }).toJSON === "function"
      ? (input as { toJSON(): unknown }).toJSON()
      : input;
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export function auditHash(entry: Hashed): string {
  return createHash("sha256")
    .update(
      canonicalJson({
        seq: entry.seq,
        at: entry.at.toISOString(),
        actorType: entry.actorType,
        actorId: entry.actorId,
        actorName: entry.actorName,
        action: entry.action,
        target: entry.target,
        before: entry.before,
        after: entry.after,
        detail: entry.detail,
        prevHash: entry.prevHash,
      }),
    )
    .digest("hex");
}

function encode(value: unknown): string | null {
  return value === undefined || value === null ? null : canonicalJson(value);
}

export interface AuditLog {
  /**
   * Resolves once the entry is in the chain. `lazy`: the entry may wait for the batcher's next
   * commit (a read call's decision), instead of committing at once.
   */
  append(input: AuditInput, options?: { lazy?: boolean }): Promise<void>;
}

const MAX_GROUP = 200;
const MAX_RETRIES = 20;

export interface AuditLogOptions {
  /**
   * Write through the engine's batcher, so an entry shares the commit (one fsync on SQLite) of
   * the decision row written in the same tick.
   */
  batch?: WriteBatcher;
  /** Where the head goes after each commit (the signed checkpoint outside the database). */
  checkpoints?: AuditCheckpointWriter;
}

export function createAuditLog(
  db: Db,
  options: AuditLogOptions = {},
): AuditLog & {
  attachBatch(batch: WriteBatcher): void;
  attachCheckpoints(writer: AuditCheckpointWriter): void;
} {
  let queue: { input: AuditInput; lazy: boolean; resolve(): void; reject(error: unknown): void }[] = [];
  let batch = options.batch;
  let checkpoints = options.checkpoints;
  let running = false;
  /** The last entry this process wrote; re-read from the table when another instance got ahead. */
  let head: { seq: number; hash: string } | null | undefined;

  /**
   * The group whose insert is queued in the batcher and not yet built: entries appended
   * meanwhile join it (one insert, one commit), instead of waiting for it behind the queue.
   */
  let open: typeof queue | undefined;

  /** The group's rows, chained on the head (known when this runs: groups are written one by one). */
  function chain(group: typeof queue): { rows: AuditRow[]; last: { seq: number; hash: string } } {
    let seq = head?.seq ?? 0;
    let prevHash = head?.hash ?? GENESIS_HASH;
    const rows = group.map(({ input }) => {
      seq += 1;
      const entry: Hashed = {
        seq,
        at: input.at ?? new Date(),
        actorType: input.actor.type,
        actorId: input.actor.id ?? null,
        actorName: (input.actor.name ?? "").slice(0, 200),
        action: input.action,
        target: (input.target ?? "").slice(0, 500),
        before: encode(input.before),
        after: encode(input.after),
        detail: canonicalJson(input.detail ?? {}),
        prevHash,
      };
      const hash = auditHash(entry);
      prevHash = hash;
      return { ...entry, hash };
    });
    return { rows, last: { seq, hash: prevHash } };
  }

  async function writeGroup(group: typeof queue): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (head === undefined) {
        head = await db.auditEntry.findFirst({ orderBy: { seq: "desc" }, select: { seq: true, hash: true } });
      }
      let last = { seq: 0, hash: GENESIS_HASH };
      // Built when the batch runs, so entries appended until then join the group.
      const write = () => {
        if (open === group) open = undefined;
        const chained = chain(group);
        last = chained.last;
        return insertAuditEntries(db, chained.rows);
      };
      try {
        if (batch) {
          const lazy = group.every((entry) => entry.lazy);
          if (attempt === 0) open = group;
          await (lazy ? batch.defer(write) : batch.write(write));
        } else {
          await write();
        }
        head = last;
        checkpoints?.noteHead(last);
        return;
      } catch (error) {
        if (open === group) open = undefined;
        head = undefined;
        // Another instance took one of these seq numbers: chain on its entries instead.
        if (attempt >= MAX_RETRIES || !isUniqueViolation(error)) throw error;
        await new Promise((r) => setTimeout(r, Math.random() * 20 * (attempt + 1)));
      }
    }
  }

  async function drain(): Promise<void> {
    if (running) return;
    running = true;
    try {
      while (queue.length > 0) {
        const group = queue.slice(0, MAX_GROUP);
        queue = queue.slice(group.length);
        try {
          await writeGroup(group);
          for (const p of group) p.resolve();
        } catch (error) {
          for (const p of group) p.reject(error);
        }
      }
    } finally {
      running = false;
    }
  }

  return {
    append(input, appendOptions) {
      return new Promise<void>((resolve, reject) => {
        const entry = { input, lazy: appendOptions?.lazy === true, resolve, reject };
        if (open && open.length < MAX_GROUP) {
          open.push(entry);
          if (!entry.lazy) void batch?.flush();
          return;
        }
        queue.push(entry);
        setImmediate(() => void drain());
      });
    },
    attachBatch(next) {
      batch = next;
    },
    attachCheckpoints(writer) {
      checkpoints = writer;
      if (head) writer.noteHead(head);
    },
  };
}

const logs = new WeakMap<Db, ReturnType<typeof createAuditLog>>();

/** The process's audit log for a database: one append queue per client. */
export function auditLogFor(db: Db, options: AuditLogOptions = {}): AuditLog {
  let log = logs.get(db);
  if (!log) {
    log = createAuditLog(db, options);
    logs.set(db, log);
  } else if (options.batch) {
    // An admin action may have opened the log before the engine started: its writes join the
    // engine's commits from now on.
    log.attachBatch(options.batch);
  }
  if (options.checkpoints) log.attachCheckpoints(options.checkpoints);
  return log;
}

function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === "P2002" || /unique constraint/i.test(e?.message ?? "");
}

export interface AuditFilter {
  action?: string;
  actor?: string;
  target?: string;
  from?: Date;
  to?: Date;
}

function whereOf(filter: AuditFilter) {
  return {
    ...(filter.action ? { action: { startsWith: filter.action } } : {}),
    ...(filter.actor ? { actorName: { contains: filter.actor } } : {}),
    ...(filter.target ? { target: { contains: filter.target } } : {}),
    ...(filter.from || filter.to
      ? { at: { ...(filter.from ? { gte: filter.from } : {}), ...(filter.to ? { lte: filter.to } : {}) } }
      : {}),
  };
}

export async function listAuditEntries(db: Db, filter: AuditFilter & { beforeSeq?: number; limit?: number }) {
  const rows = await db.auditEntry.findMany({
    where: { ...whereOf(filter), ...(filter.beforeSeq ? { seq: { lt: filter.beforeSeq } } : {}) },
    orderBy: { seq: "desc" },
    take: Math.min(filter.limit ?? 100, 500),
    select: {
      id: true,
      seq: true,
      at: true,
      actorType: true,
      actorId: true,
      actorName: true,
      action: true,
      target: true,
      before: true,
      after: true,
      detail: true,
      hash: true,
    },
  });
  return rows;
}

/** The last line of an export: the whole chain's head when it was read, and the last checkpoint. */
export interface AuditExportHead {
  type: "audit-head";
  seq: number;
  hash: string;
  checkpoint: AuditCheckpoint | null;
}

/**
 * The matching entries, oldest first, as JSON lines (one entry per line, hashes included), then
 * one `audit-head` line: the chain's newest seq and hash, and the signed checkpoint if there is one.
 */
export async function* exportAuditJsonLines(
  db: Db,
  filter: AuditFilter = {},
  checkpointFile?: string,
): AsyncGenerator<string> {
  // Read first, so every entry the head covers is in the table while the pages are read.
  const newest = await db.auditEntry.findFirst({
    orderBy: { seq: "desc" },
    select: { seq: true, hash: true },
  });
  const checkpoint = checkpointFile ? readCheckpoint(checkpointFile) : null;
  let afterSeq = 0;
  for (;;) {
    const page: AuditEntryRow[] = await db.auditEntry.findMany({
      where: { ...whereOf(filter), seq: { gt: afterSeq, lte: newest?.seq ?? 0 } },
      orderBy: { seq: "asc" },
      take: 1000,
    });
    if (page.length === 0) break;
    for (const row of page) yield `${JSON.stringify({ ...row, at: row.at.toISOString() })}\n`;
    afterSeq = page[page.length - 1]?.seq ?? afterSeq;
  }
  const head: AuditExportHead = {
    type: "audit-head",
    seq: newest?.seq ?? 0,
    hash: newest?.hash ?? GENESIS_HASH,
    checkpoint: checkpoint === "unreadable" ? null : checkpoint,
  };
  yield `${JSON.stringify(head)}\n`;
}

export interface AuditQuery extends AuditFilter {
  beforeSeq?: number;
}

/** Filters from a page's or an export's query string; anything unparsable is left out. */
export function parseAuditQuery(params: Record<string, string | string[] | undefined>): AuditQuery {
  const one = (k: string) => {
    const v = params[k];
    const s = (Array.isArray(v) ? v[0] : v)?.trim();
    return s ? s.slice(0, 200) : undefined;
  };
  const date = (k: string, endOfDay = false) => {
    const v = one(k);
    if (!v) return undefined;
    const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T${endOfDay ? "23:59:59.999" : "00:00:00"}Z` : v);
    return Number.isNaN(d.getTime()) ? undefined : d;
  };
  const before = Number(one("before"));
  return {
    action: one("action"),
    actor: one("actor"),
    target: one("target"),
    from: date("from"),
    to: date("to", true),
    beforeSeq: Number.isInteger(before) && before > 0 ? before : undefined,
  };
}
