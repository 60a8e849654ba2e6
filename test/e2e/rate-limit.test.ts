import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Hook } from '../../src/hook/hook.js';
import { busiestWindow } from '../delivery/rate-limit.test.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook, firedCalls, fireMark, type Receiver, startReceiver } from '../helpers/servers.js';

// A hook limited to 10 callbacks a second (Burst 10) gets a burst of 100 triggers: all 100 are
// delivered, never more than 10 a second plus the burst, and the wait shows in the delivery log
// (RateLimitWaitMs) and in the metrics.

describe('RateLimit per hook', { timeout: 60_000 }, () => {
  let receiver: Receiver;
  let d: TestDaemon;
  let hook: Hook;

  before(async () => {
    receiver = await startReceiver();
    d = await startHookd();
    hook = await createHook(d, {
      PathPattern: '/orders/(*)',
      Methods: ['POST'],
      Callback: `${receiver.url}/cb`,
      RateLimit: { PerSecond: 10, Burst: 10 },
    });
  });
  after(async () => {
    await d.close();
    await receiver.close();
  });

  it('is stored and shown with the hook', () => {
    assert.deepEqual(hook.RateLimit, { PerSecond: 10, Burst: 10 });
  });

  it('a burst of 100 triggers arrives at ≤ 10/s ± the burst, all 100 delivered', async () => {
    const burst = Array.from({ length: 100 }, (_, i) => ({
      Method: 'POST',
      Path: `/orders/${i}`,
      StatusCode: 201,
    }));
    const mark = await fireMark(d.opsUrl, receiver);
    const r = await api(d.url, d.token, 'POST', '/_hookd/report', burst);
    assert.equal(r.status, 202, r.text);
    const calls = await receiver.waitFor(100, 30_000);
    assert.equal(calls.length, 100);
    // Each event document names its own trigger: 100 different bodies, each once.
    assert.equal(new Set(calls.map((c) => c.body)).size, 100, 'every trigger delivered once');
    // When hookd sent each one, from its delivery log: arrival times at the receiver bunch up on
    // a loaded machine, the send times are what the limit governs.
    const list = await api<{ Id: string }[]>(d.url, d.token, 'GET', `/hooks/${hook.Id}/deliveries?limit=100`);
    const sent: number[] = [];
    for (const item of list.body) {
      const one = await api<{ AttemptLog: { Time: string }[] }>(
        d.url,
        d.token,
        'GET',
        `/_hookd/deliveries/${item.Id}`,
      );
      sent.push(Date.parse(one.body.AttemptLog[0]!.Time));
    }
    const times = sent.sort((a, b) => a - b);
    assert.equal(times.length, 100);
    // Sent at most rate + burst in any second: a late timer lets a few go together, but never
    // more than the bucket holds.
    const busiest = busiestWindow(times, 1000);
    assert.ok(busiest <= 10 + 10, `at most rate + burst in any second, got ${busiest}`);
    const span = Math.max(...times) - Math.min(...times);
    // 90 callbacks after the burst at 100 ms intervals: about 9 s (timers may run late, never early).
    assert.ok(span >= 8500, `spread over ${Math.round(span)} ms`);
    assert.equal((await firedCalls(d.opsUrl, receiver, mark)).length, 100);
  });

  it('the wait shows in the delivery log and the metrics', async () => {
    const list = await api<{ Items?: { Id: string }[] } | { Id: string }[]>(
      d.url,
      d.token,
      'GET',
      `/hooks/${hook.Id}/deliveries?limit=100`,
    );
    assert.equal(list.status, 200, list.text);
    const items = Array.isArray(list.body) ? list.body : (list.body.Items ?? []);
    assert.equal(items.length, 100);
    let waited = 0;
    for (const item of items) {
      const one = await api<{ AttemptLog: { RateLimitWaitMs?: number }[] }>(
        d.url,
        d.token,
        'GET',
        `/_hookd/deliveries/${item.Id}`,
      );
      assert.equal(one.status, 200, one.text);
      if ((one.body.AttemptLog[0]?.RateLimitWaitMs ?? 0) > 0) waited++;
    }
    assert.ok(waited >= 85, `${waited} of 100 attempts waited for the rate limit`);
    const metrics = await fetch(`${d.opsUrl}/metrics`).then((r) => r.text());
    const delays = Number(/^hookd_rate_limit_delays_total (\d+)/m.exec(metrics)?.[1]);
    assert.ok(delays >= 85, `hookd_rate_limit_delays_total ${delays}`);
    assert.match(metrics, /^hookd_rate_limit_wait_seconds_total \d/m);
  });
});
