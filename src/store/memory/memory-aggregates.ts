import {
  type DeliveryAggregates,
  HOOK_BUCKET_MS,
  LATENCY_BINS,
  type LastDelivery,
  latencyBin,
  mergeBuckets,
  type OutcomeBucket,
  type OutcomeTotals,
  OWNER_BUCKET_MS,
} from '../delivery-aggregates.js';
import type { AttemptRecord, DeliveryRecord } from '../delivery-store.js';

/** What the memory store lets its aggregates read. */
export interface MemoryDeliveryView {
  deliveries(): Iterable<DeliveryRecord>;
  ofHook(hookId: string): Iterable<DeliveryRecord> | undefined;
  attempts(deliveryId: string): readonly AttemptRecord[] | undefined;
}

/**
 * The console's aggregates over the in-memory deliveries of `Persist: false` hooks, computed by
 * scanning: they are capped per hook and gone at a restart, so there is no rollup to keep.
 */
export class MemoryAggregates implements DeliveryAggregates {
  constructor(private readonly view: MemoryDeliveryView) {}

  private *owned(owner: string): Iterable<DeliveryRecord> {
    for (const d of this.view.deliveries()) if (d.owner === owner) yield d;
  }

  async totals(owner: string, since: number): Promise<OutcomeTotals> {
    const t: OutcomeTotals = { succeeded: 0, failed: 0, attempts: 0, attemptsOk: 0 };
    for (const d of this.owned(owner)) {
      if (floor(d.created, OWNER_BUCKET_MS) >= since) {
        if (d.status === 'succeeded') t.succeeded++;
        else if (d.status === 'failed') t.failed++;
      }
      for (const a of this.view.attempts(d.id) ?? []) {
        if (floor(a.time, OWNER_BUCKET_MS) < since) continue;
        t.attempts++;
        if (a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300) t.attemptsOk++;
      }
    }
    return t;
  }

  async latency(owner: string, since: number): Promise<number[]> {
    const h = new Array<number>(LATENCY_BINS).fill(0);
    for (const d of this.owned(owner))
      for (const a of this.view.attempts(d.id) ?? [])
        if (floor(a.time, OWNER_BUCKET_MS) >= since) h[latencyBin(a.latencyMs)]!++;
    return h;
  }

  async series(owner: string, since: number): Promise<OutcomeBucket[]> {
    return outcomes(this.owned(owner), since, OWNER_BUCKET_MS);
  }

  async pending(owner: string): Promise<{ count: number; oldest: number | null }> {
    let count = 0;
    let oldest: number | null = null;
    for (const d of this.owned(owner)) {
      if (d.status !== 'pending') continue;
      count++;
      if (oldest === null || d.created < oldest) oldest = d.created;
    }
    return { count, oldest };
  }

  async hookSeries(hookIds: readonly string[], since: number): Promise<Map<string, OutcomeBucket[]>> {
    const out = new Map<string, OutcomeBucket[]>();
    for (const id of hookIds) {
      const list = this.view.ofHook(id);
      if (list) out.set(id, outcomes(list, since, HOOK_BUCKET_MS));
    }
    return out;
  }

  async lastDeliveries(hookIds: readonly string[]): Promise<Map<string, LastDelivery>> {
    const out = new Map<string, LastDelivery>();
    for (const id of hookIds) {
      let last: DeliveryRecord | undefined;
      for (const d of this.view.ofHook(id) ?? []) if (!last || d.id > last.id) last = d;
      if (last)
        out.set(id, { status: last.status, lastStatusCode: last.lastStatusCode, created: last.created });
    }
    return out;
  }
}

function floor(t: number, width: number): number {
  return t - (t % width);
}

function outcomes(list: Iterable<DeliveryRecord>, since: number, width: number): OutcomeBucket[] {
  const buckets: OutcomeBucket[] = [];
  for (const d of list) {
    const bucket = floor(d.created, width);
    if (bucket < since || d.status === 'pending') continue;
    buckets.push({
      bucket,
      succeeded: d.status === 'succeeded' ? 1 : 0,
      failed: d.status === 'failed' ? 1 : 0,
    });
  }
  return mergeBuckets(buckets);
}
