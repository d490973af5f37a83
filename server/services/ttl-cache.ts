/**
 * A small read-through cache for rows that are checked on every request (API keys, MCP
 * sessions): each key is loaded at most once per `ttlMs`, concurrent reads of one key share the
 * load, a failed load is not kept, and the map stays under `max` entries.
 */
export interface TtlCache<V> {
  get(key: string, load: () => Promise<V>): Promise<V>;
  forget(key: string): void;
  clear(): void;
}

export function createTtlCache<V>(ttlMs: number, max = 10_000): TtlCache<V> {
  const entries = new Map<string, { until: number; value: Promise<V> }>();
  return {
    get(key, load) {
      const now = Date.now();
      const hit = entries.get(key);
      if (hit && hit.until > now) return hit.value;
      if (entries.size >= max) {
        for (const [k, v] of entries) if (v.until <= now) entries.delete(k);
        if (entries.size >= max) entries.clear();
      }
      const value = load();
      const entry = { until: now + ttlMs, value };
      entries.set(key, entry);
      value.catch(() => {
        if (entries.get(key) === entry) entries.delete(key);
      });
      return value;
    },
    forget(key) {
      entries.delete(key);
    },
    clear() {
      entries.clear();
    },
  };
}
