/**
 * The delivery semantics the pipeline holds: ordering per key (src/ordering/) and
 * endpoint verification (src/verification/). Both decide, before the rate gate and the limiter,
 * whether a due delivery may go now; each lets a held one go again through `release`.
 */
import { KeyQueues, LiveDeliveries, sharedStoreCheck } from '../ordering/index.js';
import type { DeliveryStore } from '../store/index.js';
import type { TransportSet } from '../transports/index.js';
import { EndpointVerifier } from '../verification/index.js';
import type { Delivery } from './delivery.js';
import type { DeliveryPipelineOptions } from './pipeline-options.js';
import type { DeliveryPlans } from './plan/index.js';

export interface SemanticsHost {
  durable: DeliveryStore;
  ephemeral: DeliveryStore;
  /** The plans: ordering keys of stored deliveries of another instance. */
  plans: DeliveryPlans;
  /** Resolves once everything so far is committed (the outbox). */
  flush(): Promise<void>;
  /** Puts a pending delivery where it waits (the pipeline's enqueue). */
  release(d: Delivery): void;
  /** Ends a delivery without sending it, with the reason (verification gave up). */
  fail(d: Delivery, reason: string): void;
  /** The transports: a delivery is verified when its transport can send the handshake. */
  transports: TransportSet;
}

export class DeliverySemantics {
  readonly order: KeyQueues<Delivery>;
  /** The live deliveries, told to the key queues as they come and go. */
  readonly live: LiveDeliveries<Delivery>;
  /** Endpoint verification; undefined when no hook can ask for it. */
  readonly verifier: EndpointVerifier<Delivery> | undefined;
  private readonly transports: TransportSet;

  constructor(opts: Pick<DeliveryPipelineOptions, 'verification'>, host: SemanticsHost) {
    const release = (d: Delivery) => host.release(d);
    const plans = host.plans;
    // The next of a key goes once its predecessor's end is committed: a crash then never
    // resends the predecessor after its successor.
    this.order = new KeyQueues<Delivery>(
      (d) => d.plan.orderingKey?.(d.trigger),
      (d) =>
        void host.flush().then(
          () => release(d),
          () => release(d),
        ),
      sharedStoreCheck(
        (persist) => (persist ? host.durable : host.ephemeral),
        (hookId, trigger) => plans.planOf(hookId).orderingKey?.(trigger),
      ),
    );
    this.live = new LiveDeliveries(this.order);
    this.transports = host.transports;
    const transports = host.transports;
    this.verifier =
      opts.verification &&
      new EndpointVerifier<Delivery>({
        ...opts.verification,
        preflight: (r) => {
          const t = transports.forProtocol(new URL(r.url).protocol);
          if (t?.preflight === undefined)
            return Promise.reject(new Error('its transport sends no preflight'));
          return t.preflight(r);
        },
        release,
        fail: (d, reason) => host.fail(d, reason),
      });
  }

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

  close(): void {
    this.verifier?.close();
  }
}
