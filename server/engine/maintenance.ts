/**
 * What an instance does around its engine: at start it writes its heartbeat, retires the rows of
 * earlier boots on its address, recovers runs and approvals left by processes that are gone, ends
 * their MCP tasks and records the fixed modules' capabilities; then a heartbeat timer and a sweep
 * timer run until stop(). The sweep also prunes the event outbox once a minute. The heartbeat has
 * its own timer: a slow sweep must never make a live instance look dead.
 */
import type { Engine } from "../core/actions/engine";
import type { Db } from "../db";
import { EVENT_KEEP_MS, pruneEvents } from "../infra/events";
import type { InstanceChannel } from "../infra/instance-channel";
import { heartbeat, pruneInstances, retirePredecessors } from "../infra/instances";
import { logger } from "../infra/log";
import { endOrphanedTasks } from "../services/mcp-tasks";
import { recordRegistryCapabilities } from "../services/registry-capabilities";

export interface InstanceOptions {
  db: Db;
  engine: Engine;
  instanceId: string;
  alive: (instanceId: string) => Promise<boolean>;
  heartbeatMs: number;
  /** host:port this process serves on: a restart there retires its predecessors. */
  address: string | null;
  channel?: InstanceChannel;
  /** Module kinds whose source writes their Capability rows itself. */
  ownRows: ReadonlySet<string>;
}

export interface RunningInstance {
  /** Stops the timers and the channel's listeners. */
  stop(): void;
  /** Removes this instance's heartbeat row (after its engine closed). */
  forget(): Promise<void>;
}

function every(ms: number, task: () => Promise<void>, label: string): NodeJS.Timeout {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    // A failed round is retried on the next tick; the run paths never depend on it.
    task()
      .catch((error: unknown) => {
        logger("engine").error(`engine: ${label} failed: ${error instanceof Error ? error.message : error}`);
      })
      .finally(() => {
        busy = false;
      });
  }, ms);
  timer.unref();
  return timer;
}

/** How often an instance's sweep prunes the event outbox (the first sweep does, too). */
const EVENT_PRUNE_EVERY_MS = 60_000;

export async function startInstance(options: InstanceOptions): Promise<RunningInstance> {
  const { db, engine, instanceId, alive, address, channel } = options;
  const unsubscribe = channel
    ? [
        channel.on("approval", (id) => {
          engine.approvals.wake(id);
          // A decision taken on another instance: a parked run of this one resumes now.
          void engine.resumeDue().catch(() => 0);
        }),
        channel.on("cancel", () => void engine.checkCancels()),
      ]
    : [];
  await heartbeat(db, instanceId, { address });
  if (address) await retirePredecessors(db, instanceId, address);
  await engine.recover(alive, { startup: true });
  // After the runs: a dead process's MCP tasks end from their (now interrupted) runs.
  await endOrphanedTasks(db, { instanceId, isInstanceAlive: alive });
  // Built-in capabilities have rows from the start, so every page counts and lists the same set.
  await recordRegistryCapabilities(db, await engine.registry.modules(), options.ownRows);

  let prunedAt = 0;
  const beat = every(options.heartbeatMs, () => heartbeat(db, instanceId, { address }), "heartbeat");
  const sweep = every(
    options.heartbeatMs,
    async () => {
      await engine.approvals.expireDue();
      await engine.recover(alive, { startup: false });
      // Parked runs whose approval was answered (or expired) on any instance, ours or a dead one's.
      await engine.resumeDue();
      await endOrphanedTasks(db, { instanceId, isInstanceAlive: alive });
      await pruneInstances(db);
      if (Date.now() - prunedAt >= EVENT_PRUNE_EVERY_MS) {
        prunedAt = Date.now();
        await pruneEvents(db, new Date(prunedAt - EVENT_KEEP_MS));
      }
    },
    "maintenance",
  );
  return {
    stop() {
      clearInterval(sweep);
      clearInterval(beat);
      for (const off of unsubscribe) off();
    },
    async forget() {
      await db.setting.deleteMany({ where: { key: `instance:${instanceId}` } });
    },
  };
}
