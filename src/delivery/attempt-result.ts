/**
 * What the core makes of a transport's outcome: what it says about its destination (for the
 * circuit breakers), what the delivery log records of it, and the outcomes of attempts hookd
 * made no send for (a circuit is open, hookd failed to prepare it, no transport serves it).
 */
import type { PaceSample } from '../pace/index.js';
import type { SendOutcome } from '../transports/index.js';
import type { AttemptVerdict } from './fairness.js';

/**
 * What an attempt says about its endpoint and host, for the circuit breakers: any answer says
 * the host is reachable; a `retry` answer is the endpoint's failure, the others are answers.
 */
export function verdictOf(o: SendOutcome): AttemptVerdict {
  if (o.denied) return 'none';
  if (o.unreachable) return 'unreachable';
  if (o.timedOut) return 'timeout';
  return o.kind === 'retry' ? 'fail' : 'ok';
}

/** An attempt as the delivery log and the events record it. */
export interface RecordedAttempt {
  /** The receiver's answer code (an HTTP status); null when its protocol has none or no answer came. */
  readonly statusCode: number | null;
  /** The cause of a failure in words; null on success and for an answer with a code. */
  readonly error: string | null;
  /** The first bytes of an answer with a code (an HTTP body), or the receipt in words. */
  readonly responseBody: string | null;
  readonly latencyMs: number;
}

export function recordedAttempt(o: SendOutcome): RecordedAttempt {
  if (o.answerCode !== undefined) {
    return {
      statusCode: o.answerCode,
      error: o.answerFault ?? null,
      responseBody: o.answerText ?? '',
      latencyMs: o.latencyMs,
    };
  }
  const delivered = o.kind === 'delivered';
  return {
    statusCode: null,
    error: delivered ? null : o.text,
    responseBody: delivered ? o.text : null,
    latencyMs: o.latencyMs,
  };
}

export function internalFailure(err: Error): SendOutcome {
  return {
    kind: 'retry',
    text: `not sent: hookd failed to prepare the attempt (${err.message})`,
    latencyMs: 0,
  };
}

/** The outcome of an attempt that was not sent (a circuit is open). */
export function notSent(reason: string): SendOutcome {
  return { kind: 'retry', text: reason, latencyMs: 0 };
}

/**
 * What an outcome says about the receiver's load (src/pace/): an overloaded receiver and no
 * answer in time say "too much"; a delivered answer its latency; the rest (a 4xx, a 500,
 * refused) nothing.
 */
export function paceSampleOf(o: SendOutcome, inFlight: number): PaceSample {
  const overload = o.overloaded === true || (o.timedOut === true && !o.aborted);
  const verdict = overload ? 'overload' : o.kind === 'delivered' && !o.aborted ? 'ok' : 'other';
  return {
    latencyMs: o.latencyMs,
    inFlight,
    verdict,
    ...(o.answerCode !== undefined && { answerCode: o.answerCode }),
    ...(o.timedOut === true && !o.aborted && { timedOut: true }),
  };
}
