-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_ToolsetVersion" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "toolsetId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "source" TEXT NOT NULL,
    "doc" TEXT NOT NULL,
    "compiledJs" TEXT NOT NULL,
    "contentHash" TEXT NOT NULL,
    "bindings" TEXT NOT NULL,
    "language" TEXT NOT NULL DEFAULT 'typescript',
    "origin" TEXT NOT NULL,
    "publishedById" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ToolsetVersion_toolsetId_fkey" FOREIGN KEY ("toolsetId") REFERENCES "Toolset" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_ToolsetVersion" ("bindings", "compiledJs", "contentHash", "createdAt", "doc", "id", "origin", "publishedById", "source", "toolsetId", "version") SELECT "bindings", "compiledJs", "contentHash", "createdAt", "doc", "id", "origin", "publishedById", "source", "toolsetId", "version" FROM "ToolsetVersion";
DROP TABLE "ToolsetVersion";
ALTER TABLE "new_ToolsetVersion" RENAME TO "ToolsetVersion";
CREATE INDEX "ToolsetVersion_contentHash_idx" ON "ToolsetVersion"("contentHash");
CREATE UNIQUE INDEX "ToolsetVersion_toolsetId_version_key" ON "ToolsetVersion"("toolsetId", "version");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
