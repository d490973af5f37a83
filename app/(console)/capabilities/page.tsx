import type { Metadata } from "next";
import { requireUser } from "../../_lib/session";
import { CapabilitiesAdmin } from "./capabilities-admin";
import { LibrariesList } from "./libraries-list";
import { ReviewQueue } from "./review-queue";
import "../../_styles/admin-pages.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Capabilities" };

export default async function CapabilitiesPage() {
  const user = await requireUser();
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Capabilities</h1>
          <p>
            Every module and export the gate knows, with the category it uses: read runs, write, execute and
            external ask in default mode.
          </p>
        </div>
      </div>
      <ReviewQueue canEdit={user.role === "admin"} />
      <CapabilitiesAdmin canEdit={user.role === "admin"} />
      <LibrariesList />
    </>
  );
}
