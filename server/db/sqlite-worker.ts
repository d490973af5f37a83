/**
 * SQLite for Prisma on a worker thread. better-sqlite3 is synchronous: on the server's own thread
 * every statement, every fsync of a durable commit and every wait for another process's write lock
 * (busy_timeout, seconds) stopped the event loop, so one locked or slow database file delayed
 * every request, static pages included. Here the real PrismaBetterSqlite3 adapter runs
 * on a worker thread, and this side is a Prisma driver adapter that forwards each call to it: only
 * the requests that wait for the database wait for it.
 *
 * Semantics are the adapter's own: one connection, transactions serialized by its mutex, the same
 * errors (DriverAdapterError payloads cross the thread unchanged). A worker that dies fails the
 * calls in flight with a clear error; the next call starts a new one.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";
import {
  DriverAdapterError,
  type IsolationLevel,
  type SqlDriverAdapter,
  type SqlDriverAdapterFactory,
  type SqlQuery,
  type SqlResultSet,
  type Transaction,
  type TransactionOptions,
} from "@prisma/driver-adapter-utils";
import { WORKER_YOUNG_GENERATION_MB } from "../core/sandbox/worker-reclaim";

export interface WorkerSqliteConfig {
  /** A file path or `file:` URL, as for PrismaBetterSqlite3. */
  url: string;
  /** busy_timeout in ms: how long a statement waits for another connection's write lock. */
  timeout: number;
  /** SQL run once on the new connection (pragmas). */
  setup?: string;
  /** Prepared statements the connection keeps by text (least recently used go); 0: none. */
  statementCache?: number;
  /** The longest a batch committed with `disk: false` waits for its WAL sync, in ms. */
  syncLagMs?: number;
}

/** How long a commit that did not wait for the disk may stay off it (a power cut loses at most this). */
export const DEFAULT_SYNC_LAG_MS = 100;

/** The engine's hot statements are a few dozen texts; Prisma's model queries add more. */
const DEFAULT_STATEMENT_CACHE = 200;

const ADAPTER_NAME = "@prisma/adapter-better-sqlite3";

