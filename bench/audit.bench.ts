/**
 * What the audit log costs a gate decision: the engine's decision sink (decision row + hash-chained
 * audit entry) against the decision row alone, on a temporary SQLite database, in interleaved
 * rounds. Two shapes: one action's calls one after another, and a burst of concurrent decisions.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { DecisionRecord } from "../server/core/gate/ports";
import { createDb } from "../server/db";
import { deployMigrations } from "../server/db/migrate";
import { createPrismaDecisionSink } from "../server/infra/run-stores";
import { createWriteBatcher } from "../server/infra/write-batcher";
import { type Benchmark, ms, summarize } from "./harness";

const decision = (i: number): DecisionRecord => ({
  runId: null,
  sessionId: `bench-${i % 7}`,
  capability: "calculator.evaluate",
  category: "read",
  decision: "allow",
  reason: "read runs in default mode",
  ruleId: null,
  approvalId: null,
  argsHash: "0".repeat(64),
  ms: 0,
  at: Date.now(),
});

export const benchmarks: Benchmark[] = [
  {
    name: "audit-log",
    async run() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-bench-audit-"));
      const target = { provider: "sqlite" as const, url: path.join(dir, "bench.db") };
      await deployMigrations(target);
      const db = createDb(target);
      const batch = createWriteBatcher(db);
      const audited = createPrismaDecisionSink(db, batch);
      const plain = {
        record: (d: DecisionRecord) =>
          batch.write(() =>
            db.gateDecisionRecord.create({
              data: {
                sessionId: d.sessionId,
                capability: d.capability,
                category: d.category,
                decision: d.decision,
                reason: d.reason,
                argsHash: d.argsHash,
                createdAt: new Date(d.at),
              },
              select: { id: true },
            }),
          ),
      };
      const sequential = { audited: [] as number[], plain: [] as number[] };
      const burst = { audited: [] as number[], plain: [] as number[] };
      try {
        for (let round = 0; round < 6; round++) {
          for (const [name, sink] of round % 2
            ? ([
                ["plain", plain],
                ["audited", audited],
              ] as const)
            : ([
                ["audited", audited],
                ["plain", plain],
              ] as const)) {
            const t0 = performance.now();
            for (let i = 0; i < 40; i++) await sink.record(decision(i));
            sequential[name].push((performance.now() - t0) / 40);
            const t1 = performance.now();
            await Promise.all(Array.from({ length: 200 }, (_, i) => sink.record(decision(i))));
            burst[name].push((performance.now() - t1) / 200);
          }
        }
      } finally {
        await db.$disconnect();
        fs.rmSync(dir, { recursive: true, force: true });
      }
      const s = { a: summarize(sequential.audited), p: summarize(sequential.plain) };
      const b = { a: summarize(burst.audited), p: summarize(burst.plain) };
      return {
        title:
          "gate decision write, with the audit entry vs the decision row alone (SQLite, 6 interleaved rounds)",
        rows: [
          {
            metric: "one after another, audited",
            value: ms(s.a.p50, 3),
            note: "per decision, median of rounds",
          },
          { metric: "one after another, row only", value: ms(s.p.p50, 3) },
          { metric: "one after another, ratio", value: `${(s.a.p50 / s.p.p50).toFixed(2)}x` },
          { metric: "burst of 200, audited", value: ms(b.a.p50, 3), note: "per decision" },
          { metric: "burst of 200, row only", value: ms(b.p.p50, 3) },
          { metric: "burst of 200, ratio", value: `${(b.a.p50 / b.p.p50).toFixed(2)}x` },
        ],
      };
    },
  },
];
