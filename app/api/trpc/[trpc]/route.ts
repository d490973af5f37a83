import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { mountLiveSocket } from "@/server/api/live-socket";
import { appRouter } from "@/server/api/root";
import { createContext } from "@/server/api/trpc";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

// The front server hands this process's /api/trpc WebSocket upgrades to it (one per console tab).
mountLiveSocket();

function handler(req: Request) {
  return fetchRequestHandler({ endpoint: "/api/trpc", req, router: appRouter, createContext });
}

export { handler as GET, handler as POST };
