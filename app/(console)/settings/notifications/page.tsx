import type { Metadata } from "next";
import { requireUser } from "../../../_lib/session";
import { NotificationsSettings } from "./notifications-settings";
import "@/app/_styles/admin-pages.css";
import "./notifications.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Notifications" };

export default async function NotificationsPage() {
  await requireUser();
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Notifications</h1>
          <p>
            Be told when a request waits for you: push on this device, a webhook (Slack, ntfy, JSON) or email.
          </p>
        </div>
      </div>
      <NotificationsSettings />
    </>
  );
}
