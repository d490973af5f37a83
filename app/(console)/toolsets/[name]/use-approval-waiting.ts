"use client";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useEffect, useRef, useState } from "react";
import { useTRPC } from "../../../_lib/trpc";
import type { Waiting } from "./try-response";

/**
 * While the call runs, the approval request it waits on (same console session, same capability).
 * The stream stays open on this tab, so a request made right after Run is not missed.
 */
export function useApprovalWaiting({
  enabled,
  running,
  sessionId,
  capability,
}: {
  enabled: boolean;
  running: boolean;
  sessionId: string;
  capability: string;
}): Waiting | null {
  const trpc = useTRPC();
  const [waiting, setWaiting] = useState<Waiting | null>(null);
  const pending = useRef(false);
  pending.current = running;
  useEffect(() => {
    if (!running) setWaiting(null);
  }, [running]);
  useSubscription(
    trpc.events.live.subscriptionOptions(
      { types: ["approval.requested"] },
      {
        enabled,
        onData: (tracked) => {
          if (!pending.current) return;
          const approval = (tracked.data.payload as { approval?: Record<string, unknown> }).approval;
          if (approval?.sessionId === sessionId && approval.capability === capability) {
            setWaiting({ approvalId: String(approval.id), expiresAt: Number(approval.expiresAt) });
          }
        },
      },
    ),
  );
  return waiting;
}
