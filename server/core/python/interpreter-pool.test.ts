/**
 * Which interpreter a Python call gets, and which idle ones go, with stand-in slots: its own
 * domain's worker first, then a blank spare, a wait for one already starting, a new worker, the
 * least recently used idle worker of another domain evicted when all are there; parse-only
 * workers retired sooner than bound ones, blank spares never.
 */
import { describe, expect, it } from "vitest";
import { idleToRetire, PARSE_DOMAIN, planPick } from "./interpreter-pool";

interface Stand {
  name: string;
  domain: string | null;
  alive: boolean;
  busy: boolean;
  isReady: boolean;
  lastUsed: number;
}

function stand(name: string, domain: string | null, state: Partial<Stand> = {}): Stand {
  return { name, domain, alive: true, busy: false, isReady: true, lastUsed: 0, ...state };
}

describe("planPick", () => {
  it("takes the domain's own idle worker before a blank one", () => {
    const own = stand("own", "t@1");
    expect(planPick([stand("blank", null), own], "t@1", 4)).toEqual({ take: own });
    const blank = stand("blank", null);
    expect(planPick([stand("other", "u@1"), blank], "t@1", 4)).toEqual({ take: blank });
  });

  it("waits for a worker starting for the domain, else starts one, evicting the oldest idle one when full", () => {
    expect(planPick([stand("starting", null, { isReady: false })], "t@1", 4)).toEqual({});
    expect(planPick([stand("busy", "t@1", { busy: true })], "t@1", 4)).toEqual({ spawn: true });
    const older = stand("older", "u@1", { lastUsed: 1 });
    const full = [stand("newer", "v@1", { lastUsed: 5 }), older, stand("busy", "t@1", { busy: true })];
    expect(planPick(full, "t@1", 3)).toEqual({ spawn: true, evict: older });
    const allBusy = [stand("a", "u@1", { busy: true }), stand("b", "v@1", { busy: true })];
    expect(planPick(allBusy, "t@1", 2)).toEqual({});
  });
});

describe("idleToRetire", () => {
  it("retires bound workers idle past the limit, parse-only ones after at most 30 s, and keeps spares", () => {
    const now = 100_000;
    const slots = [
      stand("bound-old", "t@1", { lastUsed: 0 }),
      stand("bound-recent", "t@1", { lastUsed: 90_000 }),
      stand("parse", PARSE_DOMAIN, { lastUsed: 60_000 }),
      stand("spare", null, { lastUsed: 0 }),
      stand("busy", "u@1", { lastUsed: 0, busy: true }),
    ];
    expect(idleToRetire(slots, now, 60_000).map(([s, limit]) => `${s.name}:${limit}`)).toEqual([
      "bound-old:60000",
      "parse:30000",
    ]);
  });
});
