/**
 * The delivery log: every delivery with its attempts (time, status, latency, error, the first
 * 4 KiB of the response), read across both stores, and kept for a bounded time and number per
 * hook. Retention runs periodically in small chunks, so pruning a large backlog never stalls the
 * event loop for long.
 */
import type { Logger } from 'pino';
import type { AttemptRecord, DeliveryQuery, DeliveryRecord, DeliveryStore } from '../store/index.js';
import type { RecordedAttempt } from './attempt-result.js';
import type { Delivery } from './delivery.js';

export interface RetentionOptions {
  /** Finished deliveries older than this are removed, ms (default 7 days). */
  maxAgeMs: number;
  /** At most this many deliveries are kept per hook; pending ones are never removed (default 10,000). */
  maxPerHook: number;
  /** How often retention runs, ms (default 1 min); 0 turns periodic pruning off. */
  intervalMs: number;
  /** Deliveries removed per transaction (default 2,000). */
  chunk: number;
}

export const DEFAULT_RETENTION: RetentionOptions = Object.freeze({
  maxAgeMs: 7 * 24 * 60 * 60 * 1000,
  maxPerHook: 10_000,
  intervalMs: 60 * 1000,
  chunk: 2000,
});

export interface DeliveryPage {
  items: DeliveryRecord[];
  /** The Id to pass as `after` for the next page; absent on the last page. */
  next?: string;
}

/** The log record of one attempt. */
export function attemptRecord(
  d: Delivery,
  attempt: number,
  time: number,
  r: RecordedAttempt,
  rateWaitMs: number,
): AttemptRecord {
  const a: AttemptRecord = {
    deliveryId: d.id,
    hookId: d.hookId,
    attempt,
    time,
    statusCode: r.statusCode,
    latencyMs: r.latencyMs,
    error: r.error,
    responseBody: r.responseBody,
  };
  // Set only when there was a wait (a literal with a conditional spread costs a copy per attempt).
  if (rateWaitMs > 0) a.rateLimitWaitMs = Math.round(rateWaitMs * 100) / 100;
  return a;
}

/** Deliveries the stores refused to take yet (held in the outbox's buffer). */
export interface UnwrittenDeliveries {
  readonly buffered: number;
  unwritten(id: string): Delivery | undefined;
  unwrittenOf(hookId: string): Iterable<Delivery>;
}

const NONE: UnwrittenDeliveries = {
  buffered: 0,
  unwritten: () => undefined,
  unwrittenOf: () => [],
};

const byIdDescending = (a: DeliveryRecord, b: DeliveryRecord): number =>
  a.id < b.id ? 1 : a.id > b.id ? -1 : 0;

export class DeliveryLog {
  private timer: NodeJS.Timeout | undefined;
  private pruning: Promise<number> | undefined;
  private stopped = false;

  constructor(
    private readonly durable: DeliveryStore,
    private readonly ephemeral: DeliveryStore,
    /** Deliveries held in memory: their state there is newer than the stores' by up to one commit. */
    private readonly live: { get(id: string): Delivery | undefined },
    private readonly buffer: UnwrittenDeliveries = NONE,
    readonly retention: RetentionOptions = DEFAULT_RETENTION,
    private readonly log?: Logger,
  ) {}

  /** A hook's deliveries, newest first. A hook whose Persist flag flipped has some in each store. */
  async list(hookId: string, query: DeliveryQuery = {}): Promise<DeliveryPage> {
    const sub = query.limit === undefined ? query : { ...query, limit: query.limit + 1 };
    const merged = [
      ...(await this.durable.listDeliveries(hookId, sub)),
      ...(await this.ephemeral.listDeliveries(hookId, sub)),
    ].map((r) => this.live.get(r.id) ?? r);
    // Held in memory while the store refuses writes: shown too (their `Durable` is false).
    if (this.buffer.buffered > 0) {
      for (const d of this.buffer.unwrittenOf(hookId)) if (matches(d, query)) merged.push(d);
    }
    merged.sort(byIdDescending);
    if (query.limit === undefined || merged.length <= query.limit) return { items: merged };
    const items = merged.slice(0, query.limit);
    return { items, next: items[items.length - 1]!.id };
  }

  /** One delivery and which store holds it. */
  async get(id: string): Promise<{ record: DeliveryRecord; persist: boolean } | undefined> {
    const live = this.live.get(id) ?? this.buffer.unwritten(id);
    if (live) return { record: live, persist: live.persist };
    const durable = await this.durable.getDelivery(id);
    if (durable) return { record: durable, persist: true };
    const ephemeral = await this.ephemeral.getDelivery(id);
    return ephemeral && { record: ephemeral, persist: false };
  }

  async attempts(id: string, persist: boolean): Promise<AttemptRecord[]> {
    // Not in the store yet: its attempts are not either (they are buffered with it).
    if (this.buffer.buffered > 0 && this.buffer.unwritten(id) !== undefined) return [];
    return (persist ? this.durable : this.ephemeral).listAttempts(id);
  }

  /**
   * Applies retention to both stores, chunk by chunk, yielding to the event loop between chunks.
   * Returns how many deliveries were removed.
   */
  prune(now: number = Date.now()): Promise<number> {
    // One run at a time: a slow run and the next tick must not prune the same rows twice.
    this.pruning ??= this.pruneAll(now).finally(() => {
      this.pruning = undefined;
    });
    return this.pruning;
  }

  /** Runs `prune` every `intervalMs` until `stop`. */
  start(): void {
    if (this.retention.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      this.prune().catch((err: unknown) => this.log?.error({ err }, 'pruning the delivery log failed'));
    }, this.retention.intervalMs);
    this.timer.unref();
  }

  /** Stops periodic pruning; resolves when a run in progress has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.pruning?.catch(() => undefined);
  }

  private async pruneAll(now: number): Promise<number> {
    const rule = {
      olderThan: now - this.retention.maxAgeMs,
      maxPerHook: this.retention.maxPerHook,
      limit: this.retention.chunk,
    };
    let total = 0;
    for (const store of [this.durable, this.ephemeral]) {
      for (;;) {
        const n = await store.prune(rule);
        total += n;
        if (n < rule.limit || this.stopped) break;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    if (total > 0) this.log?.info({ removed: total }, 'delivery log pruned');
    return total;
  }
}

function matches(d: DeliveryRecord, q: DeliveryQuery): boolean {
  return (
    (q.status === undefined || d.status === q.status) &&
    (q.since === undefined || d.created >= q.since) &&
    (q.until === undefined || d.created <= q.until) &&
    (q.after === undefined || d.id < q.after) &&
    (q.pathPrefix === undefined || d.trigger.path.startsWith(q.pathPrefix)) &&
    (q.receiverStatus === undefined ||
      (d.lastStatusCode !== null &&
        d.lastStatusCode >= q.receiverStatus[0] &&
        d.lastStatusCode <= q.receiverStatus[1]))
  );
}
