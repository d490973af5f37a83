import { describe, expect, it } from "vitest";
import { snapshotArgs } from "../capabilities/snapshot";
import { createMemoryPorts } from "../testing/memory-ports";
import { approvalSummary, decidedEventOfRow } from "./approval-events";
import { createApprovalWaiters, RUN_GONE_REASON } from "./approval-waiters";
import type { ApprovalRecord } from "./ports";

function setup() {
  const ports = createMemoryPorts();
  const expired: { id: string; reason: string | undefined }[] = [];
  const waiters = createApprovalWaiters({
    store: ports.approvals,
    clock: ports.clock,
    pollMs: 10,
    publishExpired: async (record, _local, reason) => {
      expired.push({ id: record.id, reason });
    },
    decidedEvent: (record) => decidedEventOfRow(record, ports.clock.now()),
  });
  return { ports, waiters, expired };
}

async function pending(ports: ReturnType<typeof createMemoryPorts>, ttlMs = 60_000): Promise<ApprovalRecord> {
  const snapshot = snapshotArgs({ title: "Q3" });
  return ports.approvals.create({
    runId: "run1",
    sessionId: "s1",
    capability: "notes.save",
    category: "write",
    versionHash: "v1",
    argsSnapshot: snapshot.json,
    argsHash: snapshot.hash,
    requestedBy: "alice",
    requesterUserId: "user_alice",
    apiKeyId: null,
    expiresAt: ports.clock.now() + ttlMs,
    sessionGrantable: true,
  });
}

describe("approval waiters", () => {
  it("settle on a decision written straight to the store, and tell the local feed", async () => {
    const { ports, waiters } = setup();
    const record = await pending(ports);
    const local: string[] = [];
    const waiting = waiters.wait(record.id, new AbortController().signal, (e) => local.push(e.type));
    await new Promise((resolve) => setTimeout(resolve, 0)); // wait() reads the row before it registers
    expect(waiters.has(record.id)).toBe(true);
    await ports.approvals.decide(record.id, { status: "denied", scope: null, decidedById: "u" }, Date.now());
    expect((await waiting).status).toBe("denied");
    expect(local).toEqual(["approval.decided"]);
    expect(waiters.has(record.id)).toBe(false);
  });

  it("expire the request with the run-gone reason when every waiting run aborted", async () => {
    const { ports, waiters, expired } = setup();
    const record = await pending(ports);
    const ac = new AbortController();
    const waiting = waiters.wait(record.id, ac.signal);
    ac.abort();
    expect((await waiting).status).toBe("expired");
    expect(expired).toEqual([{ id: record.id, reason: RUN_GONE_REASON }]);
  });

  it("expire the request without a reason when its time is up", async () => {
    const { ports, waiters, expired } = setup();
    const record = await pending(ports, 5);
    expect((await waiters.wait(record.id, new AbortController().signal)).status).toBe("expired");
    expect(expired).toEqual([{ id: record.id, reason: undefined }]);
  });
});

describe("approval events", () => {
  it("a throwing userMessage leaves the card without a message", async () => {
    const ports = createMemoryPorts();
    const record = await pending(ports);
    const summary = approvalSummary(record, snapshotArgs({ title: "Q3" }), () => {
      throw new Error("bad");
    });
    expect(summary).toMatchObject({ id: record.id, args: { title: "Q3" }, userMessage: null });
    expect(approvalSummary(record, snapshotArgs({ title: "Q3" }), (a) => `save ${a.title}`).userMessage).toBe(
      "save Q3",
    );
  });

  it("a pending row has no decided event", async () => {
    const ports = createMemoryPorts();
    expect(decidedEventOfRow(await pending(ports), 1)).toBeUndefined();
  });
});
