"use client";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useRouter } from "next/navigation";
import { useRef } from "react";
import { useTRPC } from "@/app/_lib/trpc";

/** Refreshes the server-rendered list when a run starts or finishes anywhere. */
export function RunsLive({ types = ["run.started", "run.finished"] }: { types?: string[] }) {
  const trpc = useTRPC();
  const router = useRouter();
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useSubscription(
    trpc.events.live.subscriptionOptions(
      { types },
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
