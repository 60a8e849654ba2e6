import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { metricSamples as samples } from '../helpers/metrics.js';
import { createHook, startReceiver, startUpstream } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// What the operations listener says of the delivery threads, read from outside: /readyz's
// `deliveryThreads` and the three metrics, on a daemon that sends on threads and on one that
// sends from its own loop.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A daemon with `threads` delivery threads, one hook on `/orders`, and `n` callbacks sent. */
async function daemonThatSent(threads: number, n: number): Promise<TestDaemon> {
  const upstream = await startUpstream();
  const receiver = await startReceiver();
  const d = await startHookd({ upstream: upstream.url, deliveryThreads: threads });
  cleanups.push(
    () => upstream.close(),
    () => receiver.close(),
    () => d.close(),
  );
  await createHook(d, { PathPattern: '/orders', Methods: ['POST'], Callback: `${receiver.url}/cb` });
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${d.url}/orders`, { method: 'POST', body: '{}' });
    await r.text();
  }
  await receiver.waitFor(n);
  return d;
}

describe('the delivery threads on the operations listener', () => {
  it('/readyz and the metrics count the threads, and every attempt is counted on one of them', async () => {
    const n = 12;
    const d = await daemonThatSent(2, n);
    const ready = await api<{ status: string; deliveryThreads: unknown }>(
      d.opsUrl,
      undefined,
      'GET',
      '/readyz',
    );
    assert.equal(ready.status, 200);
    assert.equal(ready.body.status, 'ready');
    assert.deepEqual(ready.body.deliveryThreads, { running: 2, configured: 2 });

    // The attempt is counted when it is handed to a thread, before the receiver sees it; the
    // busy time once the thread reports its loop's use.
    await until('every attempt counted on a thread', async () => {
      const text = (await api<string>(d.opsUrl, undefined, 'GET', '/metrics')).text;
      const attempts = samples(text, 'hookd_delivery_thread_attempts_total');
      return [...attempts.values()].reduce((a, b) => a + b, 0) === n;
    });
    const text = (await api<string>(d.opsUrl, undefined, 'GET', '/metrics')).text;
    assert.deepEqual([...samples(text, 'hookd_delivery_threads')], [['', 2]]);
    const attempts = samples(text, 'hookd_delivery_thread_attempts_total');
    assert.deepEqual([...attempts.keys()].sort(), ['{thread="0"}', '{thread="1"}']);
    const busy = samples(text, 'hookd_delivery_thread_busy_seconds_total');
    assert.deepEqual([...busy.keys()].sort(), ['{thread="0"}', '{thread="1"}']);
    for (const [thread, seconds] of busy) {
      assert.ok(seconds >= 0 && Number.isFinite(seconds), `busy seconds of ${thread}: ${seconds}`);
    }
    assert.match(text, /^# TYPE hookd_delivery_threads gauge$/m);
    assert.match(text, /^# TYPE hookd_delivery_thread_attempts_total counter$/m);
    assert.match(text, /^# TYPE hookd_delivery_thread_busy_seconds_total counter$/m);
  });

  it('with --delivery-threads 0 the loop sends: none running, none configured, no per-thread series', async () => {
    const d = await daemonThatSent(0, 3);
    const ready = await api<{ deliveryThreads: unknown }>(d.opsUrl, undefined, 'GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body.deliveryThreads, { running: 0, configured: 0 });
    const text = (await api<string>(d.opsUrl, undefined, 'GET', '/metrics')).text;
    assert.deepEqual([...samples(text, 'hookd_delivery_threads')], [['', 0]]);
    assert.equal(samples(text, 'hookd_delivery_thread_attempts_total').size, 0);
  });
});
