-- CreateIndex
CREATE INDEX "Approval_runId_idx" ON "Approval"("runId");
