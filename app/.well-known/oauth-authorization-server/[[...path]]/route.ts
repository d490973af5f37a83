import { getOAuthEndpoints } from "@/server/http/oauth";
import { corsPreflight } from "@/server/services/oauth/endpoints";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return getOAuthEndpoints().serverMetadata(req);
}

export const OPTIONS = corsPreflight;
