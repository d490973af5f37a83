import type { Metadata } from "next";
import { getDb } from "@/server/db";
import { listApprovalQueue } from "@/server/services/approval-queue";
import { requireUser } from "../../_lib/session";
import "../workbench.css";
import { ApprovalsQueue } from "./approvals-queue";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Approvals" };

export default async function ApprovalsPage() {
  const user = await requireUser();
  const initial = await listApprovalQueue(getDb());
  return <ApprovalsQueue initial={initial} canDecide={user.role !== "viewer"} />;
}
