import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CircuitBreaker } from '../../src/delivery/circuit-breaker.js';
import { FairLimiter } from '../../src/delivery/fairness.js';

interface Job {
  origin: string;
  n: number;
}

/** A limiter whose jobs stay running until the test ends them, with a hand-moved clock. */
function harness(limits: {
  concurrency: number;
  perDestination: number;
  threshold?: number;
  cooldownMs?: number;
}) {
  let now = 1_000_000;
  const running: { job: Job; probe: boolean }[] = [];
  const shed: { job: Job; reason: string }[] = [];
  const limiter = new FairLimiter<Job>(
    {
      concurrency: limits.concurrency,
      perDestination: limits.perDestination,
      breaker: {
        threshold: limits.threshold ?? 3,
        cooldownMs: limits.cooldownMs ?? 1000,
        maxCooldownMs: 4000,
      },
    },
    (job, probe) => running.push({ job, probe }),
    (job, reason) => shed.push({ job, reason }),
    () => now,
  );
  const finish = (origin: string, outcome: 'ok' | 'fail' | 'none') => {
    const i = running.findIndex((r) => r.job.origin === origin);
    assert.ok(i >= 0, `a job for ${origin} is running`);
    const [r] = running.splice(i, 1);
    limiter.done(r!.job, outcome, r!.probe);
  };
  return {
    limiter,
    running,
    shed,
    finish,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('FairLimiter', () => {
  it('caps attempts per destination, so a hanging one leaves slots for the others', () => {
    const h = harness({ concurrency: 10, perDestination: 2 });
    for (let n = 0; n < 50; n++) h.limiter.submit({ origin: 'http://hang', n });
    for (let n = 0; n < 5; n++) h.limiter.submit({ origin: 'http://ok', n });
    assert.equal(h.running.filter((r) => r.job.origin === 'http://hang').length, 2);
    assert.equal(h.running.filter((r) => r.job.origin === 'http://ok').length, 2);
    // The healthy destination finishes its jobs one after another while the hanging two never end.
    for (let i = 0; i < 5; i++) h.finish('http://ok', 'ok');
    assert.equal(h.running.filter((r) => r.job.origin === 'http://ok').length, 0);
    assert.equal(h.limiter.queued, 48);
  });

  it('shares free global slots between destinations in turn', () => {
    const h = harness({ concurrency: 2, perDestination: 2 });
    for (let n = 0; n < 10; n++) h.limiter.submit({ origin: 'http://a', n });
    h.limiter.submit({ origin: 'http://b', n: 0 });
    assert.deepEqual(
      h.running.map((r) => r.job.origin),
      ['http://a', 'http://a'],
    );
    h.finish('http://a', 'ok');
    assert.equal(h.running[1]!.job.origin, 'http://b', "b gets the next free slot despite a's backlog");
  });

  it('opens the circuit after consecutive failures, sheds what waits, probes after the cool-down', () => {
    const h = harness({ concurrency: 10, perDestination: 1, threshold: 3, cooldownMs: 1000 });
    for (let n = 0; n < 6; n++) h.limiter.submit({ origin: 'http://bad', n });
    h.finish('http://bad', 'fail');
    h.finish('http://bad', 'fail');
    assert.equal(h.shed.length, 0);
    h.finish('http://bad', 'fail');
    assert.equal(h.shed.length, 3, 'the three waiting jobs are shed at once');
    assert.match(h.shed[0]!.reason, /circuit for http:\/\/bad is open/);
    h.limiter.submit({ origin: 'http://bad', n: 6 });
    assert.equal(h.shed.length, 4, 'new jobs are shed while open');
    assert.deepEqual([...h.limiter.breakers()], [{ destination: 'http://bad', state: 'open' }]);
    assert.equal(h.running.length, 0);

    h.advance(1000);
    h.limiter.submit({ origin: 'http://bad', n: 7 });
    assert.equal(h.running.length, 1);
    assert.equal(h.running[0]!.probe, true, 'the first job after the cool-down is the probe');
    h.limiter.submit({ origin: 'http://bad', n: 8 });
    assert.equal(h.shed.length, 5, 'others are shed while the probe is out');
    h.finish('http://bad', 'ok');
    h.limiter.submit({ origin: 'http://bad', n: 9 });
    assert.equal(h.running.length, 1);
    assert.equal(h.running[0]!.probe, false, 'closed again');
    assert.deepEqual([...h.limiter.breakers()], [], 'a closed circuit without failures is not listed');
  });

  it('a 4xx-style answer resets the failure count', () => {
    const h = harness({ concurrency: 10, perDestination: 1, threshold: 2 });
    for (let n = 0; n < 4; n++) h.limiter.submit({ origin: 'http://x', n });
    h.finish('http://x', 'fail');
    h.finish('http://x', 'ok');
    h.finish('http://x', 'fail');
    assert.equal(h.shed.length, 0);
  });
});

describe('CircuitBreaker', () => {
  it('doubles the cool-down after a failed probe, up to the maximum', () => {
    const b = new CircuitBreaker({ threshold: 1, cooldownMs: 100, maxCooldownMs: 300 });
    assert.ok(b.record('fail', false, 0));
    assert.equal(b.openUntil, 100);
    assert.equal(b.allow(50), 'skip');
    assert.equal(b.allow(100), 'probe');
    assert.ok(b.record('fail', true, 100));
    assert.equal(b.openUntil, 300);
    assert.equal(b.allow(300), 'probe');
    assert.ok(b.record('fail', true, 300));
    assert.equal(b.openUntil, 600, 'capped at 300 ms');
    assert.equal(b.allow(600), 'probe');
    assert.ok(!b.record('none', true, 600), 'a probe that learned nothing lets another probe');
    assert.equal(b.allow(600), 'probe');
    b.record('ok', true, 601);
    assert.equal(b.state, 'closed');
    assert.ok(b.pristine);
  });
});
