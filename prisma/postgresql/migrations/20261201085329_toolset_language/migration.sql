-- AlterTable
ALTER TABLE "ToolsetVersion" ADD COLUMN     "language" TEXT NOT NULL DEFAULT 'typescript';
