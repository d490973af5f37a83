/**
 * The engine's ports over the database: rules, grants, approvals, decisions, the event outbox,
 * runs and assets, with the instance channel's announcements (LISTEN/NOTIFY on PostgreSQL) wrapped
 * around the writes other instances wait for.
 */
import type { EnginePorts } from "../core/actions/engine";
import { systemClock } from "../core/gate/ports";
import type { Db } from "../db";
import { createPrismaApprovalStore, createPrismaGrantStore } from "./approval-store";
import type { InstanceChannel } from "./instance-channel";
import {
  createPrismaBudgetStore,
  createPrismaPlanStore,
  createPrismaShadowSink,
} from "./policy-trial-stores";
import {
  createOutboxPublisher,
  createPrismaAssetStore,
  createPrismaDecisionSink,
  createPrismaRuleSource,
  createPrismaRunStore,
} from "./run-stores";
import { createWriteBatcher } from "./write-batcher";

/**
 * Ports over the database; the engine's audit writes share group commits (write-batcher.ts): a
 * run that makes only read calls is one commit. Events go into the Event outbox table, which
 * every EventBus tails.
 */
export function createPrismaPorts(db: Db, channel?: InstanceChannel): EnginePorts {
  const batch = createWriteBatcher(db);
  const approvals = createPrismaApprovalStore(db);
  const runs = createPrismaRunStore(db, batch);
  const events = createOutboxPublisher(db, batch);
  return {
    rules: createPrismaRuleSource(db),
    grants: createPrismaGrantStore(db),
    approvals: channel ? announceApprovals(approvals, channel) : approvals,
    decisions: createPrismaDecisionSink(db, batch),
    events: channel
      ? {
          async publish(event, options) {
            await events.publish(event, options);
            channel.notify("event");
          },
        }
      : events,
    runs: channel
      ? {
          ...runs,
          async requestCancel(id, at) {
            const requested = await runs.requestCancel(id, at);
            if (requested) channel.notify("cancel", id);
            return requested;
          },
        }
      : runs,
    assets: createPrismaAssetStore(db, batch),
    clock: systemClock,
    plans: createPrismaPlanStore(db),
    budgets: createPrismaBudgetStore(db),
    shadows: createPrismaShadowSink(db),
  };
}

/** Every committed change of an approval's state is announced, so its waiter wakes at once. */
function announceApprovals(
  store: EnginePorts["approvals"],
  channel: InstanceChannel,
): EnginePorts["approvals"] {
  const announced =
    <A extends unknown[]>(change: (id: string, ...rest: A) => Promise<boolean>) =>
    async (id: string, ...rest: A) => {
      const won = await change(id, ...rest);
      if (won) channel.notify("approval", id);
      return won;
    };
  return {
    ...store,
    decide: announced(store.decide),
    expire: announced(store.expire),
    abandon: announced(store.abandon),
  };
}
