/**
 * Group commit of one store's writes: everything queued for a store
 * during one turn of the event loop (new deliveries, and the state changes and attempt records of
 * a few milliseconds) goes out as one transaction, so a burst of a thousand callbacks pays one
 * commit, not a thousand (PERF-NOTES "Recording deliveries"); a write the store refuses is held
 * and retried.
 */
import type { Logger } from 'pino';
import type { StoreHealth } from '../store/index.js';
import { type AttemptRecord, type DeliveryStore, describeStoreFault, isStoreFault } from '../store/index.js';
import type { Delivery } from './delivery.js';
import { recordOf, WriteBatch } from './write-batch.js';

type Waiter = { resolve: () => void; reject: (err: Error) => void };

/**
 * Time this outbox's store spent writing, and the new deliveries those writes recorded, since
 * start: what one recorded callback costs the store (its insert and every later write of its
 * state and attempts), read by the dispatch bench.
 */
export interface StoreTime {
  /** Nanoseconds inside the store's `write`, every batch (taken or refused). */
  ns: number;
  /** New deliveries in the batches it took. */
  callbacks: number;
}

/** µs of store time per recorded callback; 0 before the first. */
export const storeMicrosPerCallback = (t: StoreTime): number =>
  t.callbacks === 0 ? 0 : t.ns / 1000 / t.callbacks;

/** How long attempt outcomes may wait to be written together with others, ms. */
export const OUTCOME_DELAY_MS = 5;
// Outcomes waiting beyond this many are written at once rather than after the delay.
const OUTCOME_BATCH = 512;
/** Default size of the store-fault buffer: deliveries fired while the store refuses writes. */
export const DEFAULT_FAULT_BUFFER = 10_000;
// Retries of the buffered writes while the store refuses them: 0.5 s doubling to 5 s.
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 5000;

export interface GroupCommitOptions {
  log?: Logger | undefined;
  /** Told of refused and successful writes (readiness); `source` names this outbox there. */
  health?: StoreHealth | undefined;
  source?: string;
  /** Deliveries the buffer holds at most while the store refuses writes (default 10,000). */
  bufferLimit?: number;
}

/**
 * Collects one store's writes and commits them as one batch at a time. New deliveries are
 * committed at the end of the current event-loop turn (their first attempt waits for it);
 * attempt outcomes may wait a few milliseconds to join more of their kind, because callbacks
 * complete one by one, and a lost outcome only means one more attempt after a crash.
 *
 * A write the store refuses with a store fault (disk full, read-only, database down) is not
 * lost: its batch is kept in memory (the buffer), later writes join it, and it is written again
 * every few seconds until the store takes it. Buffered deliveries are sent meanwhile, and marked
 * `buffered` (not yet durable). The buffer holds at most `bufferLimit` new deliveries: callbacks
 * fired beyond that while the store refuses writes are dropped and counted (`dropped`).
 */
export class GroupCommit {
  private batch = new WriteBatch();
  private inserted: Delivery[] = [];
  private waiters: Waiter[] = [];
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private writing = false;
  /** The running commit loop, so a flush of an empty batch can wait for the write in progress. */
  private current: Promise<void> | undefined;
  /** Writes the store refused, oldest first, merged into one batch; undefined while it takes them. */
  private held: WriteBatch | undefined;
  /**
   * The buffered new deliveries by Id, live: the delivery log shows their current state and that
   * they are not yet durable until they are written. The store sees only the held snapshots.
   */
  readonly unwritten = new Map<string, Delivery>();
  private retryMs = RETRY_FIRST_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly log: Logger | undefined;
  private readonly health: StoreHealth | undefined;
  private readonly source: string;
  readonly bufferLimit: number;
  /** Fired callbacks dropped because the buffer was full, since start. */
  dropped = 0;
  /** Deliveries that were buffered and later written through, since start. */
  writtenThrough = 0;
  readonly storeTime: StoreTime = { ns: 0, callbacks: 0 };

