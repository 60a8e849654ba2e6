/** Small statistics for benchmark rounds: medians with their spread, percentiles, ratios. */

export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** Median, min and max of the rounds (NaN for none, so a missing figure cannot pass a target). */
export function spread(xs: readonly number[]): Spread {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  return { median: percentileSorted(s, 50), min: s[0]!, max: s[s.length - 1]! };
}

/** The p-th percentile (0–100) of sorted values, linearly interpolated between neighbours. */
export function percentileSorted(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

/** p50 and p99 of unsorted samples. */
export function percentiles(samples: readonly number[]): { p50: number; p99: number; n: number } {
  const s = Float64Array.from(samples).sort();
  const arr = Array.from(s);
  return { p50: percentileSorted(arr, 50), p99: percentileSorted(arr, 99), n: arr.length };
}

/**
 * Ratio of two contenders measured in the same rounds: the ratio of their medians, with the
 * spread of the per-round ratios (round i of `a` over round i of `b`).
 */
export function ratio(a: readonly number[], b: readonly number[]): Spread {
  const perRound: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) perRound.push(a[i]! / b[i]!);
  const r = spread(perRound);
  return { median: spread(a).median / spread(b).median, min: r.min, max: r.max };
}

/** Per-round differences a[i] − b[i], as a spread (e.g. the p99 a proxy adds). */
export function difference(a: readonly number[], b: readonly number[]): Spread {
  const d: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) d.push(a[i]! - b[i]!);
  return spread(d);
}

/** A number with a fixed count of significant-looking decimals for tables. */
export function fmt(n: number, digits = 1): string {
  if (!Number.isFinite(n)) return '—';
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** `median (min–max)` with one formatter for all three. */
export function fmtSpread(s: Spread, f: (n: number) => string = (n) => fmt(n)): string {
  if (!Number.isFinite(s.median)) return '—';
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

/** A plain-text table with padded columns (also valid Markdown: pipes and a separator row). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (c ?? '').padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
