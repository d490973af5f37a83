/**
 * Next.js proxy (the file Next 16 runs before every route, on the Node.js runtime): every page,
 * asset and API route is answered only for a Host that names this server and a present Origin of
 * this site (server/http/request-guard.ts). Everything else gets 403, before any route code runs.
 * The operations endpoints are the exception: load balancers and scrapers address an instance by
 * its IP, they change nothing, and /metrics checks its own access (server/http/ops.ts).
 */
import { type NextRequest, NextResponse } from "next/server";
import { getRequestGuard, OPS_PATHS, REQUEST_PATH_HEADER } from "./server/http/request-guard";

export function proxy(req: NextRequest) {
  if (OPS_PATHS.has(req.nextUrl.pathname) && req.method === "GET") return NextResponse.next();
  const verdict = getRequestGuard().check(req);
  if (!verdict.ok) {
    return new NextResponse(`Forbidden: ${verdict.reason}.\n`, {
      status: 403,
      headers: { "content-type": "text/plain; charset=utf-8" },
    });
  }
  // The page asked for, so sign-in can come back to it (a notification's link to one card).
  const headers = new Headers(req.headers);
  headers.set(REQUEST_PATH_HEADER, `${req.nextUrl.pathname}${req.nextUrl.search}`);
  return NextResponse.next({ request: { headers } });
}
