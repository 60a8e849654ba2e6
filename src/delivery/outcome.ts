/**
 * What an attempt's result means for its delivery, as a pure function of the delivery, the
 * result, the retry schedule and the time (issue 27), so that it can be tested without a
 * pipeline: done, retried when, or failed for good; and whether the hook is to be disabled.
 */
import type { AttemptOutcome } from './delivery-events.js';
import {
  honoursRetryAfter,
  nextDelay,
  parseRetryAfter,
  type RetrySchedule,
  verdictFor,
} from './retry-policy.js';
import type { AttemptResult } from './sender.js';

export interface AttemptEffect {
  readonly status: 'pending' | 'succeeded' | 'failed';
  /** When the next attempt is due (epoch ms); null once the delivery has ended. */
  readonly nextAttempt: number | null;
  readonly outcome: AttemptOutcome;
  /** The receiver answered 410 Gone: the hook is disabled. */
  readonly disable: boolean;
  /** The error to record when the result has none. */
  readonly defaultError: string | null;
  /** It failed after its last attempt of the round (logged as a warning). */
  readonly gaveUp: boolean;
}

/**
 * `d.attempts` counts the attempt being judged; `d.roundStart` is the count when the current round
 * of the schedule began (a redelivery starts a new round).
 */
export function attemptEffect(
  d: { attempts: number; roundStart: number },
  r: AttemptResult,
  schedule: RetrySchedule,
  now: number,
): AttemptEffect {
  const verdict = verdictFor(r.statusCode);
  if (verdict === 'succeeded') return SUCCEEDED;
  if (verdict === 'gone') return GONE;
  const retryAfter = honoursRetryAfter(r.statusCode) ? parseRetryAfter(r.retryAfter, now) : undefined;
  const delay = nextDelay(schedule, d.attempts - d.roundStart, retryAfter);
  if (delay === undefined) return GAVE_UP;
  return {
    status: 'pending',
    nextAttempt: now + delay,
    outcome: 'retrying',
    disable: false,
    defaultError: null,
    gaveUp: false,
  };
}

// The effects that depend on nothing but the verdict: shared, not made anew per attempt (issue 23).
const SUCCEEDED: AttemptEffect = Object.freeze({
  status: 'succeeded',
  nextAttempt: null,
  outcome: 'succeeded',
  disable: false,
  defaultError: null,
  gaveUp: false,
});
const GONE: AttemptEffect = Object.freeze({
  status: 'failed',
  nextAttempt: null,
  outcome: 'failed',
  disable: true,
  defaultError: 'the receiver answered 410 Gone, so the hook was disabled',
  gaveUp: false,
});
const GAVE_UP: AttemptEffect = Object.freeze({
  status: 'failed',
  nextAttempt: null,
  outcome: 'failed',
  disable: false,
  defaultError: null,
  gaveUp: true,
});
