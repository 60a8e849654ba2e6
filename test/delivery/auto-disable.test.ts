import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AutoDisable, type DisableRequest, duration } from '../../src/delivery/auto-disable.js';
import { CircuitBreaker } from '../../src/delivery/circuit-breaker.js';
import type { AttemptMessage } from '../../src/delivery/delivery-events.js';

function attempt(
  hookId: string,
  time: number,
  outcome: AttemptMessage['Outcome'],
  extra: Partial<AttemptMessage> = {},
): AttemptMessage {
  return {
    kind: 'attempt',
    Time: new Date(time).toISOString(),
    HookId: hookId,
    DeliveryId: 'msg_x',
    Attempt: 1,
    Method: 'POST',
    Url: 'http://r.example/',
    StatusCode: outcome === 'succeeded' ? 200 : 500,
    LatencyMs: 1,
    Outcome: outcome,
    Error: null,
    Trigger: { Kind: 'request', Method: 'GET', Path: '/', StatusCode: 200, User: null },
    ...extra,
  };
}

function tracker(opts: { periodMs: number; minFailures: number }, lastSuccess?: number) {
  let now = 0;
  const disabled: DisableRequest[] = [];
  const ad = new AutoDisable({
    options: opts,
    tracks: (id) => !id.startsWith('ne_'),
    lastSuccess: async () => lastSuccess,
    disable: async (r) => {
      disabled.push(r);
    },
    now: () => now,
  });
  return {
    ad,
    disabled,
    at(t: number) {
      now = t;
    },
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('auto-disable', () => {
  it('needs both the period and the count: many fast failures or a long slow streak alone are not enough', async () => {
    const t = tracker({ periodMs: 1000, minFailures: 3 });
    for (const ms of [0, 10, 20, 30, 40]) {
      t.at(ms);
      t.ad.observe(attempt('hk_a', ms, 'retrying'));
    }
    await settle();
    assert.equal(t.disabled.length, 0, '5 failures within 40 ms: the period is not over');
    t.at(1000);
    t.ad.observe(attempt('hk_a', 1000, 'failed'));
    await settle();
    assert.equal(t.disabled.length, 1);
    assert.equal(t.disabled[0]!.cause, 'failing');
    assert.equal(t.disabled[0]!.failedAttempts, 6);
    assert.match(t.disabled[0]!.reason, /every attempt failed for 1s \(6 failed attempts/);

    const slow = tracker({ periodMs: 1000, minFailures: 3 });
    slow.at(0);
    slow.ad.observe(attempt('hk_b', 0, 'retrying'));
    slow.at(5000);
    slow.ad.observe(attempt('hk_b', 5000, 'retrying'));
    await settle();
    assert.equal(slow.disabled.length, 0, '2 failures over 5 s: under the count');
  });

  it('a success restarts the streak; attempts not sent, 410s and notification endpoints do not count', async () => {
    const t = tracker({ periodMs: 100, minFailures: 2 });
    t.at(0);
    t.ad.observe(attempt('hk_a', 0, 'retrying'));
    t.at(50);
    t.ad.observe(attempt('hk_a', 50, 'succeeded'));
    t.at(200);
    t.ad.observe(attempt('hk_a', 200, 'retrying'));
    t.ad.observe(
      attempt('hk_a', 200, 'retrying', { StatusCode: null, Error: 'not sent: the circuit for x is open' }),
    );
    t.ad.observe(attempt('hk_a', 200, 'failed', { StatusCode: 410 }));
    for (const ms of [0, 500]) t.ad.observe(attempt('ne_x', ms, 'retrying'));
    await settle();
    assert.equal(t.disabled.length, 0);
    assert.equal(t.ad.failing, 1);
    t.at(300);
    t.ad.observe(attempt('hk_a', 300, 'retrying'));
    await settle();
    assert.equal(t.disabled.length, 1);
  });

  it('a success recorded elsewhere (another instance) since the streak began keeps the hook enabled', async () => {
    const t = tracker({ periodMs: 100, minFailures: 2 }, 150);
    for (const ms of [0, 100, 200]) {
      t.at(ms);
      t.ad.observe(attempt('hk_a', ms, 'retrying'));
    }
    await settle();
    assert.equal(t.disabled.length, 0);
  });

  it('periodMs 0 turns it off', async () => {
    const t = tracker({ periodMs: 0, minFailures: 1 });
    for (const ms of [0, 1e9]) {
      t.at(ms);
      t.ad.observe(attempt('hk_a', ms, 'failed'));
    }
    await settle();
    assert.equal(t.disabled.length, 0);
  });

  it('durations read like 5d, 2h 30m, 800 ms', () => {
    assert.equal(duration(5 * 86_400_000), '5d');
    assert.equal(duration(9_000_000), '2h 30m');
    assert.equal(duration(800), '800 ms');
  });
});

describe('circuit breaker transitions (the notification seam)', () => {
  it('reports opened once per open (not on a failed probe) and closed when a probe gets an answer', () => {
    const seen: string[] = [];
    const b = new CircuitBreaker(
      { threshold: 2, cooldownMs: 10, maxCooldownMs: 100, onTransition: (k, t) => seen.push(`${k} ${t}`) },
      'http://r.example',
    );
    b.record('fail', false, 0);
    b.record('ok', false, 1);
    assert.deepEqual(seen, [], 'a failure then an answer: still closed, no transition');
    b.record('fail', false, 2);
    b.record('fail', false, 3);
    assert.deepEqual(seen, ['http://r.example opened']);
    assert.equal(b.allow(20), 'probe');
    b.record('fail', true, 20);
    assert.deepEqual(seen, ['http://r.example opened'], 'a failed probe re-opens quietly');
    assert.equal(b.allow(100), 'probe');
    b.record('ok', true, 100);
    assert.deepEqual(seen, ['http://r.example opened', 'http://r.example closed']);
  });
});
