/**
 * The delivery semantics that decide, before the rate gate and the limiter, whether a due delivery
 * may go now: ordering per key (src/ordering/) and endpoint verification (src/verification/). A
 * held one goes back to the scheduler when it may go.
 */
import { KeyQueues, LiveDeliveries, sharedStoreCheck } from '../ordering/index.js';
import type { DeliveryStore } from '../store/index.js';
import type { TransportSet } from '../transports/index.js';
import { EndpointVerifier } from '../verification/index.js';
import type { Completion } from './completion.js';
import { type Delivery, enqueue } from './delivery.js';
import type { Outbox } from './outbox.js';
import type { DeliveryPipelineOptions } from './pipeline-options.js';
import type { DeliveryPlans } from './plan/index.js';
import type { Scheduler } from './scheduler.js';

/** The parts the key queues need: the stores and plans (another instance's deliveries), the outbox, the scheduler. */
export interface OrderingParts {
  readonly durable: DeliveryStore;
  readonly ephemeral: DeliveryStore;
  readonly plans: DeliveryPlans;
  readonly outbox: Pick<Outbox, 'flush'>;
  readonly scheduler: Pick<Scheduler<Delivery>, 'offer'>;
}

/** The key queues, and the live deliveries told to them as they come and go. */
export function keyOrder(p: OrderingParts): { order: KeyQueues<Delivery>; live: LiveDeliveries<Delivery> } {
  const release = (d: Delivery) => enqueue(p.scheduler, d);
  // The next of a key goes once its predecessor's end is committed: a crash then never
  // resends the predecessor after its successor.
  const order = new KeyQueues<Delivery>(
    (d) => d.plan.orderingKey?.(d.trigger),
    (d) =>
      void p.outbox.flush().then(
        () => release(d),
        () => release(d),
      ),
    sharedStoreCheck(
      (persist) => (persist ? p.durable : p.ephemeral),
      (hookId, trigger) => p.plans.planOf(hookId).orderingKey?.(trigger),
    ),
  );
  return { order, live: new LiveDeliveries(order) };
}

/** The parts verification needs: the transports (their preflight), the scheduler, completion (it gives up). */
export interface VerificationParts {
  readonly transports: TransportSet;
  readonly scheduler: Pick<Scheduler<Delivery>, 'offer'>;
  readonly completion: Pick<Completion, 'endUnsent'>;
  /** The pipeline's lifecycle: verification stops waiting when it aborts. */
  readonly signal: AbortSignal;
}

/** Endpoint verification, when any hook can ask for it; undefined otherwise. */
export function verifierOf(
  opts: DeliveryPipelineOptions['verification'],
  p: VerificationParts,
): EndpointVerifier<Delivery> | undefined {
  if (opts === undefined) return undefined;
  const transports = p.transports;
  const verifier = new EndpointVerifier<Delivery>({
    ...opts,
    preflight: (r) => {
      const t = transports.forProtocol(new URL(r.url).protocol);
      if (t?.preflight === undefined) return Promise.reject(new Error('its transport sends no preflight'));
      return t.preflight(r);
    },
    release: (d) => enqueue(p.scheduler, d),
    fail: p.completion.endUnsent,
  });
  p.signal.addEventListener('abort', () => verifier.close(), { once: true });
  return verifier;
}

/** Whether a due delivery may go now: behind its key's head, or before its origin's handshake, not. */
export class Admission {
  constructor(
    readonly order: KeyQueues<Delivery>,
    readonly verifier: EndpointVerifier<Delivery> | undefined,
    private readonly transports: TransportSet,
  ) {}

  /** False when the delivery must wait: behind its key's head, or for its origin's handshake. */
  admit(d: Delivery, now: number): boolean {
    if (!this.order.admit(d)) return false;
    if (this.verifier === undefined || d.plan.verification !== 'cloudevents') return true;
    // A receiver its transport cannot ask (a broker has no way to answer a handshake) is not asked.
    if (this.transports.forProtocol(d.protocol)?.preflight === undefined) return true;
    return !this.verifier.hold(d, now);
  }

  /** Keys with deliveries held behind their head, and those deliveries (metrics). */
  stats(): { heldKeys: number; held: number; heldTotal: number } {
    return { heldKeys: this.order.heldKeys, held: this.order.held, heldTotal: this.order.heldTotal };
  }
}
