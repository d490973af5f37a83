import { describe, expect, it } from "vitest";
import { AppError } from "../errors";
import type { DecisionRecord, EngineEvent } from "../gate/ports";
import { testSession } from "../testing/fixtures";
import type { ResolvedCapability } from "./registry";
import { createRunAudit } from "./run-audit";
import { snapshotArgs } from "./snapshot";

function capability(category: "read" | "write"): ResolvedCapability {
  return { name: "notes.save", spec: { category } } as unknown as ResolvedCapability;
}

function setup(options: { sandboxed: boolean; failWrites?: boolean }) {
  const written: { decision: DecisionRecord; durable: boolean | undefined }[] = [];
  const local: EngineEvent[] = [];
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const audit = createRunAudit(
    {
      decisions: {
        settle: async () => {},
        record: async (decision, opts) => {
          await gate;
          if (options.failWrites) throw new Error("disk full");
          written.push({ decision, durable: opts?.durable });
        },
      },
      events: { publish: async () => {} },
      clock: { now: () => 1000 },
    },
    {
      runId: "run1",
      session: testSession(),
      sandboxed: options.sandboxed,
      emit: (event) => {
        local.push(event);
        throw new Error("a broken listener");
      },
    },
  );
  return { audit, written, local, release };
}

const allow = { decision: "allow" as const, reason: "rule", ruleId: null, approvalId: null };

describe("run audit", () => {
  it("a sandboxed read decision is not waited for, but recorded() waits until it is stored", async () => {
    const { audit, written, local, release } = setup({ sandboxed: true });
    await audit.decision(capability("read"), snapshotArgs({}), allow, 3);
    expect(written).toEqual([]);
    expect(local.map((e) => e.type)).toEqual(["gate.decision"]);
    const recorded = audit.recorded();
    release();
    await recorded;
    expect(written).toMatchObject([{ durable: false, decision: { capability: "notes.save", ms: 3 } }]);
  });

  it("an allowed write waits for its durable record", async () => {
    const { audit, written, release } = setup({ sandboxed: true });
    const pending = audit.decision(capability("write"), snapshotArgs({}), allow, 3);
    release();
    await pending;
    expect(written).toMatchObject([{ durable: true }]);
  });

  it("recorded() rejects with a lazy write that failed", async () => {
    const { audit, release } = setup({ sandboxed: true, failWrites: true });
    await audit.decision(capability("read"), null, allow, 1);
    release();
    await expect(audit.recorded()).rejects.toThrow("disk full");
  });

  it("a refusal carries the fields an AppError names", () => {
    const { audit, local } = setup({ sandboxed: true });
    const fields = [{ field: "title", reason: "is required" }];
    audit.refused("notes.save", "write", new AppError("BAD_INPUT", "bad", { details: { fields } }));
    audit.refused("notes.save", null, "plain");
    expect(local).toMatchObject([
      { type: "call.refused", reason: "bad", fields },
      { type: "call.refused", reason: "plain", fields: [] },
    ]);
  });
});
