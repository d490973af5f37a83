"use client";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useRouter } from "next/navigation";
import { useRef, useState } from "react";
import { useTRPC } from "@/app/_lib/trpc";
import { type LiveEventType, RUN_STATE_EVENT_TYPES } from "@/server/core/event-types";

/**
 * Refreshes the server-rendered list when a run starts or finishes anywhere. `since` is the event
 * seq read before the list, so what happened while the page loaded refreshes it too.
 */
export function RunsLive({
  since,
  types = RUN_STATE_EVENT_TYPES,
}: {
  since: number;
  types?: readonly LiveEventType[];
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  // The first render's seq: a refresh re-renders with a newer one, which must not resubscribe.
  const [from] = useState(since);
  useSubscription(
    trpc.events.live.subscriptionOptions(
      { types: [...types], lastEventId: String(from) },
      {
        onData: () => {
          clearTimeout(timer.current);
          timer.current = setTimeout(() => router.refresh(), 250);
        },
      },
    ),
  );
  return null;
}
