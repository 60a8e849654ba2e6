/**
 * What happens to a delivery whose time has come: its plan as its hook is now, ordering and
 * verification (semantics.ts), the hook's rate limit (rate-limit.ts), then a slot in the fairness
 * limiter (fairness.ts). And a receiver whose connection is back: what its open circuit held back
 * goes now.
 */
import type { Completion } from './completion.js';
import type { Delivery } from './delivery.js';
import { enqueue } from './delivery.js';
import type { FairLimiter } from './fairness.js';
import type { DeliveryPlans } from './plan/index.js';
import type { RateGate } from './rate-limit.js';
import type { Scheduler } from './scheduler.js';
import type { Admission } from './semantics.js';
import { heldByCircuit } from './transport-wiring.js';

/** The parts a due delivery passes through, in order, and where it waits again. */
export interface DispatchParts {
  readonly plans: DeliveryPlans;
  readonly admission: Admission;
  readonly gate: RateGate;
  readonly limiter: FairLimiter<Delivery>;
  readonly scheduler: Scheduler<Delivery>;
  /** The deliveries in memory: those a reconnected receiver's circuit held back. */
  readonly live: { values(): Iterable<Delivery> };
  /** Whose latest attempt its receiver's open circuit shed. */
  readonly completion: Pick<Completion, 'lastShed'>;
}

export class Dispatch {
  constructor(private readonly p: DispatchParts) {}

  /** Hands due deliveries over until `signal` aborts (shutdown); due ones go at once. */
  start(signal: AbortSignal): void {
    this.p.scheduler.start(this.due, signal);
  }

  /** A delivery is due: to the limiter, unless its key, its origin or its hook's rate makes it wait. */
  private readonly due = (d: Delivery): void => {
    if (d.cancelled || d.status !== 'pending' || d.active) return;
    const now = Date.now();
    // The plan as the hook is now: a change since firing applies, but for the URL it fired with.
    d.plan = this.p.plans.planOf(d.hookId);
    if (!this.p.admission.admit(d, now)) return; // held behind its key, or unverified
    if (this.p.gate.hold(d, now)) return;
    d.active = true;
    this.p.limiter.submit(d);
  };

  /** A receiver's connection is back: its open circuits probe now, and what they held back goes. */
  readonly reconnected = (key: string): void => {
    const { scheduler, limiter, completion } = this.p;
    if (!scheduler.running) return;
    limiter.reconnected(key);
    const now = Date.now();
    for (const d of [...heldByCircuit(this.p.live.values(), key, (d) => completion.lastShed(d))]) {
      scheduler.remove(d);
      d.nextAttempt = now;
      enqueue(scheduler, d);
    }
  };
}
