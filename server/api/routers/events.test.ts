/**
 * events.live accepts only the server's event names: a misspelt one is a BAD_REQUEST, not a
 * subscription that silently never fires. Input is checked before the event bus is touched, so
 * no database is needed.
 */
import { TRPCError } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { LIVE_EVENT_TYPES } from "../../core/event-types";
import type { Db } from "../../db";
import { createCaller } from "../root";

function viewerCaller() {
  return createCaller({
    db: {} as Db,
    user: { id: "u1", username: "v", displayName: "v", role: "viewer", sessionId: "s1" },
    sessionToken: undefined,
    req: new Request("http://127.0.0.1/api/trpc"),
    resHeaders: new Headers(),
    engine: () => Promise.reject(new Error("not used")),
  });
}

async function liveError(input: unknown): Promise<unknown> {
  try {
    const stream = await viewerCaller().events.live(input as never);
    // The stream is handed back unstarted; close it.
    await (stream as unknown as AsyncGenerator).return?.(undefined);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe("events.live types", () => {
  it("refuses an unknown event name with BAD_REQUEST", async () => {
    const error = await liveError({ types: ["run.strated"] });
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe("BAD_REQUEST");
  });

  it("accepts every listed name", async () => {
    expect(await liveError({ types: [...LIVE_EVENT_TYPES] })).toBeUndefined();
  });
});
