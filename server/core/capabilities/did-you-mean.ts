/** "Did you mean" hints: the closest candidates by edit distance. */

export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** Up to `max` candidates close to `input` (case-insensitive), best first. */
function closestMatches(input: string, candidates: readonly string[], max = 3): string[] {
  const needle = input.toLowerCase();
  const limit = Math.max(2, Math.floor(needle.length / 3));
  return candidates
    .map((c) => {
      const hay = c.toLowerCase();
      const d = hay.includes(needle) || needle.includes(hay) ? 1 : editDistance(needle, hay);
      return { c, d };
    })
    .filter((x) => x.d <= limit)
    .sort((x, y) => x.d - y.d || x.c.localeCompare(y.c))
    .slice(0, max)
    .map((x) => x.c);
}

/** ` (did you mean "a" or "b"?)` or an empty string. */
export function didYouMean(
  input: string,
  candidates: readonly string[],
  quote: (s: string) => string = (s) => `"${s}"`,
): string {
  const hits = closestMatches(input, candidates);
  if (hits.length === 0) return "";
  return ` (did you mean ${hits.map(quote).join(" or ")}?)`;
}
