import { describe, expect, it } from "vitest";
import { snapshotArgs } from "../capabilities/snapshot";
import { AppError } from "../errors";
import { testSession } from "../testing/fixtures";
import { createMemoryPorts } from "../testing/memory-ports";
import { createApprovalService } from "./approvals";

function setup(options: { ttlMs?: number; pollMs?: number } = {}) {
  const ports = createMemoryPorts();
  const service = createApprovalService({
    store: ports.approvals,
    grants: ports.grants,
    events: ports.events,
    clock: ports.clock,
    ttlMs: options.ttlMs ?? 60_000,
    pollMs: options.pollMs ?? 20,
  });
  return { ports, service };
}

const capability = { name: "notes.save", category: "write" as const, versionHash: "v1" };

async function request(
  service: ReturnType<typeof setup>["service"],
  args = { title: "Q3" },
  apiKeyId?: string,
) {
  const session = testSession(apiKeyId ? { apiKeyId, actorLabel: `key "${apiKeyId}"` } : {});
  return service.request({
    runId: "run1",
    session,
    capability,
    snapshot: snapshotArgs(args),
    sessionGrantable: true,
  });
}

const bob = { userId: "user_bob", label: "bob" };

describe("approvals", () => {
  it("a request is persisted with the argument snapshot and published", async () => {
    const { ports, service } = await setup();
    const record = await request(service);
    expect(record).toMatchObject({
      status: "pending",
      argsSnapshot: '{"title":"Q3"}',
      capability: "notes.save",
    });
    const event = ports.events.all.find((e) => e.type === "approval.requested");
    expect(event).toMatchObject({
      approval: { id: record.id, args: { title: "Q3" }, sessionGrantable: true },
    });
  });

  it("expires after its time to live and then counts as denied", async () => {
    const { ports, service } = setup({ ttlMs: 60 });
    const record = await request(service);
    const final = await service.wait(record.id, new AbortController().signal);
    expect(final.status).toBe("expired");
    expect(ports.events.all.some((e) => e.type === "approval.expired")).toBe(true);
    await expect(
      service.decide({ approvalId: record.id, answer: "once", decidedBy: bob }),
    ).rejects.toMatchObject({
      code: "CONFLICT",
    });
  });

  it("is single use and bound to the argument hash", async () => {
    const { service } = setup();
    const record = await request(service);
    await service.decide({ approvalId: record.id, answer: "once", decidedBy: bob });
    expect(await service.consume(record.id, snapshotArgs({ title: "other" }).hash)).toBe(false);
    expect(await service.consume(record.id, record.argsHash)).toBe(true);
    expect(await service.consume(record.id, record.argsHash)).toBe(false);
  });

  it("decides by compare-and-set: the second answer loses with CONFLICT", async () => {
    const { service } = setup();
    const record = await request(service);
    const answers = await Promise.allSettled([
      service.decide({ approvalId: record.id, answer: "once", decidedBy: bob }),
      service.decide({
        approvalId: record.id,
        answer: "deny",
        decidedBy: { userId: "user_carol", label: "carol" },
      }),
    ]);
    expect(answers.filter((a) => a.status === "fulfilled")).toHaveLength(1);
    const lost = answers.find((a) => a.status === "rejected");
    expect((lost as PromiseRejectedResult).reason).toBeInstanceOf(AppError);
    expect((lost as PromiseRejectedResult).reason.code).toBe("CONFLICT");
  });

  it("an API key cannot answer its own request", async () => {
    const { service } = setup();
    const record = await request(service, { title: "x" }, "key_laptop");
    await expect(
      service.decide({
        approvalId: record.id,
        answer: "once",
        decidedBy: { userId: null, apiKeyId: "key_laptop", label: "k" },
      }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("allow for session creates a grant bound to the capability version", async () => {
    const { ports, service } = setup();
    const record = await request(service);
    await service.decide({ approvalId: record.id, answer: "session", decidedBy: bob });
    expect(await ports.grants.findActive("sess_test", "notes.save", "v1")).not.toBeNull();
    expect(await ports.grants.findActive("sess_test", "notes.save", "v2")).toBeNull();
  });

  it("allow for session also answers the waiting requests of that session the grant covers", async () => {
    const { ports, service } = setup();
    const ask = (
      args: object,
      over: { session?: string; cap?: typeof capability; grantable?: boolean } = {},
    ) =>
      service.request({
        runId: "run1",
        session: testSession({ id: over.session ?? "sess_test" }),
        capability: over.cap ?? capability,
        snapshot: snapshotArgs(args),
        sessionGrantable: over.grantable ?? true,
      });
    const first = await ask({ title: "a" });
    const sibling = await ask({ title: "b" });
    const otherSession = await ask({ title: "c" }, { session: "sess_other" });
    const otherCapability = await ask({ title: "d" }, { cap: { ...capability, name: "notes.delete" } });
    const otherVersion = await ask({ title: "e" }, { cap: { ...capability, versionHash: "v2" } });
    const forcedByRule = await ask({ title: "f" }, { grantable: false });
    const waiting = service.wait(sibling.id, new AbortController().signal);

    await service.decide({ approvalId: first.id, answer: "session", decidedBy: bob });

    const grant = ports.grants.all[0];
    expect(grant?.approvalId).toBe(first.id);
    expect(await waiting).toMatchObject({
      status: "allowed",
      scope: "session",
      decidedById: "user_bob",
      grantId: grant?.id,
    });
    expect(ports.approvals.all.get(first.id)?.grantId).toBeNull();
    for (const r of [otherSession, otherCapability, otherVersion, forcedByRule]) {
      expect(ports.approvals.all.get(r.id)?.status).toBe("pending");
    }
    const released = ports.events.all.filter((e) => e.type === "approval.decided" && e.grantId === grant?.id);
    expect(released.map((e) => (e as { approvalId: string }).approvalId)).toEqual([sibling.id]);
    // The released request runs once, with its own snapshot.
    expect(await service.consume(sibling.id, sibling.argsHash)).toBe(true);
  });

  it("a request that is not grantable for the session refuses a session answer and stays pending", async () => {
    const { ports, service } = setup();
    const record = await service.request({
      runId: "run1",
      session: testSession(),
      capability,
      snapshot: snapshotArgs({ title: "forced" }),
      sessionGrantable: false,
    });
    await expect(
      service.decide({ approvalId: record.id, answer: "session", decidedBy: bob }),
    ).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("answer once or deny"),
    });
    expect(ports.grants.all).toEqual([]);
    expect((await service.decide({ approvalId: record.id, answer: "once", decidedBy: bob })).status).toBe(
      "allowed",
    );
  });

  it("allow once leaves the other waiting requests of the session alone", async () => {
    const { ports, service } = setup();
    const first = await request(service, { title: "a" });
    const sibling = await request(service, { title: "b" });
    await service.decide({ approvalId: first.id, answer: "once", decidedBy: bob });
    expect(ports.approvals.all.get(sibling.id)?.status).toBe("pending");
  });

  it("a decision taken by another instance over the same store is seen by polling", async () => {
    const { ports, service } = setup({ pollMs: 30 });
    const other = createApprovalService({
      store: ports.approvals,
      grants: ports.grants,
      events: ports.events,
      clock: ports.clock,
    });
    const record = await request(service);
    const waiting = service.wait(record.id, new AbortController().signal);
    setTimeout(() => void other.decide({ approvalId: record.id, answer: "deny", decidedBy: bob }), 50);
    expect((await waiting).status).toBe("denied");
  });

  it("a local decision wakes the waiter at once", async () => {
    const { service } = setup({ pollMs: 10_000 });
    const record = await request(service);
    const started = Date.now();
    const waiting = service.wait(record.id, new AbortController().signal);
    setTimeout(() => void service.decide({ approvalId: record.id, answer: "once", decidedBy: bob }), 20);
    expect((await waiting).status).toBe("allowed");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("an aborted wait expires the request so it can never run later", async () => {
    const { service } = setup();
    const record = await request(service);
    const ac = new AbortController();
    const waiting = service.wait(record.id, ac.signal);
    ac.abort();
    expect((await waiting).status).toBe("expired");
  });

  it("recovery expires requests whose run is gone, and keeps live ones", async () => {
    const { service, ports } = setup();
    const dead = await request(service);
    const live = await service.request({
      runId: "run_live",
      session: testSession(),
      capability,
      snapshot: snapshotArgs({}),
      sessionGrantable: true,
    });
    const expired = await service.recover(async (ids) => new Set(ids.filter((id) => id === "run_live")));
    expect(expired).toBe(1);
    expect(ports.approvals.all.get(dead.id)?.status).toBe("expired");
    expect(ports.approvals.all.get(live.id)?.status).toBe("pending");
  });

  it("expireDue marks overdue requests", async () => {
    const { service, ports } = setup({ ttlMs: 1 });
    const record = await request(service);
    await new Promise((r) => setTimeout(r, 5));
    expect(await service.expireDue()).toBe(1);
    expect(ports.approvals.all.get(record.id)?.status).toBe("expired");
  });

  it("polls every waiting request in one read", async () => {
    const { ports, service } = setup({ pollMs: 50 });
    let reads = 0;
    const getMany = ports.approvals.getMany?.bind(ports.approvals);
    ports.approvals.getMany = async (ids) => {
      reads += 1;
      return getMany ? getMany(ids) : [];
    };
    const records = await Promise.all(Array.from({ length: 20 }, () => request(service)));
    const waits = records.map((r) => service.wait(r.id, new AbortController().signal));
    await new Promise((r) => setTimeout(r, 330));
    expect(reads).toBeGreaterThanOrEqual(3);
    expect(reads).toBeLessThanOrEqual(8);
    for (const r of records) await service.decide({ approvalId: r.id, answer: "deny", decidedBy: bob });
    expect((await Promise.all(waits)).every((r) => r.status === "denied")).toBe(true);
  });

  it("periodic recovery leaves direct calls and requests someone here waits for alone", async () => {
    const { service, ports } = setup();
    const direct = await service.request({
      runId: null,
      session: testSession(),
      capability,
      snapshot: snapshotArgs({}),
      sessionGrantable: true,
    });
    const waited = await request(service);
    const waiting = service.wait(waited.id, new AbortController().signal);
    expect(await service.recover(async () => new Set())).toBe(0);
    expect(ports.approvals.all.get(direct.id)?.status).toBe("pending");
    expect(ports.approvals.all.get(waited.id)?.status).toBe("pending");
    expect(await service.recover(async () => new Set(), { includeDirectCalls: true })).toBe(1);
    expect(ports.approvals.all.get(direct.id)?.status).toBe("expired");
    await service.decide({ approvalId: waited.id, answer: "deny", decidedBy: bob });
    expect((await waiting).status).toBe("denied");
  });
});
