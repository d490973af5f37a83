"use client";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useRouter } from "next/navigation";
import { useRef, useState } from "react";
import { useTRPC } from "@/app/_lib/trpc";

/** While the run is going: re-render the page on each of its events, until it finishes. */
export function RunLive({ runId, afterSeq }: { runId: string; afterSeq: number }) {
  const trpc = useTRPC();
  const router = useRouter();
  // The first seq only: refreshes re-render the page with newer ones, the subscription stays.
  const [from] = useState(afterSeq);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useSubscription(
    trpc.runs.watch.subscriptionOptions(
      { runId, afterSeq: from },
      {
        onData: ({ data }) => {
          clearTimeout(timer.current);
          if (data.kind === "finished") router.refresh();
          else timer.current = setTimeout(() => router.refresh(), 100);
        },
      },
    ),
  );
  return null;
}
