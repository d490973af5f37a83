import { getOpsHandlers } from "@/server/http/ops";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return getOpsHandlers().healthz(req);
}
