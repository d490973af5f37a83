-- AlterTable
ALTER TABLE "ActionRun" ADD COLUMN "cancelRequestedAt" DATETIME;
ALTER TABLE "ActionRun" ADD COLUMN "mcpRequestId" TEXT;

-- AlterTable
ALTER TABLE "Approval" ADD COLUMN "endReason" TEXT;
