-- AlterTable
ALTER TABLE "ActionRun" ADD COLUMN     "cancelRequestedAt" TIMESTAMP(3),
ADD COLUMN     "mcpRequestId" TEXT;

-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "endReason" TEXT;
