/**
 * Intake: fired callbacks into the outbox and the deliveries held in memory; deliveries taken
 * over from another cluster instance or let go to them.
 */

import type { Logger } from 'pino';
import type { FiredEvent } from '../engine/index.js';
import type { LiveDeliveries } from '../ordering/index.js';
import type { DeliveryRecord } from '../store/index.js';
import type { Tracing } from '../tracing/index.js';
import { Delivery, type DeliverySource, enqueue } from './delivery.js';
import { type DeliveryEvents, firedMessage, isoTime } from './delivery-events.js';
import type { Outbox } from './outbox.js';
import { firstDelay, type RetrySchedule } from './retry-policy.js';
import type { Scheduler } from './scheduler.js';

/** The parts intake writes to: the deliveries in memory, the outbox, the scheduler, the events. */
export interface IntakeParts {
  readonly live: LiveDeliveries<Delivery>;
  readonly outbox: Outbox;
  readonly scheduler: Scheduler<Delivery>;
  readonly events: DeliveryEvents;
  readonly tracing: Tracing | undefined;
  readonly logger: Logger;
  /** The schedule of plans without one of their own (the first attempt's delay). */
  readonly schedule: RetrySchedule;
}

export class Intake {
  private readonly live: LiveDeliveries<Delivery>;
  private readonly scheduler: Scheduler<Delivery>;
  private readonly firstDelay: (d: Delivery) => number;

  constructor(private readonly p: IntakeParts) {
    this.live = p.live;
    this.scheduler = p.scheduler;
    this.firstDelay = (d) => firstDelay(d.plan.schedule ?? p.schedule);
  }

  /**
   * Records the fired callbacks (in the durable store for `Persist: true` hooks, in memory for
   * the others) and sends them once recorded. Never throws and never waits: the firing path
   * (the proxy) must not be held up by delivery.
   */
  accept(events: FiredEvent[], source: DeliverySource): void {
    if (events.length === 0) return;
    if (this.p.outbox.stopped) {
      this.p.logger.warn(
        { count: events.length },
        'fired events after the delivery pipeline closed were dropped',
      );
      return;
    }
    const now = Date.now();
    const tr = this.p.tracing;
    const deliveries = this.p.outbox.accept(
      events,
      now,
      this.firstDelay,
      source,
      tr === undefined ? undefined : (e, d) => tr.fired(e.trace, d),
    );
    // A delivery its Transform failed is recorded finished: nothing of it waits in memory, so
    // that a redelivery takes it back as it does any finished one.
    for (const d of deliveries) if (d.status === 'pending') this.live.add(d);
    if (this.p.events.has('fired')) {
      const time = isoTime(now);
      for (const d of deliveries) this.p.events.emit('fired', firedMessage(d, time), d.owner);
    }
  }

  /**
   * Takes over pending deliveries claimed from the store (a cluster instance that stopped or
   * died held them): they are scheduled as if this instance had fired them. Ones already held
   * here are skipped. Returns how many were taken.
   */
  adopt(records: readonly DeliveryRecord[], persist: boolean): number {
    if (this.p.outbox.stopped) return 0;
    let taken = 0;
    for (const r of records) {
      if (r.status !== 'pending' || this.live.has(r.id)) continue;
      const d = Delivery.fromRecord(r, persist, this.p.outbox.targets);
      this.live.add(d);
      enqueue(this.scheduler, d);
      taken++;
    }
    return taken;
  }

  /**
   * Lets go of every pending delivery that is not being attempted right now, without writing
   * anything: a cluster instance whose lease ran out does this, since the others may already
   * have taken them over. Returns how many were let go.
   */
  release(): number {
    let released = 0;
    for (const d of this.live.values()) {
      // A buffered one is in no store for the others to take over: it stays here.
      if (d.active || d.status !== 'pending' || d.buffered) continue;
      d.cancelled = true;
      this.scheduler.remove(d);
      this.live.remove(d.id);
      released++;
    }
    return released;
  }

  /** A hook was deleted: what is held of it in memory is cancelled. */
  cancelHook(hookId: string): void {
    for (const d of this.live.values()) {
      if (d.hookId !== hookId) continue;
      d.cancelled = true;
      this.scheduler.remove(d);
      this.live.remove(d.id);
    }
  }
}
