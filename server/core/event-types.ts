/**
 * The names of the live events the console can subscribe to: the engine's (EngineEvent) and the
 * few the console publishes itself. No runtime imports, so client components take the names from
 * here and `events.live` validates against the same list.
 */
import type { EngineEvent } from "./gate/ports";

type EngineEventType = EngineEvent["type"];

/** Every EngineEvent type once; `satisfies` rejects a name the union lacks, the check below a missing one. */
export const ENGINE_EVENT_TYPES = [
  "run.started",
  "run.finished",
  "run.parked",
  "run.resumed",
  "gate.decision",
  "call.finished",
  "call.refused",
  "approval.requested",
  "approval.decided",
  "approval.expired",
  "approval.abandoned",
] as const satisfies readonly EngineEventType[];

type MissingEngineType = Exclude<EngineEventType, (typeof ENGINE_EVENT_TYPES)[number]>;
const everyEngineTypeListed: [MissingEngineType] extends [never] ? true : MissingEngineType = true;
void everyEngineTypeListed;

/** Published by the console's own services: an admin's note, and session grants revoked. */
export const CONSOLE_EVENT_TYPES = ["console.announce", "grants.revoked"] as const;

export const LIVE_EVENT_TYPES = [...ENGINE_EVENT_TYPES, ...CONSOLE_EVENT_TYPES] as const;
export type LiveEventType = (typeof LIVE_EVENT_TYPES)[number];

/** What a console view refreshes on (a list of approvals, the pending count, the runs). */
export const APPROVAL_EVENT_TYPES = [
  "approval.requested",
  "approval.decided",
  "approval.expired",
] as const satisfies readonly LiveEventType[];
export const RUN_STATE_EVENT_TYPES = [
  "run.started",
  "run.finished",
  "run.parked",
  "run.resumed",
] as const satisfies readonly LiveEventType[];

const KNOWN: ReadonlySet<string> = new Set(LIVE_EVENT_TYPES);

/** Narrows an event's stored type (a string) so a switch over it is checked against the names. */
export function isLiveEventType(type: string): type is LiveEventType {
  return KNOWN.has(type);
}
