/**
 * When to try a delivery again. Pure: no clock, no timers; the caller passes the time, the
 * receiver's wish (a `retryAfterMs` of the outcome) and (for tests) the random source.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export interface RetrySchedule {
  /**
   * The delay before each attempt of a round, ms: `[0]` is the delay from firing (or from a
   * redelivery) to the first attempt, `[i]` the delay after the i-th failed attempt. The round has
   * as many attempts as entries; when the last one fails the delivery is failed (dead letter).
   */
  delaysMs: readonly number[];
  /** Each non-zero delay is moved by up to ± this fraction at random (default 0.1). */
  jitter: number;
  /** The longest `Retry-After` honoured, ms (default 1 h); a longer one is cut to this. */
  maxRetryAfterMs: number;
}

/**
 * The schedule Standard Webhooks recommends: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 14 h, 20 h, 24 h (ten attempts over about three days).
 */
export const STANDARD_WEBHOOKS_SCHEDULE: RetrySchedule = Object.freeze({
  delaysMs: Object.freeze([
    0,
    5 * SECOND,
    5 * MINUTE,
    30 * MINUTE,
    2 * HOUR,
    5 * HOUR,
    10 * HOUR,
    14 * HOUR,
    20 * HOUR,
    24 * HOUR,
  ]),
  jitter: 0.1,
  maxRetryAfterMs: HOUR,
});

/** A complete schedule from a partial one; throws a message naming the bad value. */
export function retrySchedule(partial: Partial<RetrySchedule> = {}): RetrySchedule {
  const s = { ...STANDARD_WEBHOOKS_SCHEDULE, ...partial };
  if (s.delaysMs.length === 0) throw new Error('retry schedule: delaysMs must have at least one entry');
  for (const d of s.delaysMs) {
    if (!Number.isFinite(d) || d < 0)
      throw new Error(`retry schedule: delay ${d} is not a number of ms >= 0`);
  }
  if (!(s.jitter >= 0 && s.jitter < 1))
    throw new Error(`retry schedule: jitter ${s.jitter} must be in [0, 1)`);
  if (!(s.maxRetryAfterMs >= 0))
    throw new Error(`retry schedule: maxRetryAfterMs ${s.maxRetryAfterMs} must be >= 0`);
  return { delaysMs: [...s.delaysMs], jitter: s.jitter, maxRetryAfterMs: s.maxRetryAfterMs };
}

/** `delay` moved by up to ± `jitter` of itself; 0 stays 0 ("immediately" means immediately). */
export function withJitter(delay: number, jitter: number, random: () => number = Math.random): number {
  if (delay === 0 || jitter === 0) return delay;
  return Math.round(delay * (1 + jitter * (2 * random() - 1)));
}

/** The delay before the first attempt of a round. */
export function firstDelay(schedule: RetrySchedule, random: () => number = Math.random): number {
  return withJitter(schedule.delaysMs[0]!, schedule.jitter, random);
}

/**
 * The delay before the next attempt after a failed one, or undefined when the round is over and
 * the delivery has failed. `attemptsInRound` counts the failed attempt. A receiver's wish to be
 * retried later (an HTTP `Retry-After` on 429 and 503, a broker's back-off) postpones the attempt to no earlier than it asks, up to
 * `maxRetryAfterMs`; it never brings an attempt forward.
 */
export function nextDelay(
  schedule: RetrySchedule,
  attemptsInRound: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  if (attemptsInRound >= schedule.delaysMs.length) return undefined;
  const planned = withJitter(schedule.delaysMs[attemptsInRound]!, schedule.jitter, random);
  if (retryAfterMs === undefined) return planned;
  return Math.max(planned, Math.min(retryAfterMs, schedule.maxRetryAfterMs));
}
