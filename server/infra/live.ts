/** The process-wide event bus over the one Prisma client. */
import { dbTarget, getDb } from "../db";
import { createEventBus, type EventBus } from "./events";
import { processChannel } from "./instance-channel";

const holder = globalThis as typeof globalThis & { __toolstoreEvents?: EventBus };

export function getEventBus(): EventBus {
  holder.__toolstoreEvents ??= createEventBus(getDb(), { channel: processChannel(dbTarget()) });
  return holder.__toolstoreEvents;
}
