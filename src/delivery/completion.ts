/**
 * Completion: what the pipeline does with an attempt's result (its meaning comes from outcome.ts):
 * the delivery's new state, its retry or end, the attempt record and state written together, the
 * `attempt` event; and deliveries ended unsent, and hooks disabled by a 410.
 */

import type { Logger } from 'pino';
import type { LiveDeliveries } from '../ordering/index.js';
import type { SendOutcome } from '../transports/index.js';
import { notSent, recordedAttempt } from './attempt-result.js';
import type { Delivery } from './delivery.js';
import { attemptMessage, type DeliveryEvents } from './delivery-events.js';
import { attemptRecord } from './delivery-log.js';
import type { Outbox } from './outbox.js';
import { attemptEffect } from './outcome.js';
import type { DeliveryPlans } from './plan/index.js';
import type { RateWaits } from './rate-limit.js';
import type { RetrySchedule } from './retry-policy.js';
import type { Scheduler } from './scheduler.js';

/** The parts completion writes to: the deliveries in memory, the outbox, the scheduler, the events. */
export interface CompletionParts {
  readonly live: LiveDeliveries<Delivery>;
  readonly outbox: Outbox;
  readonly scheduler: Scheduler<Delivery>;
  readonly events: DeliveryEvents;
  readonly logger: Logger;
  /** Where a 410 disables a hook. */
  readonly plans: DeliveryPlans;
  /** The schedule of plans without one of their own. */
  readonly schedule: RetrySchedule;
  /** The rate limits' wait before each attempt, recorded with it. */
  readonly rateWaits: Pick<RateWaits, 'settle'>;
}

export class Completion {
  /**
   * The attempt (its number) each delivery was shed at, its receiver's circuit open: one whose
   * latest attempt it is goes again when the receiver's connection is back. Kept by number, so a
   * sent attempt needs no write here; weakly held, so an ended delivery takes it along.
   */
  private readonly shedAt = new WeakMap<Delivery, number>();

  constructor(private readonly h: CompletionParts) {}

  /** Its latest attempt was not sent because its receiver's circuit was open. */
  lastShed(d: Delivery): boolean {
    return this.shedAt.get(d) === d.attempts;
  }

  /** Applies an attempt's outcome (outcome.ts): state, retry or end, log record, event. */
  complete(d: Delivery, start: number, o: SendOutcome): void {
    const now = Date.now();
    const r = recordedAttempt(o);
    d.attempts++;
    d.lastStatusCode = r.statusCode;
    d.lastError = r.error;
    const effect = attemptEffect(d, o, d.plan.schedule ?? this.h.schedule, now);
    d.status = effect.status;
    d.nextAttempt = effect.nextAttempt;
    d.lastError ??= effect.defaultError;
    if (effect.disable) this.disable(d.hookId);
    if (effect.gaveUp) {
      const line = {
        deliveryId: d.id,
        hookId: d.hookId,
        attempt: d.attempts,
        status: r.statusCode,
        err: r.error,
      };
      this.h.logger.warn(line, 'delivery failed after its last attempt');
    }
    this.h.outbox.outcome(d, attemptRecord(d, d.attempts, start, r, this.h.rateWaits.settle(d)));
    // Pending: it waits for its retry (a scheduler stopped at shutdown keeps it without a timer).
    if (d.status === 'pending') this.h.scheduler.add(d);
    else this.h.live.remove(d.id);
    if (this.h.events.has('attempt'))
      this.h.events.emit('attempt', attemptMessage(d, start, r, effect.outcome), d.owner);
  }

  /** The circuit of the destination is open: the attempt is recorded as not sent and retried later. */
  readonly shed = (d: Delivery, reason: string): void => {
    d.active = false;
    if (d.cancelled) return;
    this.shedAt.set(d, d.attempts + 1);
    this.complete(d, Date.now(), notSent(reason));
  };

  /** Ends a delivery that will not be sent (its hook is disabled or gone); not an attempt. */
  readonly endUnsent = (d: Delivery, reason: string): void => {
    d.active = false;
    d.status = 'failed';
    d.nextAttempt = null;
    d.lastError = reason;
    this.h.scheduler.remove(d);
    this.h.outbox.update(d);
    this.h.live.remove(d.id);
  };

  /** 410 Gone: the hook is disabled, and its other waiting deliveries end unsent. */
  private disable(hookId: string): void {
    if (!this.h.plans.disable(hookId)) return;
    this.h.logger.warn({ hookId }, 'receiver answered 410 Gone; hook disabled');
    for (const d of this.h.live.values()) {
      if (d.hookId === hookId && !d.active && d.status === 'pending') {
        this.endUnsent(d, 'not sent: the hook was disabled (its receiver answered 410 Gone)');
      }
    }
  }
}
