/** Edit distance (insert, delete, substitute, swap of neighbours), capped: names are short. */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array.from({ length: b.length }, (_, j) => (i === 0 ? j + 1 : 0))]);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i] as number[];
      const above = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = best;
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/** Longest input compared: a typo is short; anything longer gets no suggestion. */
const comparedMax = 64;

/**
 * The candidate a mistyped `word` most likely meant ("verfy" → "verify"), or undefined when none is
 * close: within a third of its length in edits (at least 1, at most 3), or one starts the other.
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  if (word.length === 0 || word.length > comparedMax) return undefined;
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    const d = distance(word.toLowerCase(), name.toLowerCase());
    if (best === undefined || d < best.d) best = { name, d };
  }
  if (best === undefined) return undefined;
  const allowed = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  if (best.d <= allowed) return best.name;
  const prefix = candidates.find((c) => word.length >= 3 && (c.startsWith(word) || word.startsWith(c)));
  return prefix;
}
