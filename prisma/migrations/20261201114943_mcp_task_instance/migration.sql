-- AlterTable
ALTER TABLE "McpTask" ADD COLUMN "instanceId" TEXT;

-- CreateIndex
CREATE INDEX "McpTask_status_idx" ON "McpTask"("status");
