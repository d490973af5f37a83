"use client";
/**
 * One playground run at a time: start it, follow its events into the timeline (runs.watch),
 * keep its envelope when it finishes, cancel it.
 */
import { skipToken, useMutation } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useCallback, useState } from "react";
import { useTRPC } from "@/app/_lib/trpc";
import type { ObservationEnvelope } from "@/server/core/actions/envelope";
import type { Mode } from "@/server/core/capabilities/types";
import { applyRunEvent, closeWaiting, type TimelineRow } from "../_run/timeline-model";

export type Phase = "idle" | "starting" | "running" | "finished";

export function usePlaygroundRun({
  canRun,
  mode,
  code,
  clientId,
  onStart,
}: {
  canRun: boolean;
  mode: Mode;
  code: () => string;
  /** This tab's toolstore/ui client id: the run's ui calls come back to this tab. */
  clientId?: string;
  onStart?: () => void;
}) {
  const trpc = useTRPC();
  const [phase, setPhase] = useState<Phase>("idle");
  const [target, setTarget] = useState<{ runId: string; afterSeq: number } | null>(null);
  const [rows, setRows] = useState<TimelineRow[]>([]);
  const [envelope, setEnvelope] = useState<ObservationEnvelope | null>(null);
  const [startedAt, setStartedAt] = useState<number | null>(null);

  const cancel = useMutation(trpc.playground.cancel.mutationOptions());
  const follow = (started: { runId: string; afterSeq: number }) => {
    setRows([]);
    setEnvelope(null);
    setTarget(started);
    setStartedAt(Date.now());
    setPhase("running");
  };
  const start = useMutation(
    trpc.playground.run.mutationOptions({ onSuccess: follow, onError: () => setPhase("idle") }),
  );
  // Resolves once a human allowed the plan and its run started; the plan card stays meanwhile.
  const plan = useMutation(trpc.playground.runPlan.mutationOptions({ onSuccess: follow }));

  useSubscription(
    trpc.runs.watch.subscriptionOptions(target ?? skipToken, {
      onData: ({ data: item }) => {
        if (item.kind === "finished") {
          setRows(closeWaiting);
          setEnvelope(item.envelope);
          setPhase("finished");
          return;
        }
        setRows((prev) => applyRunEvent(prev, item.type, item.payload, item.seq));
      },
    }),
  );

  const running = phase === "starting" || phase === "running";
  const run = useCallback(() => {
    if (!canRun || running) return;
    const text = code();
    setRows([]);
    setEnvelope(null);
    setTarget(null);
    setStartedAt(Date.now());
    setPhase("starting");
    onStart?.();
    start.mutate({ code: text, mode, ...(clientId ? { clientId } : {}) });
  }, [canRun, running, mode, start, code, clientId, onStart]);

  return {
    phase,
    running,
    target,
    rows,
    envelope,
    startedAt,
    run,
    /** Asks the approval queue for the finished plan-mode run's plan, then follows its run. */
    runPlan: (planId: string) => !plan.isPending && plan.mutate({ planId, mode }),
    planAsking: plan.isPending,
    planError: plan.error,
    cancel: () => target && cancel.mutate({ runId: target.runId }),
    cancelling: cancel.isPending,
    startError: start.error,
    cancelError: cancel.error,
  };
}
