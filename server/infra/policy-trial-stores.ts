/**
 * The database side of policy trials (#27): budget counters taken with a conditional increment
 * (so two instances cannot both take the last call), shadow hits of log-only rules, and the plans
 * of plan-mode runs. Identifiers are quoted, so each statement serves SQLite and PostgreSQL.
 */
import { sqltag as sql } from "@prisma/client/runtime/client";
import type { PlanStore, StoredPlan } from "../core/actions/plan-run";
import type { PlannedCall } from "../core/capabilities/plan-calls";
import { AppError } from "../core/errors";
import { BUDGET_PERIODS, type RuleBudget } from "../core/gate/rules";
import type { BudgetStore, ShadowSink } from "../core/gate/trials";
import type { Db } from "../db";

/** A rule's stored budget; fail closed on one the gate cannot read (it may cap a dangerous call). */
export function parseRuleBudget(text: string | null, ruleId: string): RuleBudget | null {
  if (!text) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const budget = value as Partial<RuleBudget> | undefined;
  if (
    !budget ||
    !Number.isInteger(budget.limit) ||
    !(BUDGET_PERIODS as readonly string[]).includes(String(budget.per))
  ) {
    throw new AppError("CONFIG_INVALID", `policy rule ${ruleId} has an unreadable budget`);
  }
  return { limit: budget.limit as number, per: budget.per as RuleBudget["per"] };
}

export function createPrismaBudgetStore(db: Db): BudgetStore {
  return {
    async take(key, limit) {
      const now = new Date();
      await db.$executeRaw(
        sql`INSERT INTO "PolicyBudgetUse" ("ruleId", "scope", "window", "count", "updatedAt")
        VALUES (${key.ruleId}, ${key.scope}, ${key.window}, 0, ${now}) ON CONFLICT DO NOTHING`,
      );
      const taken = await db.$executeRaw(
        sql`UPDATE "PolicyBudgetUse" SET "count" = "count" + 1, "updatedAt" = ${now}
        WHERE "ruleId" = ${key.ruleId} AND "scope" = ${key.scope} AND "window" = ${key.window}
        AND "count" < ${limit}`,
      );
      return taken === 1;
    },
  };
}

export function createPrismaShadowSink(db: Db): ShadowSink {
  return {
    async record(hits) {
      await db.policyShadowHit.createMany({
        data: hits.map((h) => ({
          ruleId: h.ruleId,
          runId: h.runId,
          sessionId: h.sessionId,
          capability: h.capability,
          argsHash: h.argsHash,
          decision: h.decision,
          would: h.would,
          createdAt: new Date(h.at),
        })),
      });
    },
  };
}

const PLAN_SELECT = {
  id: true,
  sessionId: true,
  userId: true,
  apiKeyId: true,
  code: true,
  calls: true,
  approvalId: true,
  executedRunId: true,
} as const;

/** executedRunId while the approved plan runs (before its run id is known here). */
const RUNNING = "running";

export function createPrismaPlanStore(db: Db): PlanStore {
  return {
    async save(plan) {
      await db.actionPlan.create({ data: { ...plan, calls: JSON.stringify(plan.calls) } });
    },
    async get(id) {
      const row = await db.actionPlan.findUnique({ where: { id }, select: PLAN_SELECT });
      if (!row) return null;
      const plan: StoredPlan = {
        ...row,
        calls: JSON.parse(row.calls) as PlannedCall[],
        executedRunId: row.executedRunId === RUNNING ? `(running)` : row.executedRunId,
      };
      return plan;
    },
    async claim(id, approvalId) {
      const { count } = await db.actionPlan.updateMany({
        where: { id, executedRunId: null },
        data: { approvalId, executedRunId: RUNNING },
      });
      return count === 1;
    },
    async setExecuted(id, runId) {
      await db.actionPlan.updateMany({ where: { id }, data: { executedRunId: runId } });
    },
  };
}
