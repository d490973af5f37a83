/**
 * Admission for one route of the front server: at most `limit` of its requests run at once in
 * this process, and the rest wait their turn, one queue per client (its bearer), served in turn.
 * Under 200 MCP clients every request used to start at once, so each of them, and every console
 * page served meanwhile, took its slices of the main thread among all the others; admitted a few
 * at a time, the MCP requests take the same CPU in total, and a page only waits for the few that
 * run.
 *
 * A request that has run for `releaseAfterMs` stops counting: by then it is waiting (an approval,
 * a slow upstream MCP server, a long action), not computing, and a slot it kept would only hold
 * others back. A client that goes away while waiting leaves the queue.
 */

export interface AdmissionOptions {
  /** Requests that run at once. */
  limit: number;
  /** A request that has run this long no longer counts against `limit`. */
  releaseAfterMs: number;
}

export interface Admission {
  /** A slot now, when one is free and nobody waits: call it when the request ends (again: no-op). */
  tryEnter(): (() => void) | undefined;
  /**
   * Queues the request of `client`; `start` runs with its slot once it is its turn. Returns
   * `leave`, which takes it out of the queue if it is still there (its client went away).
   */
  wait(client: string, start: (release: () => void) => void): () => void;
  /** Requests running and counted, and requests waiting. */
  counts(): { running: number; waiting: number };
}

export function createAdmission(options: AdmissionOptions): Admission {
  const limit = Math.max(1, options.limit);
  /** One queue per client, in the order of their turns (a served client goes to the back). */
  const queues = new Map<string, (() => void)[]>();
  let running = 0;
  let waiting = 0;

  const slot = (): (() => void) => {
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      clearTimeout(timer);
      running -= 1;
      admitWaiting();
    };
    const timer = setTimeout(release, options.releaseAfterMs);
    timer.unref?.();
    return release;
  };

  function admitWaiting(): void {
    while (running < limit) {
      const turn = queues.entries().next();
      if (turn.done) return;
      const [client, queue] = turn.value;
      const next = queue.shift();
      queues.delete(client);
      if (queue.length > 0) queues.set(client, queue);
      if (!next) continue;
      waiting -= 1;
      running += 1;
      next();
    }
  }

  return {
    tryEnter() {
      if (running >= limit || waiting > 0) return undefined;
      running += 1;
      return slot();
    },
    wait(client, start) {
      const next = () => start(slot());
      const queue = queues.get(client);
      if (queue) queue.push(next);
      else queues.set(client, [next]);
      waiting += 1;
      return () => {
        const mine = queues.get(client);
        const at = mine?.indexOf(next) ?? -1;
        if (!mine || at < 0) return;
        mine.splice(at, 1);
        if (mine.length === 0) queues.delete(client);
        waiting -= 1;
      };
    },
    counts: () => ({ running, waiting }),
  };
}
