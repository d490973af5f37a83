-- CreateTable
CREATE TABLE "McpTask" (
    "id" TEXT NOT NULL,
    "apiKeyId" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'working',
    "statusMessage" TEXT,
    "result" TEXT,
    "ttlMs" INTEGER,
    "pollIntervalMs" INTEGER NOT NULL DEFAULT 1000,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "McpTask_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "McpTask_apiKeyId_createdAt_idx" ON "McpTask"("apiKeyId", "createdAt");
