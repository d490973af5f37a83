"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { ErrorNote } from "@/app/_components/error-note";
import { useTRPC } from "@/app/_lib/trpc";
import type { ApprovalAnswer } from "@/server/core/gate/approvals";

export type Answer = ApprovalAnswer;

export const ANSWERS: { answer: Answer; label: string; key: string; className: string }[] = [
  { answer: "once", label: "Allow once", key: "A", className: "btn btn-sm btn-allow" },
  { answer: "session", label: "Allow for session", key: "S", className: "btn btn-sm" },
  { answer: "deny", label: "Deny", key: "D", className: "btn btn-sm btn-danger" },
];

/** The three answers to an approval, with their keyboard hints (the card handles the keys). */
export function useDecide() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return useMutation(
    trpc.approvals.decide.mutationOptions({
      onSettled: () => {
        void queryClient.invalidateQueries({ queryKey: trpc.approvals.queue.queryKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.approvals.pendingCount.queryKey() });
      },
    }),
  );
}

export function DecisionButtons({
  approvalId,
  decide,
  disabled,
  showKeys = true,
  sessionGrantable = true,
  onAnswer,
}: {
  approvalId: string;
  decide: ReturnType<typeof useDecide>;
  disabled?: boolean;
  showKeys?: boolean;
  /** False when an ask rule forces a prompt every time: "Allow for session" would not apply. */
  sessionGrantable?: boolean;
  onAnswer?: () => void;
}) {
  const busy = decide.isPending && decide.variables?.approvalId === approvalId;
  const failed = decide.isError && decide.variables?.approvalId === approvalId;
  return (
    <div className="stack" style={{ gap: 6 }}>
      <div className="row" style={{ gap: 6 }}>
        {ANSWERS.map((a) => (
          <button
            key={a.answer}
            type="button"
            className={a.className}
            disabled={disabled || busy || (a.answer === "session" && !sessionGrantable)}
            title={
              a.answer === "session" && !sessionGrantable
                ? "An ask rule asks for this call every time; a session grant would not apply"
                : undefined
            }
            aria-keyshortcuts={showKeys ? a.key : undefined}
            onClick={() => {
              onAnswer?.();
              decide.mutate({ approvalId, answer: a.answer });
            }}
          >
            {a.label}
            {showKeys && <kbd aria-hidden>{a.key}</kbd>}
          </button>
        ))}
      </div>
      {failed && <ErrorNote error={decide.error} />}
    </div>
  );
}
