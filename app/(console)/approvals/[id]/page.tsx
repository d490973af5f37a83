import type { Metadata } from "next";
import { getDb } from "@/server/db";
import { latestEventSeq } from "@/server/infra/events";
import { getApprovalCard } from "@/server/services/approval-queue";
import { requireUser } from "../../../_lib/session";
import "../../workbench.css";
import { ApprovalLink } from "./approval-link";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Approval" };

/** The card a notification links to: /approvals/<id>, behind sign-in (which comes back here). */
export default async function ApprovalPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await requireUser();
  const db = getDb();
  const since = await latestEventSeq(db);
  const initial = await getApprovalCard(db, id);
  return <ApprovalLink id={id} initial={initial} since={since} canDecide={user.role !== "viewer"} />;
}
