import { getDb } from "@/server/db";
import { getEngine } from "@/server/engine";
import { handleUpstreamCallback } from "@/server/http/oauth";
import { refreshServerFromConsole } from "@/server/modules/mcp-servers/console";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return handleUpstreamCallback(req, async (name) =>
    refreshServerFromConsole(getDb(), await getEngine(), name),
  );
}
