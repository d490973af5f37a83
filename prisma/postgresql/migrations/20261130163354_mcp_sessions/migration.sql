-- CreateTable
CREATE TABLE "McpSession" (
    "id" TEXT NOT NULL,
    "apiKeyId" TEXT NOT NULL,
    "capabilities" TEXT NOT NULL DEFAULT '{}',
    "clientName" TEXT NOT NULL DEFAULT '',
    "clientVersion" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closedAt" TIMESTAMP(3),

    CONSTRAINT "McpSession_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "McpSession_apiKeyId_idx" ON "McpSession"("apiKeyId");
