-- CreateTable
CREATE TABLE "PolicyShadowHit" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "ruleId" TEXT NOT NULL,
    "runId" TEXT,
    "sessionId" TEXT NOT NULL,
    "capability" TEXT NOT NULL,
    "argsHash" TEXT NOT NULL,
    "decision" TEXT NOT NULL,
    "would" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "PolicyBudgetUse" (
    "ruleId" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "window" TEXT NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("ruleId", "scope", "window")
);

-- CreateTable
CREATE TABLE "ActionPlan" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sessionId" TEXT NOT NULL,
    "userId" TEXT,
    "apiKeyId" TEXT,
    "code" TEXT NOT NULL,
    "calls" TEXT NOT NULL,
    "approvalId" TEXT,
    "executedRunId" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_PolicyRule" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "effect" TEXT NOT NULL,
    "pattern" TEXT NOT NULL,
    "conditions" TEXT NOT NULL DEFAULT '[]',
    "versionHash" TEXT,
    "description" TEXT NOT NULL DEFAULT '',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "approvalTtlMinutes" INTEGER,
    "shadow" BOOLEAN NOT NULL DEFAULT false,
    "budget" TEXT,
    "examples" TEXT,
    "createdById" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_PolicyRule" ("approvalTtlMinutes", "conditions", "createdAt", "createdById", "description", "effect", "enabled", "id", "pattern", "updatedAt", "versionHash") SELECT "approvalTtlMinutes", "conditions", "createdAt", "createdById", "description", "effect", "enabled", "id", "pattern", "updatedAt", "versionHash" FROM "PolicyRule";
DROP TABLE "PolicyRule";
ALTER TABLE "new_PolicyRule" RENAME TO "PolicyRule";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "PolicyShadowHit_ruleId_createdAt_idx" ON "PolicyShadowHit"("ruleId", "createdAt");
