import type { Metadata } from "next";
import { Forbidden } from "../../../_components/forbidden";
import { requireRole } from "../../../_lib/session";
import { UsersAdmin } from "./users-admin";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Users" };

export default async function UsersPage() {
  const { user, allowed } = await requireRole("admin");
  if (!allowed) return <Forbidden need="admin" have={user.role} />;
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Users</h1>
          <p>Admins manage everything; approvers answer approvals; viewers look.</p>
        </div>
      </div>
      <UsersAdmin selfId={user.id} />
    </>
  );
}
