import { describe, expect, it } from "vitest";
import { isLiveEventType, LIVE_EVENT_TYPES } from "./event-types";

describe("live event types", () => {
  it("lists each name once", () => {
    expect(new Set(LIVE_EVENT_TYPES).size).toBe(LIVE_EVENT_TYPES.length);
  });

  it("knows the engine's and the console's names, and nothing else", () => {
    expect(isLiveEventType("approval.requested")).toBe(true);
    expect(isLiveEventType("grants.revoked")).toBe(true);
    expect(isLiveEventType("approval.request")).toBe(false);
    expect(isLiveEventType("")).toBe(false);
  });
});
