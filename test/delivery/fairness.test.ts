import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CircuitBreaker } from '../../src/delivery/circuit-breaker.js';
import { FairLimiter } from '../../src/delivery/fairness.js';

interface Job {
  origin: string;
  endpoint: string;
  n: number;
}

/** A job for one endpoint: `http://host/path`, or the host's root endpoint. */
function job(url: string, n: number): Job {
  const u = new URL(url);
  return { origin: u.origin, endpoint: `${u.origin}${u.pathname === '/' ? '' : u.pathname}`, n };
}

/** A limiter whose jobs stay running until the test ends them, with a hand-moved clock. */
function harness(limits: {
  concurrency: number;
  perDestination: number;
  perEndpoint?: number;
  threshold?: number;
  cooldownMs?: number;
}) {
  let now = 1_000_000;
  const running: { job: Job; probe: number }[] = [];
  const shed: { job: Job; reason: string }[] = [];
  const limiter = new FairLimiter<Job>(
    {
      concurrency: limits.concurrency,
      perHost: limits.perDestination,
      perEndpoint: limits.perEndpoint ?? limits.perDestination,
      breaker: {
        threshold: limits.threshold ?? 3,
        cooldownMs: limits.cooldownMs ?? 1000,
        maxCooldownMs: 4000,
      },
    },
    (job, probe) => {
      running.push({ job, probe });
    },
    (job, reason) => shed.push({ job, reason }),
    () => now,
  );
  const finish = (key: string, outcome: 'ok' | 'fail' | 'timeout' | 'unreachable' | 'none') => {
    const i = running.findIndex((r) => r.job.origin === key || r.job.endpoint === key);
    assert.ok(i >= 0, `a job for ${key} is running`);
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
    for (let n = 0; n < 50; n++) h.limiter.submit(job('http://hang', n));
    for (let n = 0; n < 5; n++) h.limiter.submit(job('http://ok', n));
    assert.equal(h.running.filter((r) => r.job.origin === 'http://hang').length, 2);
    assert.equal(h.running.filter((r) => r.job.origin === 'http://ok').length, 2);
    // The healthy destination finishes its jobs one after another while the hanging two never end.
    for (let i = 0; i < 5; i++) h.finish('http://ok', 'ok');
    assert.equal(h.running.filter((r) => r.job.origin === 'http://ok').length, 0);
    assert.equal(h.limiter.queued, 48);
  });

  it('shares free global slots between destinations in turn', () => {
    const h = harness({ concurrency: 2, perDestination: 2 });
    for (let n = 0; n < 10; n++) h.limiter.submit(job('http://a', n));
    h.limiter.submit(job('http://b', 0));
    assert.deepEqual(
      h.running.map((r) => r.job.origin),
      ['http://a', 'http://a'],
    );
    h.finish('http://a', 'ok');
    assert.equal(h.running[1]!.job.origin, 'http://b', "b gets the next free slot despite a's backlog");
  });

  it('opens the circuit after consecutive failures, sheds what waits, probes after the cool-down', () => {
    const h = harness({ concurrency: 10, perDestination: 1, threshold: 3, cooldownMs: 1000 });
    for (let n = 0; n < 6; n++) h.limiter.submit(job('http://bad', n));
    h.finish('http://bad', 'fail');
    h.finish('http://bad', 'fail');
    assert.equal(h.shed.length, 0);
    h.finish('http://bad', 'fail');
    assert.equal(h.shed.length, 3, 'the three waiting jobs are shed at once');
    assert.match(h.shed[0]!.reason, /circuit for endpoint http:\/\/bad is open/);
    h.limiter.submit(job('http://bad', 6));
    assert.equal(h.shed.length, 4, 'new jobs are shed while open');
    assert.deepEqual(
      [...h.limiter.breakers()],
      [
        { scope: 'host', destination: 'http://bad', state: 'closed' },
        { scope: 'endpoint', destination: 'http://bad', state: 'open' },
      ].filter((b) => b.scope === 'endpoint'),
    );
    assert.equal(h.running.length, 0);

    h.advance(1000);
    h.limiter.submit(job('http://bad', 7));
    assert.equal(h.running.length, 1);
    assert.equal(h.running[0]!.probe, 1, 'the first job after the cool-down is the endpoint probe');
    h.limiter.submit(job('http://bad', 8));
    assert.equal(h.shed.length, 5, 'others are shed while the probe is out');
    h.finish('http://bad', 'ok');
    h.limiter.submit(job('http://bad', 9));
    assert.equal(h.running.length, 1);
    assert.equal(h.running[0]!.probe, 0, 'closed again');
    assert.deepEqual([...h.limiter.breakers()], [], 'a closed circuit without failures is not listed');
  });

  it('a 4xx-style answer resets the failure count', () => {
    const h = harness({ concurrency: 10, perDestination: 1, threshold: 2 });
    for (let n = 0; n < 4; n++) h.limiter.submit(job('http://x', n));
    h.finish('http://x', 'fail');
    h.finish('http://x', 'ok');
    h.finish('http://x', 'fail');
    assert.equal(h.shed.length, 0);
  });
});

