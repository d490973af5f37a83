import type { Metadata } from "next";
import { getDb } from "@/server/db";
import { latestEventSeq } from "@/server/infra/events";
import { listApprovalQueue } from "@/server/services/approval-queue";
import { requireUser } from "../../_lib/session";
import "../workbench.css";
import { ApprovalsQueue } from "./approvals-queue";
import { ReauthorizeCards } from "./reauthorize-cards";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Approvals" };

export default async function ApprovalsPage() {
  const user = await requireUser();
  // Read before the queue: the live view replays every event after it, so a request made while the
  // page loads shows even if it came before the browser subscribed.
  const db = getDb();
  const since = await latestEventSeq(db);
  const initial = await listApprovalQueue(db);
  return (
    <>
      <ReauthorizeCards />
      <ApprovalsQueue initial={initial} since={since} canDecide={user.role !== "viewer"} />
    </>
  );
}
