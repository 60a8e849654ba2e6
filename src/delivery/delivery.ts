import type { CallbackRequest, FiredEvent, TriggerInfo } from '../engine/index.js';
import { copyDeliveryState, type DeliveryRecord, type DeliveryStatus } from '../store/index.js';
import type { DeliveryPlan } from './plan/index.js';
import type { Scheduler } from './scheduler.js';
import type { DeliverySource, Targets } from './targets.js';

export type { DeliverySource } from './targets.js';

/**
 * A delivery while hookd holds it in memory (pending or in flight): the stored record plus what
 * the pipeline needs to schedule and send it. One object per delivery from firing to its end; the
 * scheduler's heap and the limiter's queues hold this same object, each keeping its own state beside
 * it, and the store is handed frozen snapshots of it (write-batch.ts), never the object itself.
 */
export class Delivery implements DeliveryRecord {
  readonly id: string;
  readonly hookId: string;
  readonly owner: string;
  readonly hookType: 0 | 1;
  /** Which store holds it: the durable one, or memory for `Persist: false` hooks. */
  readonly persist: boolean;
  readonly created: number;
  readonly trigger: TriggerInfo;
  readonly request: CallbackRequest;
  readonly source: DeliverySource;
  status: DeliveryStatus = 'pending';
  attempts = 0;
  roundStart = 0;
  nextAttempt: number | null = null;
  lastStatusCode: number | null = null;
  lastError: string | null = null;
  /** W3C `traceparent` of the fire span (tracing on); attempts are its children. */
  traceParent?: string;
  /** The event of a failed Transform, JSON text (DeliveryRecord); a redelivery runs it again. */
  transformInput?: string;

  /**
   * The receiver key (targets.ts): the host key of the fairness limits, the host's circuit
   * breaker and verification. For HTTP the URL's origin.
   */
  readonly origin: string;
  /** The endpoint key of the fairness limits and the endpoint's circuit breaker. */
  readonly endpoint: string;
  readonly path: string;
  /** The Callback URL's scheme with its colon: which transport sends it. */
  readonly protocol: string;
  /**
   * Its subject's plan (plan/) as of its latest step: looked up again before each attempt, so a
   * changed hook's plan applies to its pending deliveries; the URL stays the one it fired with.
   */
  plan: DeliveryPlan;
  /** Held in memory only: the store refused its write, which is retried (not yet durable). */
  buffered = false;
  /** What holds it back while it waits for a slot, e.g. `endpoint https://…` (the delivery log's `HeldBy`). */
  heldBy: string | undefined = undefined;
  /** The delivery of its key it waits behind (src/ordering/; the delivery log's `HeldBehind`). */
  heldBehind: string | undefined = undefined;
  /** An attempt is running (or queued in the limiter). */
  active = false;
  /** The hook was deleted: nothing more is sent or written. */
  cancelled = false;

  constructor(
    id: string,
    hookId: string,
    owner: string,
    hookType: 0 | 1,
    persist: boolean,
    created: number,
    trigger: TriggerInfo,
    request: CallbackRequest,
    targets: Targets,
    source: DeliverySource,
  ) {
    this.id = id;
    this.hookId = hookId;
    this.owner = owner;
    this.hookType = hookType;
    this.persist = persist;
    this.created = created;
    this.trigger = trigger;
    this.request = request;
    this.source = source;
    const t = targets.of(request.url);
    this.origin = t.receiver;
    this.endpoint = t.endpoint;
    this.path = t.path;
    this.protocol = t.protocol;
    this.plan = targets.planOf(hookId);
  }

  /** The payload's media type (the `content-type` the hook's template set), for the transport. */
  get contentType(): string | undefined {
    const h = this.request.headers;
    const v = h['content-type'];
    if (v !== undefined) return v;
    for (const name in h) if (name.toLowerCase() === 'content-type') return h[name];
    return undefined;
  }

  static fromEvent(
    id: string,
    e: FiredEvent,
    created: number,
    targets: Targets,
    source: DeliverySource,
  ): Delivery {
    const { hookId, owner, hookType, persist, trigger, request } = e;
    return new Delivery(id, hookId, owner, hookType, persist, created, trigger, request, targets, source);
  }

  static fromRecord(r: DeliveryRecord, persist: boolean, targets: Targets): Delivery {
    const d = new Delivery(
      r.id,
      r.hookId,
      r.owner,
      r.hookType,
      persist,
      r.created,
      r.trigger,
      r.request,
      targets,
      targets.sourceOf(r.hookId),
    );
    copyDeliveryState(d, r);
    if (r.traceParent !== undefined) d.traceParent = r.traceParent;
    if (r.transformInput !== undefined) d.transformInput = r.transformInput;
    return d;
  }
}

/**
 * Puts a pending delivery where it waits (the scheduler): handed on at once when due and sending
 * has begun, else scheduled. One ended, cancelled or being attempted is left alone.
 */
export function enqueue(scheduler: Pick<Scheduler<Delivery>, 'offer'>, d: Delivery): void {
  if (!d.cancelled && d.status === 'pending' && !d.active) scheduler.offer(d);
}
