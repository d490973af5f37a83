import { cookies } from "next/headers";
import { getDb } from "@/server/db";
import { exportAuditJsonLines, parseAuditQuery } from "@/server/infra/audit-log";
import { auditAnchorFor } from "@/server/services/audit-anchor";
import { roleAtLeast, SESSION_COOKIE, sessionUser } from "@/server/services/auth";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** The audit log (with the page's filters) as JSON lines, oldest first, then its head, for admins. */
export async function GET(req: Request) {
  const db = getDb();
  const user = await sessionUser(db, (await cookies()).get(SESSION_COOKIE)?.value);
  if (!user) return new Response("Sign in to export the audit log.", { status: 401 });
  if (!roleAtLeast(user.role, "admin")) return new Response("The audit log is for admins.", { status: 403 });
  const filter = parseAuditQuery(Object.fromEntries(new URL(req.url).searchParams));
  const lines = exportAuditJsonLines(db, filter, auditAnchorFor(db)?.file);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await lines.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
  });
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-");
  return new Response(body, {
    headers: {
      "content-type": "application/x-ndjson; charset=utf-8",
      "content-disposition": `attachment; filename="toolstore-audit-${stamp}.jsonl"`,
      "cache-control": "no-store",
    },
  });
}
