import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attemptEffect } from '../../src/delivery/outcome.js';
import { retrySchedule } from '../../src/delivery/retry-policy.js';
import { httpOutcome } from '../../src/transports/http/http-outcome.js';
import type { AttemptResult } from '../../src/transports/http/sender.js';
import type { SendOutcome } from '../../src/transports/index.js';

// What an attempt's outcome means for its delivery, without a pipeline; the outcomes are those
// the HTTP transport makes of each answer.

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const schedule = retrySchedule({ delaysMs: [0, 1000, 5000], jitter: 0, maxRetryAfterMs: 60_000 });

function result(statusCode: number | null, extra: Partial<AttemptResult> = {}): SendOutcome {
  return httpOutcome(answer(statusCode, extra), NOW);
}

function answer(statusCode: number | null, extra: Partial<AttemptResult> = {}): AttemptResult {
  return {
    statusCode,
    error: statusCode === null ? 'connect ECONNREFUSED' : null,
    latencyMs: 3,
    responseBody: null,
    retryAfter: undefined,
    denied: false,
    aborted: false,
    ...extra,
  };
}

describe('attemptEffect', () => {
  it('a 2xx ends the delivery as succeeded', () => {
    const e = attemptEffect({ attempts: 1, roundStart: 0 }, result(204), schedule, NOW);
    assert.deepEqual(e, {
      status: 'succeeded',
      outcome: 'succeeded',
      nextAttempt: null,
      disable: false,
      defaultError: null,
      gaveUp: false,
    });
  });

  it('410 Gone fails it and disables the hook, with an error that says so', () => {
    const e = attemptEffect({ attempts: 1, roundStart: 0 }, result(410), schedule, NOW);
    assert.equal(e.status, 'failed');
    assert.equal(e.outcome, 'failed');
    assert.equal(e.disable, true);
    assert.match(e.defaultError ?? '', /410 Gone/);
    assert.equal(e.gaveUp, false);
  });

  it('a failure with attempts left in the round retries after the scheduled delay', () => {
    const first = attemptEffect({ attempts: 1, roundStart: 0 }, result(500), schedule, NOW);
    assert.deepEqual([first.status, first.outcome, first.nextAttempt], ['pending', 'retrying', NOW + 1000]);
    const second = attemptEffect({ attempts: 2, roundStart: 0 }, result(null), schedule, NOW);
    assert.equal(second.nextAttempt, NOW + 5000);
    assert.equal(second.disable, false);
  });

  it('the last attempt of the round gives up', () => {
    const e = attemptEffect({ attempts: 3, roundStart: 0 }, result(503), schedule, NOW);
    assert.deepEqual([e.status, e.outcome, e.nextAttempt, e.gaveUp], ['failed', 'failed', null, true]);
  });

  it('a redelivery counts attempts from the start of its round', () => {
    const e = attemptEffect({ attempts: 4, roundStart: 3 }, result(500), schedule, NOW);
    assert.equal(e.nextAttempt, NOW + 1000);
  });

  it('Retry-After on 429 and 503 postpones the retry, capped; on 500 it is ignored', () => {
    const late = attemptEffect(
      { attempts: 1, roundStart: 0 },
      result(429, { retryAfter: '30' }),
      schedule,
      NOW,
    );
    assert.equal(late.nextAttempt, NOW + 30_000);
    const capped = attemptEffect(
      { attempts: 1, roundStart: 0 },
      result(503, { retryAfter: '7200' }),
      schedule,
      NOW,
    );
    assert.equal(capped.nextAttempt, NOW + 60_000);
    const ignored = attemptEffect(
      { attempts: 1, roundStart: 0 },
      result(500, { retryAfter: '30' }),
      schedule,
      NOW,
    );
    assert.equal(ignored.nextAttempt, NOW + 1000);
  });
});
