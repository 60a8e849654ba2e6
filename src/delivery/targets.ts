/**
 * What the core keys a Callback URL by, asked of its scheme's transport once per URL: the
 * receiver key (fairness per host, the host's breaker, rate limits, verification) and the
 * endpoint key (fairness per endpoint, the endpoint's breaker). Never `URL.origin`, which is
 * `"null"` for every broker scheme and would put all brokers behind one breaker. A delivery made
 * here also finds its subject's plan (plan/).
 */
import type { TransportRegistry } from '../transports/index.js';
import type { DeliveryPlan, DeliveryPlans } from './plan/index.js';

/**
 * Where a delivery comes from: a hook that fired, or an operational notification to an
 * endpoint. Each enters the pipeline by its own door (`accept`, `notifications.accept`).
 */
export type DeliverySource = 'callback' | 'notification';

/** A Callback URL as the core keys it. */
export interface Target {
  /** `https:`, `amqp:`: picks the transport. */
  readonly protocol: string;
  /** The receiver key: scheme, host, port, user (and what else makes a receiver); no password. */
  readonly receiver: string;
  /** The endpoint key: the receiver key with the URL's path and query (no fragment, no password). */
  readonly endpoint: string;
  /** The URL's path and query. */
  readonly path: string;
}

// Callback URLs are per hook, so this stays small; the bound only guards against a pathological mix.
const MAX_TARGETS = 10_000;

export class Targets {
  readonly #cache = new Map<string, Target>();

  constructor(
    private readonly registry: TransportRegistry,
    private readonly plans: DeliveryPlans,
    /** A stored delivery's source, by the Id of what it was sent for (a hook, an endpoint). */
    readonly sourceOf: (subjectId: string) => DeliverySource = () => 'callback',
  ) {}

  /** The plan of a hook's or endpoint's deliveries as the subject is now. */
  planOf(subjectId: string): DeliveryPlan {
    return this.plans.planOf(subjectId);
  }

  of(url: string): Target {
    let t = this.#cache.get(url);
    if (t === undefined) {
      const u = new URL(url);
      // A scheme no transport serves still gets a key of its own; its attempts are refused.
      const receiver = this.registry.forScheme(u.protocol)?.receiverKey(u) ?? `${u.protocol}//${u.host}`;
      const path = `${u.pathname}${u.search}`;
      t = { protocol: u.protocol, receiver, endpoint: `${receiver}${path}`, path };
      if (this.#cache.size >= MAX_TARGETS) this.#cache.clear();
      this.#cache.set(url, t);
    }
    return t;
  }
}
