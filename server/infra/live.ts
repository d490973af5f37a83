/** The process-wide event bus over the one Prisma client. */

import { dbTarget, getDb } from "../db";
import { createEventBus, type EventBus } from "./events";
import { processChannel } from "./instance-channel";
import { processSingleton } from "./process-singletons";

export function getEventBus(): EventBus {
  return processSingleton("eventBus", () => createEventBus(getDb(), { channel: processChannel(dbTarget()) }));
}
