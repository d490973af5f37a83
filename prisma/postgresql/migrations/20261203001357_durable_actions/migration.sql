-- AlterTable
ALTER TABLE "ActionRun" ADD COLUMN     "codeHash" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "computeMs" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "context" TEXT,
ADD COLUMN     "input" TEXT,
ADD COLUMN     "leaseToken" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "parkedAt" TIMESTAMP(3),
ADD COLUMN     "replays" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "seed" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "waitingFor" TEXT;

-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'call';

-- AlterTable
ALTER TABLE "GateDecisionRecord" ADD COLUMN     "args" TEXT,
ADD COLUMN     "clock" TEXT,
ADD COLUMN     "result" TEXT,
ADD COLUMN     "seq" INTEGER,
ADD COLUMN     "state" TEXT;

-- AlterTable
ALTER TABLE "PolicyRule" ADD COLUMN     "approvalTtlMinutes" INTEGER;

-- CreateIndex
CREATE UNIQUE INDEX "GateDecisionRecord_runId_seq_key" ON "GateDecisionRecord"("runId", "seq");
