/**
 * The console's rollups (delivery-aggregates.ts) as a batch changes them, counted in memory by
 * the store's writer while it writes the batch and added to the rollup tables once per batch: a
 * few upserts per commit however many deliveries it carries, rather than a trigger's upserts per
 * row that look up an owner the writer has at hand.
 */
import { HOOK_BUCKET_MS, latencyBin, OWNER_BUCKET_MS } from './delivery-aggregates.js';
import type { AttemptRecord, DeliveryStatus } from './delivery-store.js';

/** What a delivery's outcome is filed under: the rollups key it by owner, hook and creation. */
export interface RollupKey {
  owner: string;
  hookId: string;
  created: number;
}

export interface OwnerCell {
  owner: string;
  bucket: number;
  succeeded: number;
  failed: number;
  attempts: number;
  attemptsOk: number;
}

export interface LatencyCell {
  owner: string;
  bucket: number;
  bin: number;
  n: number;
}

export interface HookCell {
  hookId: string;
  bucket: number;
  succeeded: number;
  failed: number;
}

const won = (s: DeliveryStatus | undefined): number => (s === 'succeeded' ? 1 : 0);
const lost = (s: DeliveryStatus | undefined): number => (s === 'failed' ? 1 : 0);

export class RollupDelta {
  readonly owners = new Map<string, OwnerCell>();
  readonly latency = new Map<string, LatencyCell>();
  readonly hooks = new Map<string, HookCell>();

  get empty(): boolean {
    return this.owners.size === 0 && this.hooks.size === 0;
  }

  /** A delivery went from `from` (undefined: it is new) to `to`. */
  outcome(k: RollupKey, from: DeliveryStatus | undefined, to: DeliveryStatus): void {
    const ds = won(to) - won(from);
    const df = lost(to) - lost(from);
    if (ds === 0 && df === 0) return;
    const o = this.owner(k.owner, k.created - (k.created % OWNER_BUCKET_MS));
    o.succeeded += ds;
    o.failed += df;
    const hb = k.created - (k.created % HOOK_BUCKET_MS);
    const hk = `${k.hookId}\n${hb}`;
    let h = this.hooks.get(hk);
    if (h === undefined) {
      h = { hookId: k.hookId, bucket: hb, succeeded: 0, failed: 0 };
      this.hooks.set(hk, h);
    }
    h.succeeded += ds;
    h.failed += df;
  }

  /** An attempt of a delivery of `owner`, filed under the bucket of its time. */
  attempt(owner: string, a: AttemptRecord): void {
    const bucket = a.time - (a.time % OWNER_BUCKET_MS);
    const o = this.owner(owner, bucket);
    o.attempts++;
    if (a.statusCode !== null && a.statusCode >= 200 && a.statusCode <= 299) o.attemptsOk++;
    const bin = latencyBin(a.latencyMs);
    const lk = `${owner}\n${bucket}\n${bin}`;
    const l = this.latency.get(lk);
    if (l === undefined) this.latency.set(lk, { owner, bucket, bin, n: 1 });
    else l.n++;
  }

  private owner(owner: string, bucket: number): OwnerCell {
    const key = `${owner}\n${bucket}`;
    let o = this.owners.get(key);
    if (o === undefined) {
      o = { owner, bucket, succeeded: 0, failed: 0, attempts: 0, attemptsOk: 0 };
      this.owners.set(key, o);
    }
    return o;
  }
}
