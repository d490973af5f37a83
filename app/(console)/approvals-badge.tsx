"use client";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { APPROVAL_EVENT_TYPES, type LiveEventType } from "@/server/core/event-types";
import { useTRPC } from "../_lib/trpc";

const TYPES: LiveEventType[] = [...APPROVAL_EVENT_TYPES];

/**
 * The live number of pending approvals, for the sidebar. The copy on the phone menu button
 * (`mirror`) reads the same cached count and opens no second live connection.
 */
export function ApprovalsBadge({ mirror = false }: { mirror?: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const count = useQuery(trpc.approvals.pendingCount.queryOptions(undefined, { refetchInterval: 30_000 }));
  useSubscription(
    trpc.events.live.subscriptionOptions(
      { types: TYPES },
      {
        enabled: !mirror,
        // A request made between the count's first fetch and the subscription counts too.
        onStarted: () =>
          void queryClient.invalidateQueries({ queryKey: trpc.approvals.pendingCount.queryKey() }),
        onData: () =>
          void queryClient.invalidateQueries({ queryKey: trpc.approvals.pendingCount.queryKey() }),
      },
    ),
  );
  if (!count.data) return null;
  return (
    <span className="nav-badge" data-testid={mirror ? undefined : "approvals-badge"}>
      {count.data}
      <span className="visually-hidden"> pending</span>
    </span>
  );
}
