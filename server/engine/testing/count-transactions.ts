/**
 * Counts the batch transactions a client commits (Prisma's `db.$transaction`, and `runBatch`'s
 * one-message batches on SQLite) until `restore()`. Tests only.
 */
import { type Db, sqliteConnection } from "../../db";

export function countTransactions(db: Db): { readonly count: number; restore(): void } {
  let count = 0;
  const original = db.$transaction.bind(db);
  // biome-ignore lint/suspicious/noExplicitAny: counting calls of Prisma's overloaded method.
  (db as any).$transaction = (ops: any) => {
    count += 1;
    return original(ops);
  };
  const connection = sqliteConnection(db);
  const batch = connection?.executeBatch;
  if (connection && batch) {
    connection.executeBatch = (queries) => {
      count += 1;
      return batch.call(connection, queries);
    };
  }
  return {
    get count() {
      return count;
    },
    restore() {
      // biome-ignore lint/suspicious/noExplicitAny: restoring the method patched above.
      (db as any).$transaction = original;
      if (connection && batch) connection.executeBatch = batch;
    },
  };
}
