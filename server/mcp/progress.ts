/**
 * Progress notifications of one tools/call, numbered as the protocol wants (each one higher than
 * the last). A call whose client sent no progress token gets none; a notification that cannot be
 * sent is dropped, since the run goes on whether or not the client hears about it.
 */
import type { ExecuteExtra } from "./execute-tool";

export interface ProgressReporter {
  /** Whether the client asked for progress (sent a progress token). */
  readonly enabled: boolean;
  notify(message: string): void;
}

export function createProgressReporter(
  extra: Pick<ExecuteExtra, "_meta" | "sendNotification">,
): ProgressReporter {
  const progressToken = extra._meta?.progressToken;
  let progress = 0;
  return {
    enabled: progressToken !== undefined,
    notify(message) {
      if (progressToken === undefined) return;
      progress += 1;
      void extra
        .sendNotification({ method: "notifications/progress", params: { progressToken, progress, message } })
        .catch(() => {});
    },
  };
}
