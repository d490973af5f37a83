/**
 * The runs waiting on approvals of this instance: one poll loop reads every waited-for row from
 * the store (~every 200 ms, so a decision taken on another instance is seen) and settles the
 * waiters of rows that are final. Memory only holds wake-up callbacks; the state is in the store.
 */

import { AppError } from "../errors";
import type { ApprovalRecord, ApprovalStore, Clock, EngineEvent } from "./ports";

/** What a person who answers too late is told (the console and tRPC show it as is). */
export const RUN_GONE_REASON = "the action ended before it could be approved";

/** A wait ended by its `detach` signal: the request stays as it is (the run parked). */
export class ParkedWait extends Error {
  constructor(readonly approvalId: string) {
    super(`the wait for approval ${approvalId} was handed to the database`);
    this.name = "ParkedWait";
  }
}

export interface ApprovalWaiters {
  /** Resolves with the approval once it is no longer pending (or expired by the wait itself). */
  wait(
    id: string,
    signal: AbortSignal,
    local?: (event: EngineEvent) => void,
    detach?: AbortSignal,
  ): Promise<ApprovalRecord>;
  /** Re-read `id` now and settle its waiters if it is final. */
  wake(id: string): void;
  /** Whether a run on this instance waits for `id` (recovery leaves such a row alone). */
  has(id: string): boolean;
}

export interface ApprovalWaitersDeps {
  store: ApprovalStore;
  clock: Clock;
  pollMs: number;
  /** Announces an approval the wait itself expired (time up, or every waiting run gone). */
  publishExpired(
    record: ApprovalRecord,
    local?: (event: EngineEvent) => void,
    reason?: string,
  ): Promise<void>;
  /** The `approval.decided` event a waiter's local feed gets when it settles on a decided row. */
  decidedEvent(record: ApprovalRecord): EngineEvent | undefined;
}

interface Waiter {
  signal: AbortSignal;
  local?: (event: EngineEvent) => void;
  settle(record: ApprovalRecord): void;
  fail(error: unknown): void;
}

export function createApprovalWaiters(deps: ApprovalWaitersDeps): ApprovalWaiters {
  const { store, clock, pollMs } = deps;
  const waiters = new Map<string, Set<Waiter>>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let polling = false;

  function removeWaiter(id: string, waiter: Waiter): void {
    const set = waiters.get(id);
    set?.delete(waiter);
    if (set && set.size === 0) waiters.delete(id);
  }

  /** Looks at one approval as read from the store and settles its waiters when it is final. */
  async function review(id: string, record: ApprovalRecord | null): Promise<void> {
    const set = waiters.get(id);
    if (!set || set.size === 0) return;
    if (!record) {
      for (const w of [...set]) w.fail(new AppError("NOT_FOUND", `approval ${id} no longer exists`));
      return;
    }
    let current = record;
    const aborted = [...set].every((w) => w.signal.aborted);
    if (current.status === "pending" && (aborted || clock.now() >= current.expiresAt)) {
      // Time is up, or every run that waited is gone: the request can never run later.
      const reason = aborted ? RUN_GONE_REASON : undefined;
      if (await store.expire(id, reason)) await deps.publishExpired(current, [...set][0]?.local, reason);
      current = (await store.get(id)) ?? { ...current, status: "expired" };
    }
    if (current.status === "pending") return;
    for (const w of [...(waiters.get(id) ?? [])]) {
      const event = deps.decidedEvent(current);
      if (event) w.local?.(event);
      w.settle(current);
    }
  }

  async function readMany(ids: string[]): Promise<ApprovalRecord[]> {
    if (store.getMany) return store.getMany(ids);
    const rows = await Promise.all(ids.map((id) => store.get(id)));
    return rows.filter((r): r is ApprovalRecord => r !== null);
  }

  async function poll(): Promise<void> {
    timer = undefined;
    if (polling) return;
    polling = true;
    try {
      const ids = [...waiters.keys()];
      if (ids.length === 0) return;
      const byId = new Map((await readMany(ids)).map((r) => [r.id, r]));
      for (const id of ids) await review(id, byId.get(id) ?? null);
    } catch (error) {
      for (const set of waiters.values()) for (const w of [...set]) w.fail(error);
    } finally {
      polling = false;
      schedule();
    }
  }

  function schedule(delay = pollMs): void {
    if (timer || waiters.size === 0) return;
    timer = setTimeout(() => void poll(), delay);
  }

  function wake(id: string): void {
    if (!waiters.has(id)) return;
    void store.get(id).then(
      (record) => review(id, record),
      () => undefined,
    );
  }

  async function wait(
    id: string,
    signal: AbortSignal,
    local?: (event: EngineEvent) => void,
    detach?: AbortSignal,
  ): Promise<ApprovalRecord> {
    const first = await store.get(id);
    if (!first) throw new AppError("NOT_FOUND", `approval ${id} no longer exists`);
    return new Promise<ApprovalRecord>((resolve, reject) => {
      const unlisten = () => {
        signal.removeEventListener("abort", onAbort);
        detach?.removeEventListener("abort", onDetach);
      };
      const waiter: Waiter = {
        signal,
        ...(local ? { local } : {}),
        settle: (record) => {
          removeWaiter(id, waiter);
          unlisten();
          resolve(record);
        },
        fail: (error) => {
          removeWaiter(id, waiter);
          unlisten();
          reject(error);
        },
      };
      const onAbort = () => wake(id);
      // Leaves before the run's own signal aborts, so the request is not expired as "run gone".
      const onDetach = () => waiter.fail(new ParkedWait(id));
      if (detach?.aborted) {
        reject(new ParkedWait(id));
        return;
      }
      detach?.addEventListener("abort", onDetach, { once: true });
      const set = waiters.get(id) ?? new Set<Waiter>();
      set.add(waiter);
      waiters.set(id, set);
      signal.addEventListener("abort", onAbort, { once: true });
      // The first look settles an approval that is already decided, expired or aborted.
      void review(id, first).catch((error: unknown) => waiter.fail(error));
      schedule(Math.min(pollMs, Math.max(1, first.expiresAt - clock.now())));
    });
  }

  return { wait, wake, has: (id) => waiters.has(id) };
}
