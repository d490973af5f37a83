import { getMcpHttpHandler } from "@/server/mcp/mount";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

function handler(req: Request) {
  return getMcpHttpHandler()(req);
}

export { handler as DELETE, handler as GET, handler as POST };
