import { siteOfRequest } from "@/server/http/oauth";
import { clientMetadataDocument } from "@/server/modules/mcp-servers/upstream-oauth";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** ToolStore's own client ID metadata document, for authorization servers that accept one. */
export function GET(req: Request) {
  return Response.json(clientMetadataDocument(siteOfRequest(req).issuer), {
    headers: { "cache-control": "max-age=3600" },
  });
}
