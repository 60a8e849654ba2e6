/** The closest known name to a misspelt one (case-insensitive equality first, then edit distance ≤ 2). */
export function suggest(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const exact = known.find((k) => k.toLowerCase() === lower);
  if (exact) return exact;
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known) {
    const d = distance(lower, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * `; did you mean X?` when a value a user typed is close to one of a closed list (and is not
 * that value), else the empty string: the tail of every "must be one of …" message.
 */
export function didYouMean(value: unknown, known: readonly string[]): string {
  if (typeof value !== 'string' || value === '') return '';
  const near = suggest(value, known);
  return near === undefined || near === value ? '' : `; did you mean ${near}?`;
}
