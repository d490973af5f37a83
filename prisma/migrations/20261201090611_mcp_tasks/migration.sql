-- CreateTable
CREATE TABLE "McpTask" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "apiKeyId" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'working',
    "statusMessage" TEXT,
    "result" TEXT,
    "ttlMs" INTEGER,
    "pollIntervalMs" INTEGER NOT NULL DEFAULT 1000,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "McpTask_apiKeyId_createdAt_idx" ON "McpTask"("apiKeyId", "createdAt");
