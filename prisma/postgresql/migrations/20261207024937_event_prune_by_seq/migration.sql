-- DropIndex
DROP INDEX "Event_createdAt_idx";
