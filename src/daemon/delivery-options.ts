/** What the daemon's configuration and hooks say about delivery, in the pipeline's terms. */
import type { HookdConfig } from '../config/index.js';
import type { BreakerOptions } from '../delivery/index.js';
import { type RetrySchedule, retrySchedule } from '../delivery/index.js';
import type { Hook } from '../hook/index.js';
import type { Tracing } from '../tracing/index.js';

const schedules = new WeakMap<Hook, RetrySchedule>();

/** A hook's own `RetrySchedule` as the pipeline's schedule (made once per stored version). */
export function hookSchedule(hook: Hook | undefined): RetrySchedule | undefined {
  if (hook?.RetrySchedule === undefined) return undefined;
  let s = schedules.get(hook);
  if (s === undefined) {
    s = retrySchedule({ delaysMs: hook.RetrySchedule.map((sec) => sec * 1000) });
    schedules.set(hook, s);
  }
  return s;
}

/**
 * The delivery limits and fault buffer the configuration sets (the pipeline has the defaults), and
 * the delivery log's retention;
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
    ...(c.storeFaultBuffer !== undefined && { faultBuffer: c.storeFaultBuffer }),
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