  constructor(
    readonly store: DeliveryStore,
    /** Told, after each commit, which new deliveries it recorded (they may be attempted now). */
    private readonly onRecorded: (deliveries: Delivery[]) => void,
    opts: GroupCommitOptions = {},
  ) {
    this.log = opts.log;
    this.health = opts.health;
    this.source = opts.source ?? store.kind;
    this.bufferLimit = opts.bufferLimit ?? DEFAULT_FAULT_BUFFER;
  }

  /** True when nothing waits to be written. */
  get idle(): boolean {
    return !this.writing && this.batchEmpty() && this.held === undefined;
  }

  /** True while the store refuses this outbox's writes (its writes are being buffered). */
  get faulted(): boolean {
    return this.held !== undefined;
  }

  /** New deliveries held in memory only, waiting for the store to take them. */
  get buffered(): number {
    return this.unwritten.size;
  }

  /** Whether a new delivery may be taken: false when the store refuses writes and the buffer is full. */
  get accepting(): boolean {
    return this.held === undefined || this.unwritten.size + this.batch.inserts.length < this.bufferLimit;
  }

  /** Queues the new delivery's record as it is now; a change before the commit replaces it. */
  insert(d: Delivery): void {
    this.batch.insert(recordOf(d));
    this.inserted.push(d);
    this.soon();
  }

  /** Queues a write of the delivery's state as it is now (the batch's last one of it is written). */
  update(d: Delivery): void {
    this.batch.change(d);
    this.later();
  }

  /**
   * An attempt's outcome: its record and the delivery's new state, queued together for the same
   * commit: one write per outcome, and a store writes a batch's outcomes together.
   */
  outcome(d: Delivery, a: AttemptRecord): void {
    this.batch.attempts.push(a);
    this.batch.change(d);
    this.later();
  }

  deleteHook(hookId: string): void {
    this.batch.deletedHooks.push(hookId);
    this.soon();
  }

