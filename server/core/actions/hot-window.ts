/**
 * The hot window of waits for a human, for the whole process: a wait keeps its sandbox for
 * `parkAfterMs` (a quick Allow stays instant), and at most `maxHot` waits are hot at once. A
 * burst of waits (an agent fleet asking at once) parks the oldest beyond that at once, instead of
 * holding hundreds of live sandboxes for the window: their memory is a high-water mark the process
 * keeps after they park.
 */

/** Hot waits kept at once per process by default. */
export const DEFAULT_MAX_HOT_WAITS = 64;

export interface HotWindow {
  /** A wait begins: its signal aborts when it must park (its time is up, or newer waits push it out). */
  enter(): { signal: AbortSignal; leave(): void };
  /** Waits hot now. */
  size(): number;
}

export function createHotWindow(options: { parkAfterMs: number; maxHot?: number }): HotWindow {
  const maxHot = Math.max(1, options.maxHot ?? DEFAULT_MAX_HOT_WAITS);
  // Insertion order is age order: the first is the oldest.
  const hot = new Map<AbortController, ReturnType<typeof setTimeout> | undefined>();

  const park = (controller: AbortController) => {
    const timer = hot.get(controller);
    if (timer) clearTimeout(timer);
    hot.delete(controller);
    controller.abort();
  };

  return {
    enter() {
      const controller = new AbortController();
      if (!Number.isFinite(options.parkAfterMs)) return { signal: controller.signal, leave() {} };
      hot.set(
        controller,
        setTimeout(() => park(controller), Math.max(0, options.parkAfterMs)),
      );
      while (hot.size > maxHot) {
        const [oldest] = hot.keys();
        if (oldest) park(oldest);
      }
      return {
        signal: controller.signal,
        leave() {
          const timer = hot.get(controller);
          if (timer) clearTimeout(timer);
          hot.delete(controller);
        },
      };
    },
    size: () => hot.size,
  };
}
