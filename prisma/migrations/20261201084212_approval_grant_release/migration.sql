-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
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
    "scope" TEXT,
    "decidedById" TEXT,
    "decidedAt" DATETIME,
    "consumedAt" DATETIME,
    "expiresAt" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sessionGrantable" BOOLEAN NOT NULL DEFAULT true,
    "grantId" TEXT,
    CONSTRAINT "Approval_runId_fkey" FOREIGN KEY ("runId") REFERENCES "ActionRun" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "Approval_decidedById_fkey" FOREIGN KEY ("decidedById") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);
INSERT INTO "new_Approval" ("apiKeyId", "argsHash", "argsSnapshot", "capability", "category", "consumedAt", "createdAt", "decidedAt", "decidedById", "expiresAt", "id", "requestedBy", "requesterUserId", "runId", "scope", "sessionId", "status", "versionHash") SELECT "apiKeyId", "argsHash", "argsSnapshot", "capability", "category", "consumedAt", "createdAt", "decidedAt", "decidedById", "expiresAt", "id", "requestedBy", "requesterUserId", "runId", "scope", "sessionId", "status", "versionHash" FROM "Approval";
DROP TABLE "Approval";
ALTER TABLE "new_Approval" RENAME TO "Approval";
CREATE INDEX "Approval_status_expiresAt_idx" ON "Approval"("status", "expiresAt");
CREATE INDEX "Approval_sessionId_idx" ON "Approval"("sessionId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
