import { handleConsent } from "@/server/http/oauth";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = handleConsent;
