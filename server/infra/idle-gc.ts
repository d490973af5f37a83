/**
 * One full garbage collection once the serving process goes quiet after a burst. V8 lets the old
 * generation fill with garbage up to about four times what the last full collection left before it
 * collects again, and gives little of it back on its own when the load stops: after 200 MCP
 * clients for a minute the serving process stayed at 3.5× its idle RSS 30 s later, nearly all of
 * it garbage in the main thread's heap (a forced collection brought it back to its idle size).
 *
 * Every `everyMs` it looks once: if the main thread was nearly idle (event-loop utilization) over
 * the last `quietChecks` intervals, and since the last collection the process was busy or the heap
 * grew to much more than that collection left, it collects. A busy process is never paused for it,
 * nor one with short pauses between bursts; a quiet one pauses once, for tens of milliseconds.
 * After collecting it trims glibc's heaps (malloc-trim.ts): the collection frees the off-heap
 * memory that garbage held, and the trim hands the emptied pages back to the system. A busy
 * interval alone is reason enough: with the heap's growth capped (serving-env.ts) V8 collects
 * often during a burst, so the heap may look small after it while glibc still holds the burst's
 * native memory.
 *
 * The default window is 10 s (four looks 2.5 s apart): after 200 MCP clients for a minute the
 * collection came 10-13 s after the load; with a 20 s window it came 22 s to over 40 s after it,
 * after the 30 s mark at which the load's memory should be back.
 */
import { getHeapStatistics } from "node:v8";
import { collectWhenQuiet, exposeGc } from "../core/sandbox/worker-reclaim";
import { mallocTrim } from "./malloc-trim";

export interface IdleGcOptions {
  /** How often it looks (default 2.5 s). */
  everyMs?: number;
  /** Main-thread event-loop utilization at or below which the interval counts as idle (default 0.05). */
  idleBelow?: number;
  /** Idle intervals in a row before it collects (default 4: 10 s quiet). */
  quietChecks?: number;
  /** Collect once the heap holds this many times what the last full collection left (default 1.5)… */
  garbageFactor?: number;
  /** …and at least this many bytes more (default 32 MiB). */
  garbageBytes?: number;
  /** Gives freed native memory back after a collection (default: glibc's malloc_trim where present). */
  trim?: () => unknown;
  /**
   * How long after the collection it trims (default 1 s): V8 frees the dead objects' native
   * memory (array buffers, external strings) on its own threads after the collection returns.
   */
  trimAfterMs?: number;
  /** Told after each collection: the heap's used bytes before and after. */
  onCollect?: (before: number, after: number) => void;
}

/** Collections in a row, a turn of the event loop apart, while each still gives pages back. */
const MAX_COLLECTIONS = 4;

/**
 * One collection frees the garbage, but the heap keeps the pages where survivors sit among it; the
 * next ones move those survivors together (V8 compacts a few pages a collection) and give the
 * emptied pages back. Stops once a collection returns less than 4 MiB.
 */
async function collectFully(gc: () => void): Promise<void> {
  let total = getHeapStatistics().total_heap_size;
  for (let i = 0; i < MAX_COLLECTIONS; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = getHeapStatistics().total_heap_size;
    if (total - now < 4 * 1024 * 1024 && i > 0) return;
    total = now;
  }
}

export function startIdleGc(options: IdleGcOptions = {}): { stop(): void } {
  const everyMs = options.everyMs ?? 2_500;
  const idleBelow = options.idleBelow ?? 0.05;
  const quietChecks = options.quietChecks ?? 4;
  const factor = options.garbageFactor ?? 1.5;
  const bytes = options.garbageBytes ?? 32 * 1024 * 1024;
  const gc = exposeGc();
  if (!gc) return { stop: () => {} };
  const trim = options.trim ?? mallocTrim();
  const trimAfterMs = options.trimAfterMs ?? 1_000;
  let live = getHeapStatistics().used_heap_size;
  return collectWhenQuiet(
    { everyMs, idleBelow, quietChecks },
    async () => {
      const used = getHeapStatistics().used_heap_size;
      await collectFully(gc);
      if (trim) setTimeout(trim, trimAfterMs).unref();
      live = getHeapStatistics().used_heap_size;
      options.onCollect?.(used, live);
    },
    () => getHeapStatistics().used_heap_size >= Math.max(live * factor, live + bytes),
  );
}
