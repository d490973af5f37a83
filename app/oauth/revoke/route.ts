import { getOAuthEndpoints } from "@/server/http/oauth";
import { corsPreflight } from "@/server/services/oauth/endpoints";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function POST(req: Request) {
  return getOAuthEndpoints().revoke(req);
}

export const OPTIONS = corsPreflight;
