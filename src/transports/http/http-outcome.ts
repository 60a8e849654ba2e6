/**
 * What an HTTP answer means in the delivery core's words (`SendOutcome`): success is any 2xx;
 * 410 Gone means the receiver wants no more callbacks; 429 and 503 ask for a later retry with
 * `Retry-After`; another 5xx is a failure of the endpoint; a 3xx or 4xx is an answer that refuses
 * this callback (redirects are never followed). Every failure is retried on the hook's schedule.
 */
import { STATUS_CODES } from 'node:http';
import type { SendOutcome } from '../transport.js';
import type { AttemptResult } from './sender.js';

const SECOND = 1000;

/** What an HTTP status means for the delivery. */
export type Verdict = 'succeeded' | 'gone' | 'retry';

/**
 * Success is any 2xx. 410 Gone means the receiver wants no more callbacks: the hook is disabled.
 * Everything else (3xx included: redirects are never followed) is a failure worth a retry.
 */
export function verdictFor(statusCode: number | null): Verdict {
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) return 'succeeded';
  if (statusCode === 410) return 'gone';
  return 'retry';
}

/**
 * A `Retry-After` value (RFC 9110 §10.2.3: delay-seconds or an HTTP-date) as ms from `now`;
 * undefined when absent or unreadable. A date in the past is 0.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * SECOND;
  const at = Date.parse(text);
  if (Number.isNaN(at) || !/[a-z]/i.test(text)) return undefined;
  return Math.max(0, at - now);
}

/** Whether a response's `Retry-After` is honoured: on 429 Too Many Requests and 503 Unavailable. */
export function honoursRetryAfter(statusCode: number | null): boolean {
  return statusCode === 429 || statusCode === 503;
}

// Status lines are few: made once each rather than per attempt.
const statusLines = new Map<number, string>();

/** `204 No Content`: the receipt or cause of an answer. */
export function statusLine(statusCode: number): string {
  let line = statusLines.get(statusCode);
  if (line === undefined) {
    const reason = STATUS_CODES[statusCode];
    line = reason === undefined ? String(statusCode) : `${statusCode} ${reason}`;
    statusLines.set(statusCode, line);
  }
  return line;
}

/** The outcome of one HTTP attempt, judged at `now` (epoch ms, for a `Retry-After` date). */
export function httpOutcome(r: AttemptResult, now: number): SendOutcome {
  const s = r.statusCode;
  if (s === null) {
    // No answer: the policy refused the address, the host was not reached, or the exchange broke.
    return {
      kind: r.denied ? 'refused' : 'retry',
      text: r.error ?? 'no response',
      latencyMs: r.latencyMs,
      ...(r.denied && { denied: true }),
      ...(r.unreachable === true && { unreachable: true }),
      ...(!r.denied && r.unreachable !== true && !r.aborted && { timedOut: true }),
      ...(r.aborted && { aborted: true }),
    };
  }
  const verdict = verdictFor(s);
  const answer = {
    answerCode: s,
    answerText: r.responseBody ?? '',
    ...(r.error !== null && { answerFault: r.error }),
    ...(s === 401 && { unauthorized: true }),
  };
  const text = statusLine(s);
  if (verdict === 'succeeded') return { kind: 'delivered', text, latencyMs: r.latencyMs, ...answer };
  if (verdict === 'gone') return { kind: 'gone', text, latencyMs: r.latencyMs, ...answer };
  if (honoursRetryAfter(s)) {
    const retryAfterMs = parseRetryAfter(r.retryAfter, now);
    return {
      kind: 'retry',
      text,
      latencyMs: r.latencyMs,
      ...answer,
      overloaded: true,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    };
  }
  return { kind: s >= 500 ? 'retry' : 'refused', text, latencyMs: r.latencyMs, ...answer };
}
