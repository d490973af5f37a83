-- CreateTable
CREATE TABLE "McpSession" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "apiKeyId" TEXT NOT NULL,
    "capabilities" TEXT NOT NULL DEFAULT '{}',
    "clientName" TEXT NOT NULL DEFAULT '',
    "clientVersion" TEXT NOT NULL DEFAULT '',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closedAt" DATETIME
);

-- CreateIndex
CREATE INDEX "McpSession_apiKeyId_idx" ON "McpSession"("apiKeyId");
