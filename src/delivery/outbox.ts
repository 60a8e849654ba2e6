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
import type { FiredEvent } from '../engine/index.js';
import type { AttemptRecord, DeliveryStore } from '../store/index.js';
import { Delivery, type DeliverySource } from './delivery.js';
import { newDeliveryId } from './delivery-id.js';
import { GroupCommit, type GroupCommitOptions } from './group-commit.js';
import type { Targets } from './targets.js';

/** Routes the writes of each delivery to its store and creates deliveries from fired events. */
export class Outbox {
  readonly durable: GroupCommit;
  readonly ephemeral: GroupCommit;
  private readonly log: Logger | undefined;
  #stopped = false;

  constructor(
    durable: DeliveryStore,
    ephemeral: DeliveryStore,
    onRecorded: (deliveries: Delivery[]) => void,
    /** What each delivery's Callback URL is keyed by (its receiver and endpoint). */
    readonly targets: Targets,
    opts: GroupCommitOptions = {},
  ) {
    this.log = opts.log;
    this.durable = new GroupCommit(durable, onRecorded, { ...opts, source: 'deliveries' });
    this.ephemeral = new GroupCommit(ephemeral, onRecorded, {
      ...opts,
      source: 'deliveries (Persist: false)',
    });
  }

  /** Deliveries held in memory only because the store refuses writes, both stores. */
  get buffered(): number {
    return this.durable.buffered + this.ephemeral.buffered;
  }

  /** Fired callbacks dropped because the buffer was full, since start. */
  get dropped(): number {
    return this.durable.dropped + this.ephemeral.dropped;
  }

  /** A buffered (not yet written) delivery by Id. */
  unwritten(id: string): Delivery | undefined {
    return this.durable.unwritten.get(id) ?? this.ephemeral.unwritten.get(id);
  }

  /** The buffered deliveries of one hook. */
  *unwrittenOf(hookId: string): Generator<Delivery> {
    for (const g of [this.durable, this.ephemeral]) {
      if (g.unwritten.size === 0) continue;
      for (const d of g.unwritten.values()) if (d.hookId === hookId) yield d;
    }
  }

  /**
   * Resolves once what was queued so far is recorded, or buffered (the store refuses writes),
   * sharing the end-of-turn commit with every other caller (the proxy's AfterCompletion wait).
   */
  settled(): Promise<void> {
    const d = this.durable.settled();
    const e = this.ephemeral.settled();
    return Promise.all([d, e]).then(noop, noop);
  }

  /** Stopped at the end of shutdown: nothing more is recorded. */
  get stopped(): boolean {
    return this.#stopped;
  }

  stop(): void {
    this.#stopped = true;
    this.durable.stop();
    this.ephemeral.stop();
  }

  /**
   * Creates and queues one delivery per fired event, due `firstDelay` ms from now. They are handed
   * to `onRecorded` once committed; nothing is attempted before. `traceOf` (tracing on) gives each
   * its fire span's `traceparent` before its record is queued, so that the record carries it.
   */
  accept(
    events: readonly FiredEvent[],
    now: number,
    firstDelay: (d: Delivery) => number,
    source: DeliverySource,
    traceOf?: (e: FiredEvent, d: Delivery) => string,
  ): Delivery[] {
    const out: Delivery[] = [];
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      const commit = e.persist ? this.durable : this.ephemeral;
      if (!commit.accepting) {
        // The store refuses writes and the buffer is full: dropped, counted, logged (DECISIONS).
        if (commit.dropped++ % 1000 === 0)
          this.log?.error(
            { hookId: e.hookId, dropped: commit.dropped, buffer: commit.bufferLimit },
            'the store refuses writes and the delivery buffer is full: fired callbacks are dropped',
          );
        continue;
      }
      const d = Delivery.fromEvent(newDeliveryId(now), e, now, this.targets, source);
      d.nextAttempt = now + firstDelay(d);
      if (e.failure !== undefined) {
        Object.assign(d, { status: 'failed', lastError: e.failure, nextAttempt: null });
        if (e.transformInput !== undefined) d.transformInput = JSON.stringify(e.transformInput);
      }
      if (traceOf !== undefined) d.traceParent = traceOf(e, d);
      commit.insert(d);
      out.push(d);
    }
    return out;
  }

  commitFor(d: Delivery): GroupCommit {
    return d.persist ? this.durable : this.ephemeral;
  }

  update(d: Delivery): void {
    this.commitFor(d).update(d);
  }

  /** An attempt's record and the delivery's new state, in one commit (group-commit.ts). */
  outcome(d: Delivery, a: AttemptRecord): void {
    this.commitFor(d).outcome(d, a);
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
   * instances hands over only those nobody else holds, claimed for this one (DeliverySharing).
   */
  async loadPending(): Promise<Delivery[]> {
    const durable = await this.durable.store.sharing.resumable();
    const ephemeral = await this.ephemeral.store.sharing.resumable();
    const out: Delivery[] = [];
    for (const r of durable) out.push(Delivery.fromRecord(r, true, this.targets));
    for (const r of ephemeral) out.push(Delivery.fromRecord(r, false, this.targets));
    return out;
  }
}

const noop = (): void => undefined;