/** Runs in the worker (CommonJS, eval'd: nothing to find on disk in a Next build). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { PrismaBetterSqlite3 } = require(workerData.adapterPath);
const txs = new Map();
let nextTx = 0;
const ready = (async () => {
  const adapter = await new PrismaBetterSqlite3({ url: workerData.url, timeout: workerData.timeout }).connect();
  if (workerData.setup) await adapter.executeScript(workerData.setup);
  reusePreparedStatements(adapter.client, workerData.statementCache);
  lazy.init(adapter.client);
  return adapter;
})();
// Batches that need not wait for the disk (\`disk: false\`): committed with synchronous = NORMAL,
// so the COMMIT writes the WAL without an fsync (visible at once, and kept through a crash of the
// process; a power cut or an OS crash may lose it). The connection's own setting (FULL) comes back
// right after, so every other commit still syncs, and that sync covers the earlier WAL frames too.
// Otherwise the WAL is synced \`lagMs\` after such a commit (later by a sync still in flight), so
// a power cut loses about that much. Only for a file database in WAL mode whose setting is above NORMAL.
const lazy = {
  base: 0,
  walPath: "",
  lagMs: workerData.syncLagMs,
  timer: undefined,
  restoring: false,
  commits: 0,
  walSyncs: 0,
  init(client) {
    const mode = String(client.pragma("journal_mode", { simple: true })).toLowerCase();
    const base = Number(client.pragma("synchronous", { simple: true }));
    if (mode !== "wal" || !(base > 1) || client.memory || !(this.lagMs >= 0)) return;
    this.base = base;
    this.walPath = client.name + "-wal";
  },
  /** Whether this batch may skip its fsync: asked for, and no transaction is open on the connection. */
  begin(client, disk) {
    if (disk !== false || !this.base || client.inTransaction) return false;
    client.exec("PRAGMA synchronous = NORMAL");
    return true;
  },
  /** Puts the connection's own setting back (never throws: a failure is retried before the next op). */
  end(client, committed) {
    this.restoring = true;
    this.restore(client);
    if (!committed) return;
    this.commits += 1;
    this.timer ??= setTimeout(() => this.syncWal(), this.lagMs);
  },
  restore(client) {
    if (!this.restoring) return;
    try {
      client.exec("PRAGMA synchronous = " + this.base);
      this.restoring = false;
    } catch {
      // A transaction is still open (a failed ROLLBACK): the next operation tries again.
    }
  },
  // On libuv's pool, not this thread: an fdatasync takes milliseconds, and commits queued behind
  // it on this thread waited for it (a quarter of the thread's busy time in a profile under load).
  syncing: false,
  syncWal() {
    this.timer = undefined;
    if (this.syncing) {
      // The sync in flight may have started before the latest commit: go again after it.
      this.timer = setTimeout(() => this.syncWal(), this.lagMs);
      return;
    }
    this.syncing = true;
    const fs = require("node:fs");
    fs.open(this.walPath, "r", (error, fd) => {
      // No WAL file (checkpointed and removed): nothing is waiting for the disk.
      if (error) return void (this.syncing = false);
      fs.fdatasync(fd, (failed) => {
        if (!failed) this.walSyncs += 1;
        fs.close(fd, () => void (this.syncing = false));
      });
    });
  },
  /** At close: what is owed to the disk goes before the connection does. */
  syncWalNow() {
    const fs = require("node:fs");
    let fd;
    try {
      fd = fs.openSync(this.walPath, "r");
      fs.fdatasyncSync(fd);
      this.walSyncs += 1;
    } catch {
      // No WAL file (checkpointed and removed): nothing is waiting for the disk.
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  },
  stats() {
    const pending = this.timer !== undefined || this.syncing;
    return { lazyCommits: this.commits, walSyncs: this.walSyncs, pending };
  },
};
// The adapter prepares every statement it runs (\`client.prepare(sql).bind(args)\`): SQLite parses
// and plans the text each time, most of the thread's CPU for the engine's small writes. Here the
// connection keeps its last \`max\` statements by text and hands the adapter a view of the cached
// one whose bind() passes the arguments to each execution instead (better-sqlite3 binds a
// statement permanently, once). The adapter runs each statement to completion at once, so a
// cached statement is never busy when it is taken again.
function reusePreparedStatements(client, max) {
  if (!(max > 0)) return;
  const prepare = client.prepare.bind(client);
  const cache = new Map();
  const view = (stmt) => ({
    get reader() { return stmt.reader; },
    run: (...args) => stmt.run(...args),
    bind: (args) => ({
      reader: stmt.reader,
      run: () => stmt.run(args),
      columns: () => stmt.columns(),
      raw: () => ({ all: () => stmt.raw(true).all(args) }),
    }),
  });
  client.prepare = (sql) => {
    let stmt = cache.get(sql);
    if (stmt) cache.delete(sql);
    else {
      stmt = prepare(sql);
      if (cache.size >= max) cache.delete(cache.keys().next().value);
    }
    cache.set(sql, stmt);
    return view(stmt);
  };
}
ready.catch(() => {});
// Once the thread is quiet after a burst (four idle looks 2.5 s apart, by its event loop's
// utilization), one collection gives back the pages the burst grew its heap to: an idle thread
// never collects on its own. As server/core/sandbox/worker-reclaim.ts does for the sandbox
// workers; this source is eval'd and cannot import it.
const collect = (() => {
  try {
    require("node:v8").setFlagsFromString("--expose-gc");
    return require("node:vm").runInNewContext("gc");
  } catch {
    return undefined;
  }
})();
if (typeof collect === "function") {
  const { performance } = require("node:perf_hooks");
  let quiet = 0;
  let loaded = false;
  let last = performance.eventLoopUtilization();
  setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization > 0.05;
    last = now;
    if (busy) loaded = true;
    quiet = busy ? 0 : quiet + 1;
    if (!loaded || quiet < 4) return;
    collect();
    loaded = false;
    quiet = 0;
    last = performance.eventLoopUtilization();
  }, 2500).unref();
}
function target(m, adapter) {
  if (!m.tx) return adapter;
  const tx = txs.get(m.tx);
  if (!tx) throw new Error("transaction " + m.tx + " is not open");
  return tx;
}
parentPort.on("message", async (m) => {
  try {
    const adapter = await ready;
    lazy.restore(adapter.client);
    let value;
    switch (m.op) {
      case "queryRaw": value = await target(m, adapter).queryRaw(m.query); break;
      case "executeRaw": value = await target(m, adapter).executeRaw(m.query); break;
      case "executeScript": value = await adapter.executeScript(m.script); break;
      case "startTransaction": {
        const tx = await adapter.startTransaction(m.isolationLevel);
        const id = ++nextTx;
        txs.set(id, tx);
        value = { id, options: tx.options };
        break;
      }
      case "commit":
      case "rollback": {
        const tx = target(m, adapter);
        txs.delete(m.tx);
        value = await tx[m.op]();
        break;
      }
      case "createSavepoint":
      case "rollbackToSavepoint":
      case "releaseSavepoint": value = await target(m, adapter)[m.op](m.name); break;
      case "batch": {
        // Prisma's batch transaction, in one message: the adapter calls its transaction manager
        // makes (the adapter's commit and rollback only release its lock; COMMIT is a statement).
        // No transaction open: the mutex is free, so BEGIN follows the pragma before any other op.
        const skipSync = lazy.begin(adapter.client, m.disk);
        let tx;
        try {
          tx = await adapter.startTransaction();
        } catch (e) {
          if (skipSync) lazy.end(adapter.client, false);
          throw e;
        }
        const phantom = tx.options.usePhantomQuery;
        const statement = (sql) => ({ sql, args: [], argTypes: [] });
        value = [];
        try {
          for (const query of m.queries) value.push(await tx.executeRaw(query));
          if (!phantom) await tx.executeRaw(statement("COMMIT"));
        } catch (e) {
          try {
            if (!phantom) await tx.executeRaw(statement("ROLLBACK"));
          } catch {}
          if (skipSync) lazy.end(adapter.client, false);
          await tx.rollback();
          throw e;
        }
        if (skipSync) lazy.end(adapter.client, true);
        await tx.commit();
        break;
      }
      case "syncStats": value = lazy.stats(); break;
      case "dispose":
        if (lazy.timer || lazy.syncing) {
          clearTimeout(lazy.timer);
          lazy.timer = undefined;
          lazy.syncWalNow();
        }
        value = await adapter.dispose();
        break;
      default: throw new Error("unknown operation " + m.op);
    }
    parentPort.postMessage({ id: m.id, value });
  } catch (e) {
    const error = e && e.name === "DriverAdapterError" && e.cause
      ? { adapter: e.cause }
      : { message: String((e && e.message) || e), stack: e && e.stack };
    parentPort.postMessage({ id: m.id, error });
  }
});
`;

type Reply = { id: number; value?: unknown; error?: { adapter?: unknown; message?: string; stack?: string } };
type Op = { op: string; tx?: number; [field: string]: unknown };

function adapterPath(): string {
  // Resolved from the project (cwd), as Next keeps the adapter external (next.config.mjs).
  const require = createRequire(path.join(process.cwd(), "package.json"));
  return require.resolve("@prisma/adapter-better-sqlite3");
}

/** The thread and its calls in flight. */
class SqliteThread {
  #worker: Worker | undefined;
  #pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  #nextId = 0;
  #config: WorkerSqliteConfig;

  constructor(config: WorkerSqliteConfig) {
    this.#config = config;
  }

  #start(): Worker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        statementCache: DEFAULT_STATEMENT_CACHE,
        syncLagMs: DEFAULT_SYNC_LAG_MS,
        ...this.#config,
        adapterPath: adapterPath(),
      },
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    worker.unref();
    worker.on("message", (reply: Reply) => {
      const call = this.#pending.get(reply.id);
      if (!call) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) worker.unref();
      if (!reply.error) call.resolve(reply.value);
      else if (reply.error.adapter) {
        call.reject(
          new DriverAdapterError(reply.error.adapter as ConstructorParameters<typeof DriverAdapterError>[0]),
        );
      } else {
        const error = new Error(reply.error.message);
        if (reply.error.stack) error.stack = reply.error.stack;
        call.reject(error);
      }
    });
    const fail = (reason: string) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      const calls = [...this.#pending.values()];
      this.#pending.clear();
      for (const call of calls) {
        call.reject(
          new Error(`the SQLite worker thread stopped (${reason}); the next query starts a new one`),
        );
      }
    };
    worker.on("error", (error) => fail(error.message));
    worker.on("exit", (code) => fail(`exit code ${code}`));
    return worker;
  }

  call<T>(op: Op): Promise<T> {
    this.#worker ??= this.#start();
    const worker = this.#worker;
    const id = ++this.#nextId;
    return new Promise<T>((resolve, reject) => {
      if (this.#pending.size === 0) worker.ref();
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...op, id });
    });
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    try {
      await this.call({ op: "dispose" });
    } finally {
      this.#worker = undefined;
      await worker.terminate();
    }
  }
}

/** Blobs cross the thread as Uint8Array; Prisma's Bytes fields are Buffers. */
function withBuffers(result: SqlResultSet): SqlResultSet {
  for (const row of result.rows) {
    for (let i = 0; i < row.length; i++) {
      const value = row[i];
      if (value instanceof Uint8Array && !Buffer.isBuffer(value)) {
        row[i] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      }
    }
  }
  return result;
}

class Queryable {
  readonly provider = "sqlite" as const;
  readonly adapterName = ADAPTER_NAME;
  protected thread: SqliteThread;
  protected tx: number | undefined;

  constructor(thread: SqliteThread, tx?: number) {
    this.thread = thread;
    this.tx = tx;
  }

  async queryRaw(query: SqlQuery): Promise<SqlResultSet> {
    return withBuffers(await this.thread.call<SqlResultSet>({ op: "queryRaw", tx: this.tx, query }));
  }

  executeRaw(query: SqlQuery): Promise<number> {
    return this.thread.call<number>({ op: "executeRaw", tx: this.tx, query });
  }
}

class WorkerTransaction extends Queryable implements Transaction {
  readonly options: TransactionOptions;

  constructor(thread: SqliteThread, tx: number, options: TransactionOptions) {
    super(thread, tx);
    this.options = options;
  }

  commit(): Promise<void> {
    return this.thread.call({ op: "commit", tx: this.tx });
  }

  rollback(): Promise<void> {
    return this.thread.call({ op: "rollback", tx: this.tx });
  }

  createSavepoint(name: string): Promise<void> {
    return this.thread.call({ op: "createSavepoint", tx: this.tx, name });
  }

  rollbackToSavepoint(name: string): Promise<void> {
    return this.thread.call({ op: "rollbackToSavepoint", tx: this.tx, name });
  }

  releaseSavepoint(name: string): Promise<void> {
    return this.thread.call({ op: "releaseSavepoint", tx: this.tx, name });
  }
}

class WorkerSqliteAdapter extends Queryable implements SqlDriverAdapter {
  /**
   * Runs statements in one transaction as Prisma's batch `$transaction([...])` would (start,
   * each statement, commit; rollback on an error), in one round trip to the thread instead of
   * one per statement. Resolves to each statement's count of changed rows. `disk: false`: the
   * commit does not wait for its fsync, which follows within DEFAULT_SYNC_LAG_MS.
   */
  executeBatch(queries: SqlQuery[], options: { disk?: boolean } = {}): Promise<number[]> {
    return this.thread.call<number[]>({ op: "batch", queries, disk: options.disk !== false });
  }

  /** Batches committed without waiting for the disk, and the WAL syncs that followed them. */
  syncStats(): Promise<{ lazyCommits: number; walSyncs: number; pending: boolean }> {
    return this.thread.call({ op: "syncStats" });
  }

  executeScript(script: string): Promise<void> {
    return this.thread.call({ op: "executeScript", script });
  }

  async startTransaction(isolationLevel?: IsolationLevel): Promise<Transaction> {
    const { id, options } = await this.thread.call<{ id: number; options: TransactionOptions }>({
      op: "startTransaction",
      isolationLevel,
    });
    return new WorkerTransaction(this.thread, id, options);
  }

  disposed = false;

  dispose(): Promise<void> {
    this.disposed = true;
    return this.thread.close();
  }
}

/** A Prisma adapter factory for SQLite whose connection lives on a worker thread. */
export class PrismaWorkerSqlite implements SqlDriverAdapterFactory {
  readonly provider = "sqlite" as const;
  readonly adapterName = ADAPTER_NAME;
  #config: WorkerSqliteConfig;

  constructor(config: WorkerSqliteConfig) {
    this.#config = config;
  }

  #adapter: WorkerSqliteAdapter | undefined;

  async connect(): Promise<SqlDriverAdapter> {
    const adapter = new WorkerSqliteAdapter(new SqliteThread(this.#config));
    // Open the connection now, so a bad path fails here rather than at the first query.
    await adapter.executeScript("SELECT 1");
    this.#adapter = adapter;
    return adapter;
  }

  /** The connection Prisma has open (`executeBatch`), if it has one. */
  get connected(): WorkerSqliteAdapter | undefined {
    return this.#adapter?.disposed ? undefined : this.#adapter;
  }
}
