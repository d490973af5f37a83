-- DropIndex
DROP INDEX "GateDecisionRecord_runId_idx";
