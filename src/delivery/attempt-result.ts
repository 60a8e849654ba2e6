/**
 * The results of attempts hookd made no request for (a circuit is open, hookd failed to prepare
 * it), and what any result says about its destination, for the circuit breakers.
 */
import type { AttemptVerdict } from './fairness.js';
import type { AttemptResult } from './sender.js';

/** What an attempt says about its endpoint and host, for the circuit breakers. */
export function verdictOf(r: AttemptResult): AttemptVerdict {
  if (r.denied) return 'none';
  const s = r.statusCode;
  if (s === null) return r.unreachable ? 'unreachable' : 'timeout';
  if (s >= 500 || s === 429) return 'fail';
  return 'ok';
}

export function internalFailure(err: Error): AttemptResult {
  return {
    statusCode: null,
    error: `not sent: hookd failed to prepare the attempt (${err.message})`,
    latencyMs: 0,
    responseBody: null,
    retryAfter: undefined,
    denied: false,
    aborted: false,
  };
}

/** The record of an attempt that was not sent (a circuit is open). */
export function notSent(reason: string): AttemptResult {
  return {
    statusCode: null,
    error: reason,
    latencyMs: 0,
    responseBody: null,
    retryAfter: undefined,
    denied: false,
    aborted: false,
  };
}