describe('FairLimiter: endpoints inside a host', () => {
  it('caps each endpoint inside its host, so a hanging endpoint leaves its host to the others', () => {
    const h = harness({ concurrency: 100, perDestination: 8, perEndpoint: 2 });
    for (let n = 0; n < 50; n++) h.limiter.submit(job('http://chat/hang', n));
    for (let n = 0; n < 20; n++) h.limiter.submit(job(`http://chat/user${n}`, n));
    const hanging = () => h.running.filter((r) => r.job.endpoint === 'http://chat/hang').length;
    assert.equal(hanging(), 2, 'the hanging endpoint holds its own two slots only');
    assert.equal(h.running.length, 8, 'the host cap holds');
    assert.equal(h.limiter.heldCounts.endpoint, 48);
    assert.ok(h.limiter.heldCounts.host > 0, 'the host cap held some of the others back');
    // The healthy endpoints finish one after another; each of them gets through.
    for (let n = 0; n < 20; n++) h.finish(`http://chat/user${n}`, 'ok');
    assert.equal(hanging(), 2);
    assert.equal(h.running.length, 2, 'only the hanging two are left');
    assert.equal(h.limiter.queued, 48);
  });

  it('lets the endpoints of one host take its free slots in turn', () => {
    const h = harness({ concurrency: 100, perDestination: 1, perEndpoint: 1 });
    for (let n = 0; n < 5; n++) h.limiter.submit(job('http://chat/a', n));
    h.limiter.submit(job('http://chat/b', 0));
    h.limiter.submit(job('http://chat/c', 0));
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = h.running[0]!;
      order.push(r.job.endpoint.slice('http://chat/'.length));
      h.finish(r.job.endpoint, 'ok');
    }
    assert.deepEqual(order, ['a', 'b', 'c', 'a'], "b and c do not wait for a's backlog");
  });

  it('opens an endpoint circuit on answers and time-outs without touching its siblings', () => {
    const h = harness({ concurrency: 100, perDestination: 10, perEndpoint: 1, threshold: 2 });
    for (let n = 0; n < 4; n++) h.limiter.submit(job('http://chat/broken', n));
    h.finish('http://chat/broken', 'fail');
    h.finish('http://chat/broken', 'timeout');
    assert.equal(h.shed.length, 2, 'what waited for the broken endpoint is shed');
    assert.match(h.shed[0]!.reason, /circuit for endpoint http:\/\/chat\/broken is open/);
    h.limiter.submit(job('http://chat/fine', 0));
    assert.equal(h.running.length, 1, 'another endpoint of the host still goes');
    assert.deepEqual(
      [...h.limiter.breakers()].map((b) => `${b.scope} ${b.destination} ${b.state}`),
      ['endpoint http://chat/broken open'],
      'answers (even 5xx) keep the host circuit closed',
    );
  });

  it('opens the host circuit on connection failures, for every endpoint of the host', () => {
    const h = harness({ concurrency: 100, perDestination: 10, perEndpoint: 1, threshold: 2 });
    h.limiter.submit(job('http://down/a', 0));
    h.limiter.submit(job('http://down/b', 0));
    h.limiter.submit(job('http://down/c', 0));
    h.limiter.submit(job('http://down/c', 1));
    h.finish('http://down/a', 'unreachable');
    h.finish('http://down/b', 'unreachable');
    assert.equal(h.shed.length, 1, "c's waiting job is shed with the host");
    assert.match(
      h.shed[0]!.reason,
      /circuit for host http:\/\/down is open after repeated connection failures/,
    );
    h.limiter.submit(job('http://down/d', 0));
    assert.equal(h.shed.length, 2, 'a new endpoint of that host is shed too');
    assert.equal(h.limiter.heldCounts.host_circuit, 2);
    assert.deepEqual(
      [...h.limiter.breakers()].map((b) => `${b.scope} ${b.destination} ${b.state}`),
      ['host http://down open'],
      'a refused connection says nothing against the endpoints themselves',
    );
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
