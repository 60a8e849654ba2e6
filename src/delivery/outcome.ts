/**
 * What a transport's outcome means for its delivery, as a pure function of the delivery, the
 * outcome, the retry schedule and the time, so that it can be tested without a pipeline: done,
 * retried when, or failed for good; and whether the hook is to be disabled.
 */
import type { SendOutcome } from '../transports/index.js';
import type { AttemptOutcome } from './delivery-events.js';
import { nextDelay, type RetrySchedule } from './retry-policy.js';

export interface AttemptEffect {
  readonly status: 'pending' | 'succeeded' | 'failed';
  /** When the next attempt is due (epoch ms); null once the delivery has ended. */
  readonly nextAttempt: number | null;
  readonly outcome: AttemptOutcome;
  /** The receiver wants no more (HTTP 410 Gone): the hook is disabled. */
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
  o: SendOutcome,
  schedule: RetrySchedule,
  now: number,
): AttemptEffect {
  if (o.kind === 'delivered') return SUCCEEDED;
  if (o.kind === 'gone') return goneEffect(o.text);
  // `retry` and `refused` both go again on the schedule: a refusal (an HTTP 4xx, an exchange
  // that does not exist yet) may be mended by the receiver's operator before the round ends.
  const delay = nextDelay(schedule, d.attempts - d.roundStart, o.retryAfterMs);
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

// The effects that depend on nothing but the verdict: shared, not made anew per attempt.
const SUCCEEDED: AttemptEffect = Object.freeze({
  status: 'succeeded',
  nextAttempt: null,
  outcome: 'succeeded',
  disable: false,
  defaultError: null,
  gaveUp: false,
});
const goneEffects = new Map<string, AttemptEffect>();

/** The receiver said it wants no more (`410 Gone`): made once per wording. */
function goneEffect(said: string): AttemptEffect {
  let e = goneEffects.get(said);
  if (e === undefined) {
    e = Object.freeze({
      status: 'failed',
      nextAttempt: null,
      outcome: 'failed',
      disable: true,
      defaultError: `the receiver answered ${said}, so the hook was disabled`,
      gaveUp: false,
    } as const);
    if (goneEffects.size < 64) goneEffects.set(said, e);
  }
  return e;
}
const GAVE_UP: AttemptEffect = Object.freeze({
  status: 'failed',
  nextAttempt: null,
  outcome: 'failed',
  disable: false,
  defaultError: null,
  gaveUp: true,
});
