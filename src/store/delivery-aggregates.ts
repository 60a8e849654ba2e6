/**
 * What the web console's overview and hook list show, computed by the store from rollups that
 * its own triggers keep up to date as deliveries and attempts are written (docs/DECISIONS.md
 * "Console aggregates"): reading them costs a few index range scans, however many deliveries
 * are stored. Times are epoch milliseconds.
 *
 * Outcomes count deliveries by their current status and are filed under the 5-minute bucket of
 * their creation (a redelivery moves a delivery out of "failed" and, once it succeeds, into
 * "succeeded"); attempts and their latencies are filed under the bucket of the attempt.
 */

/** Width of an owner's rollup bucket (outcomes, attempts, latency histogram). */
export const OWNER_BUCKET_MS = 5 * 60_000;
/** Width of a hook's rollup bucket (its sparkline). */
export const HOOK_BUCKET_MS = 60 * 60_000;

/**
 * Upper bounds of the latency histogram's bins, in ms; one more bin holds everything above the
 * last. Roughly three bins per decade: a percentile is known to within its bin, interpolated.
 */
export const LATENCY_BOUNDS_MS = [
  1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500, 2000, 3000, 5000, 7000,
  10000, 15000, 20000, 30000,
] as const;
export const LATENCY_BINS = LATENCY_BOUNDS_MS.length + 1;

/** The bin of a latency (JS side; the SQL side is `latencyBinSql`). */
export function latencyBin(ms: number): number {
  for (let i = 0; i < LATENCY_BOUNDS_MS.length; i++) if (ms <= LATENCY_BOUNDS_MS[i]!) return i;
  return LATENCY_BOUNDS_MS.length;
}

/** The same bin as an SQL expression over a latency column (SQLite and PostgreSQL alike). */
export function latencyBinSql(col: string): string {
  const whens = LATENCY_BOUNDS_MS.map((b, i) => `WHEN ${col} <= ${b} THEN ${i}`).join(' ');
  return `(CASE ${whens} ELSE ${LATENCY_BOUNDS_MS.length} END)`;
}

/**
 * The q-th quantile (0..1) from histogram counts, linearly interpolated inside its bin; null
 * without data. The open last bin answers its lower bound.
 */
export function quantile(hist: readonly number[], q: number): number | null {
  let total = 0;
  for (const n of hist) total += n;
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    const n = hist[i]!;
    if (n > 0 && seen + n >= rank) {
      const lo = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
      const hi = LATENCY_BOUNDS_MS[i];
      if (hi === undefined) return lo;
      return lo + ((hi - lo) * Math.max(0, rank - seen)) / n;
    }
    seen += n;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
}

export interface OutcomeTotals {
  succeeded: number;
  failed: number;
  attempts: number;
  attemptsOk: number;
}

export interface OutcomeBucket {
  /** Start of the bucket. */
  bucket: number;
  succeeded: number;
  failed: number;
}

export interface LastDelivery {
  status: 'pending' | 'succeeded' | 'failed';
  lastStatusCode: number | null;
  created: number;
}

export interface DeliveryAggregates {
  /** An owner's outcome and attempt totals over buckets starting at or after `since`. */
  totals(owner: string, since: number): Promise<OutcomeTotals>;
  /** An owner's attempt-latency histogram (LATENCY_BINS counts) over buckets from `since`. */
  latency(owner: string, since: number): Promise<number[]>;
  /** An owner's outcomes per 5-minute bucket from `since`, oldest first; empty buckets absent. */
  series(owner: string, since: number): Promise<OutcomeBucket[]>;
  /** An owner's pending deliveries: how many and when the oldest was created. */
  pending(owner: string): Promise<{ count: number; oldest: number | null }>;
  /** Hourly outcomes of these hooks from `since`. */
  hookSeries(hookIds: readonly string[], since: number): Promise<Map<string, OutcomeBucket[]>>;
  /** Each hook's newest delivery. */
  lastDeliveries(hookIds: readonly string[]): Promise<Map<string, LastDelivery>>;
}

