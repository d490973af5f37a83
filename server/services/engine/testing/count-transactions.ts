/** Counts `db.$transaction` calls (the batcher's commits) until `restore()`. Tests only. */
import type { Db } from "../../../db";

export function countTransactions(db: Db): { readonly count: number; restore(): void } {
  let count = 0;
  const original = db.$transaction.bind(db);
  // biome-ignore lint/suspicious/noExplicitAny: counting calls of Prisma's overloaded method.
  (db as any).$transaction = (ops: any) => {
    count += 1;
    return original(ops);
  };
  return {
    get count() {
      return count;
    },
    restore() {
      // biome-ignore lint/suspicious/noExplicitAny: restoring the method patched above.
      (db as any).$transaction = original;
    },
  };
}
