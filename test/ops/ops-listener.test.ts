import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { API_ROOTS } from '../../src/server/api-paths.js';
import { api, spawnHookd, startHookd, type TestDaemon } from '../helpers/hookd.js';
import {
  closedPort,
  createHook,
  type Receiver,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// Operations apart from the service: /metrics, /healthz and /readyz on the operations
// listener; the service's own /metrics, /healthz, /report … proxied through untouched; nothing on
// the public port names a callback destination to a caller without a token.

describe('--ops-listen', () => {
  it('defaults to 127.0.0.1:8471; off and false switch it off; a bad value is named', () => {
    assert.deepEqual(loadConfig({ env: {} }).opsListen, { host: '127.0.0.1', port: 8471 });
    assert.deepEqual(loadConfig({ env: { HOOKD_OPS_LISTEN: '[::1]:9100' } }).opsListen, {
      host: '::1',
      port: 9100,
    });
    assert.equal(loadConfig({ env: {}, flags: { opsListen: 'off' } }).opsListen, false);
    assert.throws(() => loadConfig({ env: { HOOKD_OPS_LISTEN: 'nowhere' } }), /HOOKD_OPS_LISTEN: "nowhere"/);
  });

  it('hookd claims of the upstream’s first path segments only hooks, hooktypes and _hookd', () => {
    assert.deepEqual([...API_ROOTS].sort(), ['_hookd', 'hooks', 'hooktypes']);
  });
});

describe('the operations listener and the public port', () => {
  let upstream: Upstream;
  let receiver: Receiver;
  let d: TestDaemon;

  before(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver({ status: 500 });
    d = await startHookd({ upstream: upstream.url });
    // A destination that shows in the breaker metrics once a callback to it failed.
    await createHook(d, { PathPattern: '/orders', Methods: ['POST'], Callback: `${receiver.url}/secret-cb` });
    const r = await fetch(`${d.url}/orders`, { method: 'POST', body: '{}' });
    await r.text();
    await receiver.waitFor(1);
    // The receiver has answered; the daemon records the outcome a moment later (the answer is
    // read on a delivery thread and handed to the core), and the breaker counts it then.
    await until('the failed attempt in the breaker metrics', async () =>
      (await api<string>(d.opsUrl, undefined, 'GET', '/metrics')).text.includes(
        `destination="${receiver.url}`,
      ),
    );
  });

  after(async () => {
    await d?.close();
    await receiver?.close();
    await upstream?.close();
  });

  it('serves /metrics, /healthz and /readyz without a token', async () => {
    assert.match(d.opsUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    const metrics = await api<string>(d.opsUrl, undefined, 'GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(metrics.text, /^hookd_build_info\{/m);
    // The operator's view names the destination; that is why it is not on the public port.
    assert.ok(metrics.text.includes(`destination="${receiver.url}`), 'breaker state by destination');
    assert.deepEqual((await api(d.opsUrl, undefined, 'GET', '/healthz')).body, { status: 'ok' });
    const ready = await api<{ status: string }>(d.opsUrl, undefined, 'GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.status, 'ready');
    const head = await fetch(`${d.opsUrl}/healthz`, { method: 'HEAD' });
    assert.equal(head.status, 200);
  });

  it('answers 405 with Allow for other methods and 404 elsewhere, as problem documents', async () => {
    const post = await api<{ code: string }>(d.opsUrl, undefined, 'POST', '/metrics', {});
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    assert.equal(post.body.code, 'METHOD_NOT_ALLOWED');
    const other = await api<{ code: string }>(d.opsUrl, undefined, 'GET', '/hooks');
    assert.equal(other.status, 404);
    assert.equal(other.body.code, 'NOT_FOUND');
  });

  it('the upstream’s own /metrics, /healthz, /readyz, /report, /match, /tail and /reload are proxied to it', async () => {
    upstream.reset();
    const paths = [
      '/metrics',
      '/healthz',
      '/readyz',
      '/report',
      '/match',
      '/tail',
      '/reload',
      '/deliveries/1',
    ];
    for (const path of paths) {
      const r = await api<{ url: string }>(d.url, undefined, 'GET', `${path}?x=1`);
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      assert.equal(r.body.url, `${path}?x=1`, `${path} reached the upstream`);
    }
    const post = await api<{ method: string; url: string }>(d.url, undefined, 'POST', '/report', { a: 1 });
    assert.equal(post.body.url, '/report');
    assert.deepEqual(
      upstream.requests.map((r) => r.url.split('?')[0]),
      [...paths, '/report'],
      'every one reached the upstream',
    );
  });

  it('no unauthenticated answer on the public port names a callback destination', async () => {
    const host = new URL(receiver.url).host;
    const probes = [
      '/metrics',
      '/_hookd/openapi.json',
      '/_hookd/metrics',
      '/hooks',
      '/hooktypes',
      '/_hookd/deliveries/x',
      '/_hookd/report',
      '/_hookd/tail',
      '/_hookd/reload',
    ];
    for (const path of probes) {
      for (const method of ['GET', 'POST']) {
        const r = await api(d.url, undefined, method, path, method === 'POST' ? {} : undefined);
        assert.ok(!r.text.includes(host), `${method} ${path} names ${host}: ${r.text.slice(0, 300)}`);
      }
    }
  });
});

describe('hookd processes and the operations listener', () => {
  it('the start-up line names opsUrl; --ops-listen off leaves it null and the port closed', async () => {
    const port = await closedPort();
    const off = await spawnHookd(['--ops-listen', 'off']);
    try {
      const start = off.lines
        .map((l) => JSON.parse(l) as { msg: string; opsUrl?: unknown })
        .find((r) => r.msg === 'listening');
      assert.equal(start?.opsUrl, null);
      assert.equal(off.opsUrl, '');
    } finally {
      await off.stop();
    }
    const on = await spawnHookd(['--ops-listen', `127.0.0.1:${port}`]);
    try {
      assert.equal(on.opsUrl, `http://127.0.0.1:${port}`);
      assert.equal((await fetch(`${on.opsUrl}/healthz`)).status, 200);
    } finally {
      assert.equal(await on.stop(), 0);
    }
    await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`), 'closed after the stop');
  });

  it('an operations port in use stops the start with exit 1, naming it', async () => {
    const first = await spawnHookd([]);
    try {
      const taken = new URL(first.opsUrl).port;
      const second = await spawnHookd(['--ops-listen', `127.0.0.1:${taken}`]).then(
        () => assert.fail('a second hookd started on a taken operations port'),
        (err: Error) => err,
      );
      assert.match(second.message, /exited with 1/);
      assert.match(second.message, /EADDRINUSE/);
      // Which listener, and the option that moves it.
      assert.match(second.message, /the operations listener/);
      assert.match(second.message, /--ops-listen HOST:PORT \(or --ops-listen off\)/);
    } finally {
      await first.stop();
    }
  });
});
