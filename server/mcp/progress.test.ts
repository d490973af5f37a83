import { describe, expect, it } from "vitest";
import { createProgressReporter } from "./progress";

function fakeExtra(progressToken: string | number | undefined, fail = false) {
  const sent: unknown[] = [];
  return {
    sent,
    extra: {
      _meta: progressToken === undefined ? {} : { progressToken },
      sendNotification: async (notification: unknown) => {
        if (fail) throw new Error("the client went away");
        sent.push(notification);
      },
    },
  };
}

describe("progress notifications", () => {
  it("[MCP]: numbers each notification one higher than the last, with the client's token", async () => {
    const { sent, extra } = fakeExtra("tok-1");
    const progress = createProgressReporter(extra);
    progress.notify("started");
    progress.notify("waiting");
    await Promise.resolve();
    expect(sent).toEqual([
      {
        method: "notifications/progress",
        params: { progressToken: "tok-1", progress: 1, message: "started" },
      },
      {
        method: "notifications/progress",
        params: { progressToken: "tok-1", progress: 2, message: "waiting" },
      },
    ]);
  });

  it("[MCP]: sends nothing without a progress token, and a failed send does not fail the call", async () => {
    const quiet = fakeExtra(undefined);
    createProgressReporter(quiet.extra).notify("started");
    expect(quiet.sent).toEqual([]);
    const failing = fakeExtra(7, true);
    expect(() => createProgressReporter(failing.extra).notify("started")).not.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 0));
  });
});
