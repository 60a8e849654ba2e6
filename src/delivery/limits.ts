/** The delivery limits (fairness, breakers, time limits) with their defaults. */
import { type BreakerOptions, DEFAULT_BREAKER } from './circuit-breaker.js';
import { DEFAULT_LIMITS, type FairnessLimits } from './fairness.js';

/** Default per-attempt time limit: connect, send, and the whole answer. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 15_000;

export interface DeliveryLimits extends FairnessLimits {
  /** Time limit of one attempt, from dispatch to the end of the response, ms (default 15 s). */
  timeoutMs: number;
  /** Time limit of name resolution plus connect, ms (default 10 s). */
  connectTimeoutMs: number;
}

export type DeliveryLimitOptions = Partial<Omit<DeliveryLimits, 'breaker'>> & {
  breaker?: Partial<BreakerOptions>;
};

/** The limits with their defaults; a per-endpoint limit above the per-host one is the per-host one. */
export function resolveLimits(l: DeliveryLimitOptions = {}): DeliveryLimits {
  const perHost = l.perHost ?? DEFAULT_LIMITS.perHost;
  return {
    concurrency: l.concurrency ?? DEFAULT_LIMITS.concurrency,
    perHost,
    perEndpoint: Math.min(l.perEndpoint ?? DEFAULT_LIMITS.perEndpoint, perHost),
    breaker: { ...DEFAULT_BREAKER, ...l.breaker },
    timeoutMs: l.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
    connectTimeoutMs: l.connectTimeoutMs ?? 10_000,
  };
}
