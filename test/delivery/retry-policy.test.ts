import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  firstDelay,
  nextDelay,
  retrySchedule,
  STANDARD_WEBHOOKS_SCHEDULE,
  withJitter,
} from '../../src/delivery/retry-policy.js';
import { honoursRetryAfter, parseRetryAfter, verdictFor } from '../../src/transports/http/http-outcome.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const fixed = (r: number) => () => r;

describe('retry policy', () => {
  it('defaults to the Standard Webhooks schedule: ten attempts from immediately to 24 h', () => {
    assert.deepEqual(STANDARD_WEBHOOKS_SCHEDULE.delaysMs, [
      0,
      5 * S,
      5 * M,
      30 * M,
      2 * H,
      5 * H,
      10 * H,
      14 * H,
      20 * H,
      24 * H,
    ]);
    assert.equal(
      firstDelay(STANDARD_WEBHOOKS_SCHEDULE, fixed(1)),
      0,
      'the first attempt is immediate, jitter or not',
    );
  });

  it('walks the schedule and fails after the last attempt', () => {
    const s = retrySchedule({ delaysMs: [0, 50, 100], jitter: 0 });
    assert.equal(nextDelay(s, 1, undefined), 50);
    assert.equal(nextDelay(s, 2, undefined), 100);
    assert.equal(nextDelay(s, 3, undefined), undefined, 'three attempts, then dead letter');
  });

  it('jitters non-zero delays within ± the fraction', () => {
    assert.equal(withJitter(1000, 0.1, fixed(0)), 900);
    assert.equal(withJitter(1000, 0.1, fixed(1)), 1100);
    assert.equal(withJitter(1000, 0.1, fixed(0.5)), 1000);
    assert.equal(withJitter(0, 0.1, fixed(0)), 0);
    for (let i = 0; i < 100; i++) {
      const d = nextDelay(STANDARD_WEBHOOKS_SCHEDULE, 1, undefined)!;
      assert.ok(d >= 4500 && d <= 5500, `${d} within 5 s ± 10%`);
    }
  });

  it('honours Retry-After as a lower bound, capped at maxRetryAfterMs', () => {
    const s = retrySchedule({ delaysMs: [0, 50, 100], jitter: 0, maxRetryAfterMs: 10 * S });
    assert.equal(nextDelay(s, 1, 2 * S), 2 * S, 'waits at least what the receiver asked');
    assert.equal(nextDelay(s, 1, 10), 50, 'never earlier than the schedule');
    assert.equal(nextDelay(s, 1, 3 * H), 10 * S, 'an excessive Retry-After is cut to the bound');
    assert.equal(nextDelay(s, 3, 2 * S), undefined, 'no attempts left is no attempts left');
  });

  it('reads Retry-After as seconds or an HTTP date, only for 429 and 503', () => {
    const now = Date.parse('2026-11-22T12:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120 * S);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 12:00:30 GMT', now), 30 * S);
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 11:00:00 GMT', now), 0, 'a past date means now');
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter('-5', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
    assert.ok(honoursRetryAfter(429) && honoursRetryAfter(503));
    assert.ok(!honoursRetryAfter(500) && !honoursRetryAfter(200) && !honoursRetryAfter(null));
  });

  it('judges status codes: 2xx succeeds, 410 disables, everything else (3xx too) retries', () => {
    assert.equal(verdictFor(200), 'succeeded');
    assert.equal(verdictFor(204), 'succeeded');
    assert.equal(verdictFor(299), 'succeeded');
    assert.equal(verdictFor(410), 'gone');
    for (const s of [null, 100, 301, 302, 304, 400, 404, 429, 500, 503])
      assert.equal(verdictFor(s), 'retry', String(s));
  });

  it('rejects a broken schedule with a message naming the value', () => {
    assert.throws(() => retrySchedule({ delaysMs: [] }), /at least one/);
    assert.throws(() => retrySchedule({ delaysMs: [0, -1] }), /-1/);
    assert.throws(() => retrySchedule({ jitter: 1 }), /jitter/);
  });
});
