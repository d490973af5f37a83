/**
 * The journal of one attempt of a durable run (capabilities/journal.ts): the entries earlier
 * attempts recorded, the lease check, the halt that stops the attempt, and the hot window: a call
 * that waits for a human keeps its sandbox for a while (hot-window.ts), then the run parks (the
 * sandbox is released and the run is a row until the answer).
 */
import type { JournalEntry, RunHalt, RunJournal } from "../capabilities/journal";
import { AppError } from "../errors";
import { ParkedWait } from "../gate/approvals";
import type { HotWindow } from "./hot-window";
import type { RunStore } from "./ports";

export interface AttemptJournal extends RunJournal {
  /** Why the attempt stopped early, if it did. */
  halted(): RunHalt | undefined;
}

export function createAttemptJournal(options: {
  runId: string;
  token: number;
  entries: JournalEntry[];
  replaying: boolean;
  runs: Pick<RunStore, "holds">;
  /** How long, and how many at once, calls waiting for a human keep their sandbox. */
  hot: HotWindow;
  /** Ends the attempt's sandbox run. */
  stop(reason: unknown): void;
}): AttemptJournal {
  const entries = new Map(options.entries.map((e) => [e.seq, e]));
  const detachers = new Set<AbortController>();
  let halt: RunHalt | undefined;

  const journal: AttemptJournal = {
    entry: (seq) => entries.get(seq),
    replaying: options.replaying,
    refers: (approvalId) => options.entries.some((e) => e.approvalId === approvalId),
    halted: () => halt,
    async holds() {
      if (halt) return false;
      return options.runs.holds(options.runId, options.token);
    },
    halt(next) {
      if (!halt) {
        halt = next;
        // Every wait in flight leaves without expiring its request, then the sandbox ends.
        for (const detach of detachers) detach.abort();
        options.stop(new Error(`the run stopped: ${next.kind}`));
      }
      return new AppError("CONFLICT", `the run stopped (${halt.kind})`);
    },
    async awaitApproval(approvalId, wait) {
      if (halt) throw journal.halt(halt);
      const detach = new AbortController();
      detachers.add(detach);
      const window = options.hot.enter();
      const onPark = () => detach.abort();
      if (window.signal.aborted) detach.abort();
      else window.signal.addEventListener("abort", onPark, { once: true });
      try {
        const answered = await wait(detach.signal);
        // The human may take hours: a stalled owner whose run another instance took over in the
        // meantime stops here, before it uses the approval or records anything (the new owner's).
        if (!(await journal.holds())) {
          throw journal.halt({
            kind: "lease_lost",
            message: "another instance took this run over while it waited; this one stopped",
          });
        }
        return answered;
      } catch (error) {
        if (error instanceof ParkedWait) throw journal.halt(halt ?? { kind: "parked", approvalId });
        throw error;
      } finally {
        window.signal.removeEventListener("abort", onPark);
        window.leave();
        detachers.delete(detach);
      }
    },
  };
  return journal;
}
