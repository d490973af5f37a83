/**
 * Two instances on one PostgreSQL database, both running the notifier: every request, whichever
 * instance took it, reaches the receiver exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../core/capabilities/types";
import { createCanaryModule } from "../../core/testing/fixtures";
import { createDb, type Db } from "../../db";
import { deployMigrations } from "../../db/migrate";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "../../engine";
import { postgresScratch, type ScratchDatabase } from "../../engine/testing/served-process";
import { addWebhook } from "./channels";
import { type HttpReceiver, startHttpReceiver } from "./testing/receivers";

const pgBase = process.env.TOOLSTORE_TEST_POSTGRES_URL;
const REQUESTS_PER_INSTANCE = 4;

describe.skipIf(!pgBase)("[NOTIFICATIONS] two PostgreSQL instances", () => {
  let scratch: ScratchDatabase;
  const dbs: Db[] = [];
  const engines: ServerEngine[] = [];
  let receiver: HttpReceiver;
  let userId: string;

  beforeAll(async () => {
    process.env.TOOLSTORE_SECRET_KEY = Buffer.alloc(32, 9).toString("base64");
    scratch = await postgresScratch(pgBase as string, "notify");
    await deployMigrations(scratch.target);
    receiver = await startHttpReceiver();
    for (const name of ["pg-a", "pg-b"]) {
      const db = createDb(scratch.target);
      dbs.push(db);
      engines.push(
        await startServerEngine({
          db,
          ports: createPrismaPorts(db),
          instanceId: name,
          workers: 1,
          extraModules: [() => [createCanaryModule()]],
          notifications: {
            publicUrl: "http://console.test",
            tickMs: 50,
            planner: { quietMs: 0, maxWaitMs: 0 },
          },
        }),
      );
    }
    const [db] = dbs as [Db];
    userId = (
      await db.user.create({
        data: { username: "alice", displayName: "Alice", role: "admin", passwordHash: "x" },
      })
    ).id;
    await addWebhook(db, { url: `${receiver.url}/hook` });
  }, 60_000);

  afterAll(async () => {
    for (const e of engines) await e.shutdown();
    for (const db of dbs) await db.$disconnect();
    await receiver?.close();
    await scratch?.drop();
  });

  it("each request is sent once, whichever instance created it", async () => {
    const runs: Promise<unknown>[] = [];
    engines.forEach((engine, i) => {
      const session: Session = {
        id: `s-${i}`,
        userId,
        surface: "playground",
        mode: "default",
        mountedModules: ["*"],
        actorLabel: `alice (instance ${i})`,
      };
      for (let n = 0; n < REQUESTS_PER_INSTANCE; n++) {
        runs.push(
          engine.run({
            session: { ...session, id: `${session.id}-${n}` },
            code: `import { write } from "toolstore/canary";\nexport default async () => write({ value: "${i}-${n}" });`,
          }),
        );
      }
    });
    const [db] = dbs as [Db];
    const total = REQUESTS_PER_INSTANCE * engines.length;
    const pending = await waitFor(
      () => db.approval.findMany({ where: { status: "pending" } }),
      (r) => r.length === total,
    );
    const mentioned = () =>
      receiver.requests.flatMap((r) =>
        (JSON.parse(r.body.toString()).approvals as { id: string }[]).map((a) => a.id),
      );
    await waitFor(
      async () => mentioned(),
      (ids) => new Set(ids).size === total,
    );
    // Both notifiers keep ticking: nothing arrives twice after a while either.
    await new Promise((r) => setTimeout(r, 1_000));
    const ids = mentioned();
    expect(ids.sort()).toEqual(pending.map((p) => p.id).sort());
    const sentBy = await db.notificationDelivery.findMany({ select: { claimedBy: true, status: true } });
    expect(sentBy.every((d) => d.status === "sent")).toBe(true);
    for (const p of pending) {
      await engines[0]?.approvals.decide({
        approvalId: p.id,
        answer: "once",
        decidedBy: { userId, label: "Alice" },
      });
    }
    await Promise.all(runs);
  }, 60_000);
});

async function waitFor<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out: ${JSON.stringify(v)?.slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
