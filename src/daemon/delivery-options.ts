/** What the daemon's configuration and hooks say about delivery, in the pipeline's terms. */
import type { HookdConfig } from '../config/index.js';
import type { BreakerOptions } from '../delivery/index.js';
import type { Tracing } from '../tracing/index.js';

/**
 * The delivery limits the configuration sets (the pipeline has the defaults), and the delivery
 * log's retention;
 * `breaker`: breaker settings from elsewhere (the transition listener of operational notifications).
 */
export function deliveryOptions(c: HookdConfig, breaker?: Partial<BreakerOptions>) {
  return {
    limits: {
      ...(breaker && { breaker }),
      ...(c.deliveryConcurrency !== undefined && { concurrency: c.deliveryConcurrency }),
      ...(c.deliveryPerHost !== undefined && { perHost: c.deliveryPerHost }),
      ...(c.deliveryPerEndpoint !== undefined && { perEndpoint: c.deliveryPerEndpoint }),
      adaptive: c.adaptiveConcurrency,
    },
    retention: { maxAgeMs: c.deliveryRetentionMs },
  };
}

/** Rate-limit waits counted in the metrics, and tracing, in the pipeline's terms. */
export function perHookDelivery(
  metrics: () => { rateLimited(ms: number): void },
  tracing: Tracing | undefined,
) {
  return {
    onRateWait: (ms: number) => metrics().rateLimited(ms),
    ...(tracing && { tracing }),
  };
}
