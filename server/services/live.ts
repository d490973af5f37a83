/** The process-wide event bus over the one Prisma client. */
import { getDb } from "../db";
import { createEventBus, type EventBus } from "./events";

const holder = globalThis as typeof globalThis & { __toolstoreEvents?: EventBus };

export function getEventBus(): EventBus {
  holder.__toolstoreEvents ??= createEventBus(getDb());
  return holder.__toolstoreEvents;
}
