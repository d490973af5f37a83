import { describe, expect, it } from "vitest";
import { testSession } from "../testing/fixtures";
import { fairnessKey } from "./execute-action";
import { createLocalRuns } from "./local-runs";

describe("local runs", () => {
  it("abort only the runs of this process, with the reason", () => {
    const runs = createLocalRuns({ cancelRequested: async () => [] }, 60_000);
    const controller = new AbortController();
    runs.add("r1", controller);
    expect(runs.abortLocal("other", "stop")).toBe(false);
    expect(runs.abortLocal("r1", "stop")).toBe(true);
    expect((controller.signal.reason as Error).message).toBe("stop");
    runs.remove("r1");
    expect(runs.abortLocal("r1", "stop")).toBe(false);
  });

  it("a cancel requested in the run store aborts the local run; a failing store is retried later", async () => {
    let fail = true;
    const asked: string[][] = [];
    const runs = createLocalRuns(
      {
        cancelRequested: async (ids) => {
          asked.push(ids);
          if (fail) throw new Error("db down");
          return ["r2"];
        },
      },
      60_000,
    );
    const r1 = new AbortController();
    const r2 = new AbortController();
    runs.add("r1", r1);
    runs.add("r2", r2);
    await runs.checkCancels();
    expect(r2.signal.aborted).toBe(false);
    fail = false;
    await runs.checkCancels();
    expect(asked).toEqual([
      ["r1", "r2"],
      ["r1", "r2"],
    ]);
    expect(r1.signal.aborted).toBe(false);
    expect((r2.signal.reason as Error).message).toBe("the run was cancelled");
  });

  it("polls the run store on its own while runs are active", async () => {
    let asked = 0;
    const runs = createLocalRuns(
      {
        cancelRequested: async () => {
          asked += 1;
          return [];
        },
      },
      5,
    );
    runs.add("r1", new AbortController());
    await new Promise((resolve) => setTimeout(resolve, 40));
    runs.remove("r1");
    expect(asked).toBeGreaterThan(0);
  });
});

describe("fairness key", () => {
  it("is the API key, else the user, else the session", () => {
    expect(fairnessKey(testSession({ apiKeyId: "k1" }))).toBe("key:k1");
    expect(fairnessKey(testSession({ userId: "u1" }))).toBe("user:u1");
    expect(fairnessKey(testSession({ userId: "", id: "s9" }))).toBe("session:s9");
  });
});
