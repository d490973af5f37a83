/**
 * Naming rules shared by validation, publishing and the registry: a folder name is the toolset
 * name and the module name (`toolsets/weather` is `toolstore/weather`).
 */
export const TOOLSET_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,62}[a-z0-9]$|^[a-z]$/;

/**
 * Module names of the built-in platform modules (server/core/capabilities/builtins); a toolset
 * cannot take them. Extend this list with every new built-in module.
 */
export const RESERVED_MODULE_NAMES: readonly string[] = ["store", "assets", "http", "skills", "toolstore"];

export function isValidToolsetName(name: string): boolean {
  return TOOLSET_NAME_PATTERN.test(name);
}

/** Wire name of a binding: `weather.get_weather`. */
export function capabilityName(toolset: string, binding: string): string {
  return `${toolset}.${binding}`;
}

/** Nearest candidates by edit distance, for "did you mean" hints. */
export function closestNames(wanted: string, candidates: readonly string[], max = 3): string[] {
  const scored = candidates
    .map((c) => ({ c, d: editDistance(wanted.toLowerCase(), c.toLowerCase()) }))
    .filter(({ c, d }) => d <= Math.max(2, Math.floor(c.length / 3)))
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c));
  return scored.slice(0, max).map(({ c }) => c);
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}
