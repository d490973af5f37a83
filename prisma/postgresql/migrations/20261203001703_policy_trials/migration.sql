-- AlterTable
ALTER TABLE "PolicyRule" ADD COLUMN     "budget" TEXT,
ADD COLUMN     "examples" TEXT,
ADD COLUMN     "shadow" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "PolicyShadowHit" (
    "id" TEXT NOT NULL,
    "ruleId" TEXT NOT NULL,
    "runId" TEXT,
    "sessionId" TEXT NOT NULL,
    "capability" TEXT NOT NULL,
    "argsHash" TEXT NOT NULL,
    "decision" TEXT NOT NULL,
    "would" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PolicyShadowHit_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PolicyBudgetUse" (
    "ruleId" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "window" TEXT NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "PolicyBudgetUse_pkey" PRIMARY KEY ("ruleId","scope","window")
);

-- CreateTable
CREATE TABLE "ActionPlan" (
    "id" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "userId" TEXT,
    "apiKeyId" TEXT,
    "code" TEXT NOT NULL,
    "calls" TEXT NOT NULL,
    "approvalId" TEXT,
    "executedRunId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ActionPlan_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "PolicyShadowHit_ruleId_createdAt_idx" ON "PolicyShadowHit"("ruleId", "createdAt");
