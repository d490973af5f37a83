"use client";
import { createWSClient, httpSubscriptionLink, type TRPCLink, wsLink } from "@trpc/client";
import { observable, type Unsubscribable } from "@trpc/server/observable";
import type { AppRouter } from "@/server/api/root";

/**
 * The console's subscriptions, all over one WebSocket per tab (server/api/live-socket.ts), so
 * that open tabs do not use up the browser's six HTTP/1.1 connections to the host with SSE streams
 * and leave a click's request waiting. The socket opens with the first subscription and closes
 * a while after the last; a sign-in or sign-out loads a new page, so a socket always carries the
 * session it was opened with (the server reads it again for each subscription). Where it
 * cannot open (a proxy that does not pass upgrades), the tab falls back to SSE, once and for all,
 * and the subscriptions that were waiting for the socket restart over SSE.
 */
export function liveLink(): TRPCLink<AppRouter> {
  let socketFailed = typeof WebSocket === "undefined";
  let socketLink: ReturnType<TRPCLink<AppRouter>> | undefined;
  const sseLink = httpSubscriptionLink({ url: "/api/trpc" });
  return (runtime) => {
    const sse = sseLink(runtime);
    const socket = () => {
      if (socketLink) return socketLink;
      let opened = false;
      const client = createWSClient({
        url: `${window.location.protocol === "https:" ? "wss" : "ws"}://${window.location.host}/api/trpc`,
        // Closed 10 s after the last subscription stops (not at once: a page change would reopen it).
        lazy: { enabled: true, closeMs: 10_000 },
        onOpen: () => {
          opened = true;
        },
        onClose: () => {
          if (opened || socketFailed) return;
          socketFailed = true;
          // Completes the subscriptions that waited for it; they restart over SSE below.
          void client.close();
        },
      });
      socketLink = wsLink<AppRouter>({ client })(runtime);
      return socketLink;
    };
    return ({ op, next }) =>
      observable((observer) => {
        let current: Unsubscribable | undefined;
        const start = (overSocket: boolean) => {
          const link = overSocket ? socket() : sse;
          current = link({ op, next }).subscribe({
            next: (value) => observer.next(value),
            error: (error) => (overSocket && socketFailed ? start(false) : observer.error(error)),
            complete: () => (overSocket && socketFailed ? start(false) : observer.complete()),
          });
        };
        start(!socketFailed);
        return () => current?.unsubscribe();
      });
  };
}
