"use client";
/**
 * This tab as a `toolstore/ui` client: an id of its own for this page load, the stream of panes
 * and questions of the runs it starts (no other tab receives them), and the answers it sends.
 */
import { useMutation } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useCallback, useState } from "react";
import { useTRPC } from "@/app/_lib/trpc";
import type { JsonValue } from "@/server/core/capabilities/types";
import type { UiPrompt } from "@/server/services/console-clients";

export type UiOutcome = "answered" | "declined" | "expired" | "withdrawn";

export interface UiPaneState {
  prompt: UiPrompt;
  /** null while a question waits (panes and progress are never waiting). */
  outcome: UiOutcome | null;
  answer?: JsonValue;
}

function newClientId(): string {
  if (typeof crypto !== "undefined" && typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function useUiClient() {
  const trpc = useTRPC();
  const [clientId] = useState(newClientId);
  const [panes, setPanes] = useState<UiPaneState[]>([]);

  const stream = useSubscription(
    trpc.playground.client.subscriptionOptions(
      { clientId },
      {
        onData: (item) => {
          if (item.type === "prompt") {
            const waits = item.prompt.call === "ask" || item.prompt.call === "confirm";
            setPanes((prev) =>
              prev.some((p) => p.prompt.id === item.prompt.id)
                ? prev
                : [...prev, { prompt: item.prompt, outcome: waits ? null : "answered" }],
            );
            return;
          }
          setPanes((prev) =>
            prev.map((p) =>
              p.prompt.id === item.promptId
                ? {
                    ...p,
                    outcome: item.outcome,
                    ...(item.answer === undefined ? {} : { answer: item.answer }),
                  }
                : p,
            ),
          );
        },
      },
    ),
  );

  const send = useMutation(trpc.playground.answer.mutationOptions());
  const answer = useCallback(
    (promptId: string, value: unknown) => send.mutate({ clientId, promptId, answer: value }),
    [send, clientId],
  );
  const decline = useCallback(
    (promptId: string) => send.mutate({ clientId, promptId, decline: true }),
    [send, clientId],
  );

  return {
    clientId,
    panes,
    connected: stream.status === "pending" || stream.status === "connecting" ? false : !stream.error,
    clear: useCallback(() => setPanes([]), []),
    answer,
    decline,
    answering: send.isPending,
    answerError: send.error,
  };
}

export type UiClient = ReturnType<typeof useUiClient>;