  /**
   * Resolves once everything queued so far is committed, or buffered because the store refuses
   * writes (then `faulted` is true); rejects if the commit failed for another reason.
   */
  flush(): Promise<void> {
    if (this.batchEmpty()) return this.current ?? Promise.resolve();
    const p = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.writing) this.run();
    return p;
  }

  /**
   * Like `flush`, without hurrying the commit: resolves with the commit that takes what is queued
   * now, at the end of this event-loop turn, so that many callers share one commit.
   */
  settled(): Promise<void> {
    if (this.batchEmpty()) return this.current ?? Promise.resolve();
    const p = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.soon();
    return p;
  }

  /** Commit at the end of this event-loop turn. */
  private soon(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    setImmediate(this.run);
  }

  /** Commit within OUTCOME_DELAY_MS, or sooner when enough has gathered. */
  private later(): void {
    if (this.scheduled || this.writing) return;
    if (this.batch.updates.length + this.batch.attempts.length >= OUTCOME_BATCH) {
      this.soon();
      return;
    }
    if (this.timer !== undefined) return;
    this.timer = setTimeout(this.run, OUTCOME_DELAY_MS);
    this.timer.unref();
  }

  private readonly run = (): void => {
    this.scheduled = false;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.writing) this.current = this.commit();
  };

  private async commit(): Promise<void> {
    this.writing = true;
    let first = true;
    try {
      // What arrives while a batch is written goes into the next one: right after, when someone
      // waits for it (a new delivery, a deleted hook, a flush); outcomes alone wait out their
      // delay as they would have. A write that returns quickly (the SQLite writer thread's) would
      // otherwise commit every few outcomes, and a commit costs more than the rows in it.
      while (!this.batchEmpty() && (first || this.pressing())) {
        first = false;
        const batch = this.batch;
        const inserted = this.inserted;
        const waiters = this.waiters;
        this.batch = new WriteBatch();
        this.inserted = [];
        this.waiters = [];
        let failure: Error | undefined;
        if (this.held !== undefined) {
          // The store refuses writes: this batch joins the buffer, behind the older ones.
          this.hold(batch, inserted);
        } else {
          try {
            await this.timedWrite(batch);
            this.health?.ok(this.source);
          } catch (err) {
            if (isStoreFault(err)) {
              this.log?.error(
                { err: describeStoreFault(err), store: this.store.kind, deliveries: batch.inserts.length },
                'the store refuses writes: fired callbacks are kept in memory (not yet durable) and sent; they are written when it takes writes again',
              );
              this.health?.fault(this.source, err);
              this.hold(batch, inserted);
            } else {
              failure = err as Error;
              this.log?.error(
                {
                  err,
                  store: this.store.kind,
                  deliveries: batch.inserts.length,
                  updates: batch.updates.length,
                },
                'recording deliveries failed; they are sent anyway but would not survive a restart',
              );
            }
          }
        }
        if (inserted.length > 0) this.onRecorded(inserted);
        for (const w of waiters) {
          if (failure) w.reject(failure);
          else w.resolve();
        }
      }
    } finally {
      this.writing = false;
    }
    if (!this.batchEmpty()) this.later();
  }

  /** Whether what is queued must not wait: someone waits for it, or enough outcomes have gathered. */
  private pressing(): boolean {
    const b = this.batch;
    return (
      b.inserts.length > 0 ||
      b.deletedHooks.length > 0 ||
      this.waiters.length > 0 ||
      b.updates.length + b.attempts.length >= OUTCOME_BATCH
    );
  }

  private async timedWrite(batch: WriteBatch): Promise<void> {
    const t0 = process.hrtime.bigint();
    try {
      await this.store.write(batch);
      this.storeTime.callbacks += batch.inserts.length;
    } finally {
      this.storeTime.ns += Number(process.hrtime.bigint() - t0);
    }
  }

  /** Adds a refused batch to the buffer and arms the retry. */
  private hold(batch: WriteBatch, inserted: readonly Delivery[]): void {
    // Updates of buffered deliveries are written with their insert; of the others, at most once.
    if (this.held === undefined) {
      this.held = batch;
      this.retryMs = RETRY_FIRST_MS;
    } else this.held.absorb(batch);
    for (const d of inserted) {
      d.buffered = true;
      this.unwritten.set(d.id, d);
    }
    this.armRetry();
  }

  private armRetry(): void {
    if (this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(this.retry, this.retryMs);
    this.retryTimer.unref();
  }

  private readonly retry = (): void => {
    this.retryTimer = undefined;
    const held = this.held;
    if (held === undefined) return;
    if (this.writing) {
      this.armRetry();
      return;
    }
    this.writing = true;
    this.current = this.timedWrite(held).then(
      () => {
        this.held = undefined;
        const n = this.unwritten.size;
        for (const d of this.unwritten.values()) d.buffered = false;
        this.unwritten.clear();
        this.writtenThrough += n;
        this.log?.info(
          { store: this.store.kind, deliveries: n },
          'the store takes writes again: buffered deliveries written',
        );
        this.health?.ok(this.source);
        this.writing = false;
        // What queued meanwhile goes now.
        if (!this.batchEmpty()) this.run();
      },
      (err: unknown) => {
        this.writing = false;
        if (isStoreFault(err)) this.health?.fault(this.source, err);
        else this.log?.error({ err }, 'writing buffered deliveries failed; retrying');
        this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
        this.armRetry();
        if (!this.batchEmpty()) this.run();
      },
    );
  };

  /** Stops retrying the buffer (shutdown); what it holds is lost, as the log says. */
  stop(): void {
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.unwritten.size > 0)
      this.log?.warn(
        { store: this.store.kind, deliveries: this.unwritten.size },
        'stopping with deliveries the store never took: they are lost',
      );
  }

  private batchEmpty(): boolean {
    return this.batch.empty;
  }
}
