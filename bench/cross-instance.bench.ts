/**
 * Approve on instance B -> the action resumes on instance A, two instances over one PostgreSQL
 * (each with its own Prisma client, LISTEN connection, heartbeat and instance id). Measured from
 * just before B's decide to A's gate letting the call through (A's local `gate.decision` event).
 * Interleaved rounds: the pair with the LISTEN/NOTIFY channel against a pair that only polls
 * (the fallback, and what SQLite does). Needs TOOLSTORE_TEST_POSTGRES_URL; says so otherwise.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import type { Session } from "../server/core/capabilities/types";
import { makePng } from "../server/core/testing/png";
import { createDb, type Db } from "../server/db";
import { deployMigrations } from "../server/db/migrate";
import { pgConfigFromUrl } from "../server/db/provider";
import { type ServerEngine, startServerEngine } from "../server/engine";
import { createPgChannel, type InstanceChannel } from "../server/infra/instance-channel";
import { type Benchmark, type BenchReport, ms, summarize } from "./harness";

const ROUNDS = 30;
const WARMUP = 3;
const ACTION = `import { save } from "toolstore/assets";
export default async (input) => (await save({ data_base64: input.png, name: "b" })).width;`;

interface Pair {
  a: ServerEngine;
  b: ServerEngine;
  dbs: Db[];
  channels: InstanceChannel[];
}

async function pair(url: string, push: boolean, tag: string): Promise<Pair> {
  const dbs = [createDb({ provider: "postgresql", url }), createDb({ provider: "postgresql", url })];
  const channels = push ? [createPgChannel(url), createPgChannel(url)] : [];
  await Promise.all(channels.map((c) => c.ready()));
  const [dbA, dbB] = dbs as [Db, Db];
  const a = await startServerEngine({
    db: dbA,
    instanceId: `bench-a-${tag}`,
    workers: 1,
    ...(channels[0] ? { channel: channels[0] } : {}),
  });
  const b = await startServerEngine({
    db: dbB,
    instanceId: `bench-b-${tag}`,
    workers: 1,
    ...(channels[1] ? { channel: channels[1] } : {}),
  });
  return { a, b, dbs, channels };
}

async function once(p: Pair, session: Session, userId: string, png: string): Promise<number> {
  let asked: (id: string) => void = () => {};
  const approvalId = new Promise<string>((r) => {
    asked = r;
  });
  let resumed = 0;
  const running = p.a.run({
    session,
    code: ACTION,
    input: { png },
    onEvent(event) {
      if (event.type === "approval.requested") asked(event.approval.id);
      if (event.type === "gate.decision" && event.decision === "allow") resumed = performance.now();
    },
  });
  const id = await approvalId;
  const t0 = performance.now();
  await p.b.approvals.decide({ approvalId: id, answer: "once", decidedBy: { userId, label: "bench" } });
  const { envelope } = await running;
  if (!envelope.ok || resumed === 0) throw new Error(`run failed: ${JSON.stringify(envelope.error)}`);
  return resumed - t0;
}

async function crossInstance(): Promise<BenchReport> {
  const base = process.env.TOOLSTORE_TEST_POSTGRES_URL;
  const title = "approve on B -> action resumes on A (two instances, one PostgreSQL, loopback)";
  if (!base) {
    return {
      title,
      rows: [{ metric: "skipped", value: "-", note: "set TOOLSTORE_TEST_POSTGRES_URL to run it" }],
    };
  }
  const name = `toolstore_bench_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Client(pgConfigFromUrl(base));
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const pairs: Pair[] = [];
  try {
    await deployMigrations({ provider: "postgresql", url: url.toString() });
    const setupDb = createDb({ provider: "postgresql", url: url.toString() });
    const user = await setupDb.user.create({
      data: { username: "bench", displayName: "B", role: "admin", passwordHash: "x" },
    });
    await setupDb.$disconnect();
    const push = await pair(url.toString(), true, "push");
    const poll = await pair(url.toString(), false, "poll");
    pairs.push(push, poll);
    const session: Session = {
      id: "bench-session",
      userId: user.id,
      surface: "playground",
      mode: "default",
      mountedModules: ["*"],
      actorLabel: "bench (playground)",
    };
    const png = makePng(1, 1).toString("base64");
    for (let i = 0; i < WARMUP; i++) {
      await once(push, session, user.id, png);
      await once(poll, session, user.id, png);
    }
    const pushed: number[] = [];
    const polled: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Interleaved, alternating which goes first, so drift on a shared machine hits both alike.
      if (i % 2 === 0) {
        pushed.push(await once(push, session, user.id, png));
        polled.push(await once(poll, session, user.id, png));
      } else {
        polled.push(await once(poll, session, user.id, png));
        pushed.push(await once(push, session, user.id, png));
      }
    }
    const sPush = summarize(pushed);
    const sPoll = summarize(polled);
    return {
      title,
      rows: [
        { metric: "LISTEN/NOTIFY p50", value: ms(sPush.p50), note: `p95 ${ms(sPush.p95)}, ${ROUNDS} rounds` },
        { metric: "polling only p50", value: ms(sPoll.p50), note: `p95 ${ms(sPoll.p95)} (200 ms poll)` },
        {
          metric: "push / poll (p50)",
          value: (sPush.p50 / sPoll.p50).toFixed(3),
          note: "interleaved rounds; the issue asks for p50 < 50 ms with push",
        },
      ],
    };
  } finally {
    for (const p of pairs) {
      await p.a.shutdown();
      await p.b.shutdown();
      for (const c of p.channels) await c.close();
      for (const d of p.dbs) await d.$disconnect();
    }
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

export const benchmarks: Benchmark[] = [{ name: "cross-instance approval", run: crossInstance }];
