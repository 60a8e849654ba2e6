/**
 * The outbox: every fired callback is recorded before its first attempt, in the durable store for
 * `Persist: true` hooks and in memory for `Persist: false` ones (SPEC §6), so that whatever was
 * recorded before a crash is delivered after the restart (at-least-once).
 *
 * Writes are group-committed: everything queued for a store during one turn of the event loop
 * (new deliveries, and the state changes and attempt records of a few milliseconds) goes out as
 * one transaction, so a burst of a thousand callbacks pays one commit, not a thousand
 * (PERF-NOTES "Recording deliveries").
 */
import type { Logger } from 'pino';
import type { FiredEvent } from '../engine/fired-event.js';
import { type AttemptRecord, type DeliveryStore, emptyBatch } from '../store/delivery-store.js';
import { Delivery } from './delivery.js';
import { newDeliveryId } from './delivery-id.js';

type Waiter = { resolve: () => void; reject: (err: Error) => void };

/** How long attempt outcomes may wait to be written together with others, ms. */
export const OUTCOME_DELAY_MS = 5;
// Outcomes waiting beyond this many are written at once rather than after the delay.
const OUTCOME_BATCH = 512;

/**
 * Collects one store's writes and commits them as one batch at a time. New deliveries are
 * committed at the end of the current event-loop turn (their first attempt waits for it);
 * attempt outcomes may wait a few milliseconds to join more of their kind, because callbacks
 * complete one by one, and a lost outcome only means one more attempt after a crash.
 */
export class GroupCommit {
  private batch = emptyBatch();
  private inserted: Delivery[] = [];
  private waiters: Waiter[] = [];
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private writing = false;
  /** The running commit loop, so a flush of an empty batch can wait for the write in progress. */
  private current: Promise<void> | undefined;

  constructor(
    readonly store: DeliveryStore,
    /** Told, after each commit, which new deliveries it recorded (they may be attempted now). */
    private readonly onRecorded: (deliveries: Delivery[]) => void,
    private readonly log: Logger | undefined,
  ) {}

  /** True when nothing waits to be written. */
  get idle(): boolean {
    return !this.writing && this.batchEmpty();
  }

  insert(d: Delivery): void {
    // The insert writes the state as it is at commit time, so later changes need no update.
    d.dirty = true;
    this.batch.inserts.push(d);
    this.inserted.push(d);
    this.soon();
  }

  /** Queues a write of the delivery's state as it will be at commit time. */
  update(d: Delivery): void {
    if (!d.dirty) {
      d.dirty = true;
      this.batch.updates.push(d);
    }
    this.later();
  }

  attempt(a: AttemptRecord): void {
    this.batch.attempts.push(a);
    this.later();
  }

  deleteHook(hookId: string): void {
    this.batch.deletedHooks.push(hookId);
    this.soon();
  }

  /** Resolves once everything queued so far is committed (rejects if that commit failed). */
  flush(): Promise<void> {
    if (this.batchEmpty()) return this.current ?? Promise.resolve();
    const p = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.writing) this.run();
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
    try {
      // Whatever arrives while a batch is written goes into the next one, right after.
      while (!this.batchEmpty()) {
        const batch = this.batch;
        const inserted = this.inserted;
        const waiters = this.waiters;
        this.batch = emptyBatch();
        this.inserted = [];
        this.waiters = [];
        for (const d of batch.inserts as Delivery[]) d.dirty = false;
        for (const d of batch.updates as Delivery[]) d.dirty = false;
        let failure: Error | undefined;
        try {
          await this.store.write(batch);
        } catch (err) {
          failure = err as Error;
          this.log?.error(
            { err, store: this.store.kind, deliveries: batch.inserts.length, updates: batch.updates.length },
            'recording deliveries failed; they are sent anyway but would not survive a restart',
          );
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
  }

  private batchEmpty(): boolean {
    const b = this.batch;
    return (
      b.inserts.length === 0 &&
      b.updates.length === 0 &&
      b.attempts.length === 0 &&
      b.deletedHooks.length === 0
    );
  }
}

/** Routes the writes of each delivery to its store and creates deliveries from fired events. */
export class Outbox {
  readonly durable: GroupCommit;
  readonly ephemeral: GroupCommit;

  constructor(
    durable: DeliveryStore,
    ephemeral: DeliveryStore,
    onRecorded: (deliveries: Delivery[]) => void,
    log?: Logger,
  ) {
    this.durable = new GroupCommit(durable, onRecorded, log);
    this.ephemeral = new GroupCommit(ephemeral, onRecorded, log);
  }

  /**
   * Creates and queues one delivery per fired event, due `firstDelay` ms from now. They are handed
   * to `onRecorded` once committed; nothing is attempted before.
   */
  accept(events: readonly FiredEvent[], now: number, firstDelay: (hookId: string) => number): Delivery[] {
    const out = new Array<Delivery>(events.length);
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      const d = Delivery.fromEvent(newDeliveryId(now), e, now);
      d.nextAttempt = now + firstDelay(e.hookId);
      (e.persist ? this.durable : this.ephemeral).insert(d);
      out[i] = d;
    }
    return out;
  }

  commitFor(d: Delivery): GroupCommit {
    return d.persist ? this.durable : this.ephemeral;
  }

  update(d: Delivery): void {
    this.commitFor(d).update(d);
  }

  attempt(d: Delivery, a: AttemptRecord): void {
    this.commitFor(d).attempt(a);
  }

  /** Drops a deleted hook's deliveries, attempts and secret from both stores. */
  deleteHook(hookId: string): void {
    this.durable.deleteHook(hookId);
    this.ephemeral.deleteHook(hookId);
  }

  /** Commits everything queued in both stores. */
  async flush(): Promise<void> {
    await Promise.all([this.durable.flush(), this.ephemeral.flush()]);
  }

  /**
   * The pending deliveries of both stores, to resume at start. A store shared by several
   * instances hands over only those nobody else holds (`claimPending`), claimed for this one.
   */
  async loadPending(): Promise<Delivery[]> {
    const durable = await resumable(this.durable.store);
    const ephemeral = await resumable(this.ephemeral.store);
    const out: Delivery[] = [];
    for (const r of durable) out.push(Delivery.fromRecord(r, true));
    for (const r of ephemeral) out.push(Delivery.fromRecord(r, false));
    return out;
  }
}

const CLAIM_BATCH = 1000;

async function resumable(store: DeliveryStore) {
  if (!store.claimPending) return store.pendingDeliveries();
  const out = [];
  for (;;) {
    const batch = await store.claimPending(CLAIM_BATCH);
    out.push(...batch);
    if (batch.length < CLAIM_BATCH) return out;
  }
}
