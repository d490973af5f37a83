"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { ErrorNote } from "@/app/_components/error-note";
import { useTRPC } from "@/app/_lib/trpc";
import type { ApprovalAnswer } from "@/server/core/gate/approvals";
import type { ApprovalKind } from "@/server/core/gate/ports";

export type Answer = ApprovalAnswer;

interface AnswerButton {
  answer: Answer;
  label: string;
  key: string;
  className: string;
  title?: string;
}

export const ANSWERS: AnswerButton[] = [
  { answer: "once", label: "Allow once", key: "A", className: "btn btn-sm btn-allow" },
  { answer: "session", label: "Allow for session", key: "S", className: "btn btn-sm" },
  { answer: "deny", label: "Deny", key: "D", className: "btn btn-sm btn-danger" },
];

/**
 * A call that may already have happened: run it again (allow once, the same A key) or not (deny,
 * D). There is no session grant for it.
 */
export const UNCERTAIN_ANSWERS: AnswerButton[] = [
  {
    answer: "once",
    label: "Run it again",
    key: "A",
    className: "btn btn-sm btn-allow",
    title: "Runs the call once more; if it had already happened, its effect happens twice",
  },
  {
    answer: "deny",
    label: "Don't run it again",
    key: "D",
    className: "btn btn-sm btn-danger",
    title: "The call is not repeated and the action ends with an error",
  },
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
  kind = "call",
  onAnswer,
}: {
  approvalId: string;
  decide: ReturnType<typeof useDecide>;
  disabled?: boolean;
  showKeys?: boolean;
  /** False when an ask rule forces a prompt every time: "Allow for session" would not apply. */
  sessionGrantable?: boolean;
  /** `uncertain`: the call may already have happened; the buttons ask whether to run it again. */
  kind?: ApprovalKind;
  onAnswer?: () => void;
}) {
  const busy = decide.isPending && decide.variables?.approvalId === approvalId;
  const failed = decide.isError && decide.variables?.approvalId === approvalId;
  return (
    <div className="stack" style={{ gap: 6 }}>
      <div className="row" style={{ gap: 6 }}>
        {(kind === "uncertain" ? UNCERTAIN_ANSWERS : ANSWERS).map((a) => (
          <button
            key={a.answer}
            type="button"
            className={a.className}
            disabled={disabled || busy || (a.answer === "session" && !sessionGrantable)}
            title={
              a.answer === "session" && !sessionGrantable
                ? "An ask rule asks for this call every time; a session grant would not apply"
                : a.title
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
