/**
 * What the core makes of a transport's outcome: what it says about its destination (for the
 * circuit breakers), what the delivery log records of it, and the outcomes of attempts hookd
 * made no send for (a circuit is open, hookd failed to prepare it, no transport serves it).
 */
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
  /** The HTTP status; null for other transports and when there was no answer. */
  readonly statusCode: number | null;
  /** The cause of a failure in words; null on success and for an HTTP answer. */
  readonly error: string | null;
  /** The first bytes of an HTTP answer's body, or another transport's receipt in words. */
  readonly responseBody: string | null;
  readonly latencyMs: number;
}

export function recordedAttempt(o: SendOutcome): RecordedAttempt {
  if (o.http !== undefined) {
    return {
      statusCode: o.http.statusCode,
      error: o.http.error ?? null,
      responseBody: o.http.responseBody,
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
