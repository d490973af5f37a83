-- AlterTable
ALTER TABLE "GateDecisionRecord" ADD COLUMN "args" TEXT;
ALTER TABLE "GateDecisionRecord" ADD COLUMN "clock" TEXT;
ALTER TABLE "GateDecisionRecord" ADD COLUMN "result" TEXT;
ALTER TABLE "GateDecisionRecord" ADD COLUMN "seq" INTEGER;
ALTER TABLE "GateDecisionRecord" ADD COLUMN "state" TEXT;

-- AlterTable
ALTER TABLE "PolicyRule" ADD COLUMN "approvalTtlMinutes" INTEGER;

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_ActionRun" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sessionId" TEXT NOT NULL,
    "surface" TEXT NOT NULL,
    "userId" TEXT,
    "apiKeyId" TEXT,
    "title" TEXT NOT NULL DEFAULT '',
    "code" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "errorKind" TEXT,
    "envelope" TEXT,
    "instanceId" TEXT NOT NULL,
    "startedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" DATETIME,
    "durationMs" INTEGER,
    "cancelRequestedAt" DATETIME,
    "mcpRequestId" TEXT,
    "codeHash" TEXT NOT NULL DEFAULT '',
    "input" TEXT,
    "context" TEXT,
    "seed" TEXT NOT NULL DEFAULT '',
    "leaseToken" INTEGER NOT NULL DEFAULT 0,
    "replays" INTEGER NOT NULL DEFAULT 0,
    "computeMs" INTEGER NOT NULL DEFAULT 0,
    "waitingFor" TEXT,
    "parkedAt" DATETIME
);
INSERT INTO "new_ActionRun" ("apiKeyId", "cancelRequestedAt", "code", "durationMs", "envelope", "errorKind", "finishedAt", "id", "instanceId", "mcpRequestId", "mode", "sessionId", "startedAt", "status", "surface", "title", "userId") SELECT "apiKeyId", "cancelRequestedAt", "code", "durationMs", "envelope", "errorKind", "finishedAt", "id", "instanceId", "mcpRequestId", "mode", "sessionId", "startedAt", "status", "surface", "title", "userId" FROM "ActionRun";
DROP TABLE "ActionRun";
ALTER TABLE "new_ActionRun" RENAME TO "ActionRun";
CREATE INDEX "ActionRun_startedAt_idx" ON "ActionRun"("startedAt");
CREATE INDEX "ActionRun_status_idx" ON "ActionRun"("status");
CREATE INDEX "ActionRun_apiKeyId_idx" ON "ActionRun"("apiKeyId");
CREATE TABLE "new_Approval" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "runId" TEXT,
    "sessionId" TEXT NOT NULL,
    "capability" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "versionHash" TEXT NOT NULL DEFAULT '',
    "argsSnapshot" TEXT NOT NULL,
    "argsHash" TEXT NOT NULL,
    "requestedBy" TEXT NOT NULL,
    "requesterUserId" TEXT,
    "apiKeyId" TEXT,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "kind" TEXT NOT NULL DEFAULT 'call',
    "scope" TEXT,
    "decidedById" TEXT,
    "decidedAt" DATETIME,
    "consumedAt" DATETIME,
    "expiresAt" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sessionGrantable" BOOLEAN NOT NULL DEFAULT true,
    "grantId" TEXT,
    "endReason" TEXT,
    CONSTRAINT "Approval_runId_fkey" FOREIGN KEY ("runId") REFERENCES "ActionRun" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "Approval_decidedById_fkey" FOREIGN KEY ("decidedById") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);
INSERT INTO "new_Approval" ("apiKeyId", "argsHash", "argsSnapshot", "capability", "category", "consumedAt", "createdAt", "decidedAt", "decidedById", "endReason", "expiresAt", "grantId", "id", "requestedBy", "requesterUserId", "runId", "scope", "sessionGrantable", "sessionId", "status", "versionHash") SELECT "apiKeyId", "argsHash", "argsSnapshot", "capability", "category", "consumedAt", "createdAt", "decidedAt", "decidedById", "endReason", "expiresAt", "grantId", "id", "requestedBy", "requesterUserId", "runId", "scope", "sessionGrantable", "sessionId", "status", "versionHash" FROM "Approval";
DROP TABLE "Approval";
ALTER TABLE "new_Approval" RENAME TO "Approval";
CREATE INDEX "Approval_status_expiresAt_idx" ON "Approval"("status", "expiresAt");
CREATE INDEX "Approval_sessionId_idx" ON "Approval"("sessionId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "GateDecisionRecord_runId_seq_key" ON "GateDecisionRecord"("runId", "seq");
