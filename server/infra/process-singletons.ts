/**
 * The one place that holds a process's singletons (the Prisma client, the engine, the event bus,
 * the Python runtime, the instance channel, the MCP handlers). They live on globalThis so that
 * Next.js's separately bundled route handlers and a dev server's reloads share one of each.
 */
type Holder = typeof globalThis & { __toolstoreSingletons?: Map<string, unknown> };

function singletons(): Map<string, unknown> {
  const holder = globalThis as Holder;
  holder.__toolstoreSingletons ??= new Map();
  return holder.__toolstoreSingletons;
}

/** The process's one `name`, created on first use. */
export function processSingleton<T>(name: string, create: () => T): T {
  const all = singletons();
  if (!all.has(name)) all.set(name, create());
  return all.get(name) as T;
}

/** Whether `name` was created (a shutdown closes only what exists). */
export function peekProcessSingleton<T>(name: string): T | undefined {
  return singletons().get(name) as T | undefined;
}

/** Forgets `name` if it is still `value` (a failed start is retried on the next use). */
export function dropProcessSingleton(name: string, value: unknown): void {
  const all = singletons();
  if (all.get(name) === value) all.delete(name);
}