/** Sums what several stores answer (durable and ephemeral deliveries). */
export class CombinedAggregates implements DeliveryAggregates {
  constructor(private readonly parts: readonly DeliveryAggregates[]) {}

  async totals(owner: string, since: number): Promise<OutcomeTotals> {
    const all = await Promise.all(this.parts.map((p) => p.totals(owner, since)));
    const t: OutcomeTotals = { succeeded: 0, failed: 0, attempts: 0, attemptsOk: 0 };
    for (const a of all) {
      t.succeeded += a.succeeded;
      t.failed += a.failed;
      t.attempts += a.attempts;
      t.attemptsOk += a.attemptsOk;
    }
    return t;
  }

  async latency(owner: string, since: number): Promise<number[]> {
    const all = await Promise.all(this.parts.map((p) => p.latency(owner, since)));
    const h = new Array<number>(LATENCY_BINS).fill(0);
    for (const a of all) for (let i = 0; i < LATENCY_BINS; i++) h[i]! += a[i] ?? 0;
    return h;
  }

  async series(owner: string, since: number): Promise<OutcomeBucket[]> {
    const all = await Promise.all(this.parts.map((p) => p.series(owner, since)));
    return mergeBuckets(all.flat());
  }

  async pending(owner: string): Promise<{ count: number; oldest: number | null }> {
    const all = await Promise.all(this.parts.map((p) => p.pending(owner)));
    let count = 0;
    let oldest: number | null = null;
    for (const a of all) {
      count += a.count;
      if (a.oldest !== null && (oldest === null || a.oldest < oldest)) oldest = a.oldest;
    }
    return { count, oldest };
  }

  async hookSeries(hookIds: readonly string[], since: number): Promise<Map<string, OutcomeBucket[]>> {
    const all = await Promise.all(this.parts.map((p) => p.hookSeries(hookIds, since)));
    const out = new Map<string, OutcomeBucket[]>();
    for (const m of all)
      for (const [id, list] of m) out.set(id, mergeBuckets([...(out.get(id) ?? []), ...list]));
    return out;
  }

  async lastDeliveries(hookIds: readonly string[]): Promise<Map<string, LastDelivery>> {
    const all = await Promise.all(this.parts.map((p) => p.lastDeliveries(hookIds)));
    const out = new Map<string, LastDelivery>();
    for (const m of all)
      for (const [id, d] of m) {
        const had = out.get(id);
        if (!had || had.created < d.created) out.set(id, d);
      }
    return out;
  }
}

/** Adds up buckets with the same start; oldest first. */
export function mergeBuckets(list: readonly OutcomeBucket[]): OutcomeBucket[] {
  const by = new Map<number, OutcomeBucket>();
  for (const b of list) {
    const had = by.get(b.bucket);
    if (had) {
      had.succeeded += b.succeeded;
      had.failed += b.failed;
    } else by.set(b.bucket, { ...b });
  }
  return [...by.values()].sort((a, b) => a.bucket - b.bucket);
}

/** A rollup row as both dialects answer it: the same columns (PostgreSQL's bigints as strings). */
type Row = Record<string, unknown>;

export function bucketFromRow(r: Row): OutcomeBucket {
  return { bucket: Number(r.bucket), succeeded: Number(r.succeeded), failed: Number(r.failed) };
}

/** From `count(*) AS n, min(created) AS oldest` over an owner's pending deliveries. */
export function pendingFromRow(r: Row): { count: number; oldest: number | null } {
  return { count: Number(r.n), oldest: r.oldest === null ? null : Number(r.oldest) };
}

export function lastDeliveryFromRow(r: Row): LastDelivery {
  return {
    status: r.status as LastDelivery['status'],
    lastStatusCode: r.last_status as number | null,
    created: Number(r.created),
  };
}
