/**
 * The one spelling distance of the project: "did you mean" for a mistyped command (`cli/main.ts`) and for a view prefix
 * under which nothing is served (`server/visibility.ts`).
 */

/**
 * Levenshtein distance of `a` and `b`: insertions, deletions and substitutions of UTF-16 code units.
 *
 * @param limit a bound the caller cares about: once the distance is sure to reach it, `limit` is returned early.
 * @returns the distance, or `limit` when it is at least `limit`.
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) >= limit) return limit;
  let row = Array.from({ length: b.length + 1 }, (_, at) => at);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const value = Math.min(
        (row[j] as number) + 1,
        (next[j - 1] as number) + 1,
        (row[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      next.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin >= limit) return limit;
    row = next;
  }
  return Math.min(row[b.length] as number, limit);
}
