-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "grantId" TEXT,
ADD COLUMN     "sessionGrantable" BOOLEAN NOT NULL DEFAULT true;
