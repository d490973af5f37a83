/**
 * Console tabs as `toolstore/ui` clients. A playground tab opens one stream with an id of its own
 * (made up per page load) and starts its runs with that id; a run's ui calls go to that stream
 * only — another tab, even of the same user, never sees the question — and the answer comes back
 * through `answer`, checked against the question. Waits live here, in memory: they need the
 * connected tab, so they are not parked in the database (a tab and the run it started are served
 * by one instance).
 */
import { randomUUID } from "node:crypto";
import {
  type ClientToolRouter,
  type JsonObject,
  type JsonValue,
  type RendererInfo,
  UI_CALLS,
  type UiCall,
} from "../core/capabilities/types";
import { checkAnswer, clientDeclined, clientRequired, clientTimeout } from "../core/capabilities/ui-calls";
import { AppError } from "../core/errors";
import { processSingleton } from "../infra/process-singletons";

/** One ui call as the tab renders it. */
export interface UiPrompt {
  id: string;
  runId: string;
  call: UiCall;
  capability: string;
  args: JsonObject;
  at: number;
  /** When an unanswered question gives up; null for panes and progress (nothing to answer). */
  expiresAt: number | null;
}

export type ClientStreamItem =
  | { type: "prompt"; prompt: UiPrompt }
  | {
      type: "settled";
      promptId: string;
      runId: string;
      outcome: "answered" | "declined" | "expired" | "withdrawn";
      answer?: JsonValue;
    };

interface Connection {
  userId: string;
  queue: ClientStreamItem[];
  wake: (() => void) | null;
}

interface Pending {
  clientId: string;
  userId: string;
  prompt: UiPrompt;
  settle(outcome: "answered" | "declined" | "expired" | "withdrawn", answer?: JsonValue): void;
}

export interface ConsoleClients {
  /** The stream of tab `clientId` (a tRPC subscription); ends when `signal` fires. */
  connect(clientId: string, userId: string, signal: AbortSignal): AsyncGenerator<ClientStreamItem>;
  /** The router a run started by tab `clientId` gets as its client. */
  router(clientId: string, userId: string, label: string): ClientToolRouter;
  /** The person's answer to a question of their tab; BAD_INPUT when the question does not allow it. */
  answer(input: {
    clientId: string;
    userId: string;
    promptId: string;
    answer?: unknown;
    decline?: boolean;
  }): { ok: true };
  /** Tabs with a live stream (tests, diagnostics). */
  connected(): number;
}

const MAX_QUEUE = 500;

export function createConsoleClients(now: () => number = Date.now): ConsoleClients {
  const connections = new Map<string, Connection>();
  const pending = new Map<string, Pending>();

  function push(clientId: string, item: ClientStreamItem): void {
    const c = connections.get(clientId);
    if (!c) return;
    if (c.queue.length >= MAX_QUEUE) c.queue.shift();
    c.queue.push(item);
    c.wake?.();
  }

  function ownerOf(clientId: string): string | undefined {
    return (
      connections.get(clientId)?.userId ?? [...pending.values()].find((p) => p.clientId === clientId)?.userId
    );
  }

  async function* connect(clientId: string, userId: string, signal: AbortSignal) {
    const owner = ownerOf(clientId);
    if (owner !== undefined && owner !== userId) {
      throw new AppError("FORBIDDEN", "this client id belongs to another user's tab; reload the page");
    }
    const connection: Connection = { userId, queue: [], wake: null };
    connections.get(clientId)?.wake?.();
    connections.set(clientId, connection);
    // A tab that reconnects gets the questions still waiting for it.
    for (const p of pending.values())
      if (p.clientId === clientId) connection.queue.push({ type: "prompt", prompt: p.prompt });
    const onAbort = () => connection.wake?.();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      while (!signal.aborted && connections.get(clientId) === connection) {
        const item = connection.queue.shift();
        if (item) {
          yield item;
          continue;
        }
        await new Promise<void>((resolve) => {
          connection.wake = resolve;
        });
        connection.wake = null;
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      if (connections.get(clientId) === connection) connections.delete(clientId);
    }
  }

  function router(clientId: string, userId: string, label: string): ClientToolRouter {
    const info = (): RendererInfo => ({ id: clientId, kind: "console", label, renders: [...UI_CALLS] });
    return {
      renderers: () => (connections.get(clientId)?.userId === userId ? [info()] : []),
      execute(call, args, options) {
        if (connections.get(clientId)?.userId !== userId) {
          return Promise.reject(clientRequired(options.capability, call, []));
        }
        const waits = call === "ask" || call === "confirm";
        const at = now();
        const prompt: UiPrompt = {
          id: randomUUID(),
          runId: options.runId,
          call,
          capability: options.capability,
          args,
          at,
          expiresAt: waits ? at + options.timeoutMs : null,
        };
        push(clientId, { type: "prompt", prompt });
        if (!waits) {
          const done: JsonValue = call === "show" ? { shown: true } : { reported: true };
          return Promise.resolve(done);
        }
        return new Promise<JsonValue>((resolve, reject) => {
          const timer = setTimeout(() => entry.settle("expired"), options.timeoutMs);
          const onAbort = () => entry.settle("withdrawn");
          const entry: Pending = {
            clientId,
            userId,
            prompt,
            settle(outcome, answer) {
              if (!pending.delete(prompt.id)) return;
              clearTimeout(timer);
              options.signal.removeEventListener("abort", onAbort);
              push(clientId, {
                type: "settled",
                promptId: prompt.id,
                runId: prompt.runId,
                outcome,
                ...(answer === undefined ? {} : { answer }),
              });
              if (outcome === "answered") resolve(answer ?? null);
              else if (outcome === "declined") reject(clientDeclined(options.capability, label));
              else if (outcome === "expired") reject(clientTimeout(options.capability, options.timeoutMs));
              else reject(new AppError("CONFLICT", "the run has ended"));
            },
          };
          pending.set(prompt.id, entry);
          if (options.signal.aborted) onAbort();
          else options.signal.addEventListener("abort", onAbort, { once: true });
        });
      },
    };
  }

  return {
    connect,
    router,
    answer({ clientId, userId, promptId, answer, decline }) {
      const p = pending.get(promptId);
      // Another tab's question and a question that is over get the same answer.
      if (!p || p.clientId !== clientId || p.userId !== userId) {
        throw new AppError("NOT_FOUND", "this question is not waiting for this tab any more");
      }
      if (decline) p.settle("declined");
      else p.settle("answered", checkAnswer(p.prompt.call, p.prompt.args, answer));
      return { ok: true };
    },
    connected: () => connections.size,
  };
}

/** The process's console clients (the playground router and its runs share them). */
export function getConsoleClients(): ConsoleClients {
  return processSingleton("consoleClients", () => createConsoleClients());
}
