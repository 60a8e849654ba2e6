import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { DeliveryPipeline } from '../../src/delivery/pipeline.js';
import { samePlanForAll } from '../../src/delivery/plan/index.js';
import { connectTunnel, egressProxyOf } from '../../src/egress/index.js';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { api, startHookd } from '../helpers/hookd.js';
import { closedPort } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { startConnectProxy } from './connect-proxy.js';

// Egress through a forward proxy. The receiver listens on 127.0.0.2 (the only network
// callbacks may reach); the proxy on 127.0.0.1, which the policy does not allow: its own address
// is exempt. The receiver checks that every connection came from the proxy's side of a tunnel.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Seen {
  path: string;
  peerPort: number;
}

async function receiverOn(host: string): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', peerPort: req.socket.remotePort ?? 0 });
    req.resume();
    // 410 Gone disables the hook, which sends a notification.
    req.on('end', () => res.writeHead(req.url === '/gone' ? 410 : 200).end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://${host}:${(server.address() as AddressInfo).port}`, seen };
}

const AUTH = `Basic ${Buffer.from('hookd:s3cret').toString('base64')}`;

describe('egress through a forward proxy (daemon)', () => {
  it('sends every callback and notification through the proxy, with its credentials', async () => {
    const proxy = await startConnectProxy({ auth: AUTH });
    cleanups.push(() => proxy.close());
    const rcv = await receiverOn('127.0.0.2');
    const d = await startHookd({
      allowCallbackNets: ['127.0.0.2/32'],
      callbackProxy: `http://hookd:s3cret@127.0.0.1:${proxy.port}`,
    });
    cleanups.push(() => d.close());

    const note = await api(d.url, d.token, 'POST', '/_hookd/notifications', {
      Url: `${rcv.url}/notify`,
      Events: ['hook.disabled'],
    });
    assert.equal(note.status, 201, note.text);
    for (const [pattern, path] of [
      ['/via/*', '/cb'],
      ['/gone/*', '/gone'],
    ]) {
      const hook = await api(d.url, d.token, 'POST', '/hooks', {
        PathPattern: pattern,
        Methods: ['GET'],
        Callback: `${rcv.url}${path}`,
      });
      assert.equal(hook.status, 201, hook.text);
    }
    const fired = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: '/via/1', StatusCode: 200, Phase: 'after' },
      { Method: 'GET', Path: '/gone/1', StatusCode: 200, Phase: 'after' },
    ]);
    assert.equal(fired.body.fired, 2, fired.text);
    await until('the callback', () => rcv.seen.some((s) => s.path === '/cb'));
    // The 410 disabled the second hook: the notification of that comes through the proxy too.
    await until('the notification', () => rcv.seen.some((s) => s.path === '/notify'));

    const tunnels = proxy.requests.filter((r) => r.upstreamPort !== undefined);
    assert.ok(tunnels.length >= 1);
    for (const r of proxy.requests) {
      assert.equal(r.authorization, AUTH, 'the credentials of the URL');
      assert.match(r.target, /^127\.0\.0\.2:\d+$/, 'the tunnel goes to the checked address');
    }
    const fromProxy = new Set(tunnels.map((t) => t.upstreamPort));
    for (const s of rcv.seen) assert.ok(fromProxy.has(s.peerPort), `${s.path} came through the proxy`);
  });
});

describe('egress through a forward proxy (pipeline)', () => {
  let seq = 0;
  function event(url: string): FiredEvent {
    return {
      hookId: `hk_egress${++seq}`,
      owner: 'alice',
      hookType: 1,
      persist: false,
      firedAt: new Date().toISOString(),
      trigger: { method: 'GET', path: '/x' },
      request: { method: 'POST', url, headers: { 'content-type': 'application/json' }, body: '{}' },
    };
  }

  async function pipelineVia(proxyUrl: string) {
    const p = new DeliveryPipeline({
      stores: { durable: new MemoryDeliveryStore(), ephemeral: new MemoryDeliveryStore() },
      send: {
        policy: new AddressPolicy(['127.0.0.2/32']),
        // evil.test stands for a name that resolves to a forbidden address (cloud metadata).
        lookup: async (name) => (name === 'evil.test' ? ['169.254.169.254'] : ['127.0.0.2']),
        tunnel: connectTunnel(egressProxyOf(proxyUrl)),
      },
      schedule: { delaysMs: [0, 60_000], jitter: 0 },
      plans: samePlanForAll(),
    });
    await p.start();
    cleanups.push(() => p.close(0));
    return p;
  }

  it('refuses a forbidden target before the proxy is asked', async () => {
    const proxy = await startConnectProxy();
    cleanups.push(() => proxy.close());
    const p = await pipelineVia(proxy.url);
    const errors: (string | null)[] = [];
    p.events.on('attempt', (m) => errors.push(m.Error));
    p.accept([event('http://evil.test:8080/steal')]);
    await until('the attempt', () => errors.length > 0);
    assert.match(
      errors[0]!,
      /not sent: callback host evil\.test resolves to an address the callback policy refuses/,
    );
    assert.doesNotMatch(errors[0]!, /169\.254/, 'the delivery log does not say where the name pointed');
    assert.equal(proxy.requests.length, 0, 'the proxy was never asked');
  });

  it("a proxy that refuses, or is down, is a connection failure of the target's host, not of the proxy", async () => {
    const proxy = await startConnectProxy();
    cleanups.push(() => proxy.close());
    proxy.mode = 403;
    const rcv = await receiverOn('127.0.0.2');
    const p = await pipelineVia(proxy.url);
    const errors: (string | null)[] = [];
    p.events.on('attempt', (m) => errors.push(m.Error));
    p.accept([event(`${rcv.url}/a`)]);
    await until('the attempt', () => errors.length > 0);
    assert.match(
      errors[0]!,
      /HOOKD_PROXY_REFUSED: the callback proxy http:\/\/127\.0\.0\.1:\d+ refused CONNECT to 127\.0\.0\.2:\d+: 403/,
    );
    assert.equal(rcv.seen.length, 0);
    const breakers = [...p.breakers()];
    assert.deepEqual(
      breakers.map((b) => [b.scope, b.destination]),
      [['host', rcv.url]],
      "only the target host's breaker counts it",
    );

    const down = await pipelineVia(`http://127.0.0.1:${await closedPort()}`);
    const downErrors: (string | null)[] = [];
    down.events.on('attempt', (m) => downErrors.push(m.Error));
    down.accept([event(`${rcv.url}/b`)]);
    await until('the attempt', () => downErrors.length > 0);
    assert.match(downErrors[0]!, /ECONNREFUSED/);
    assert.deepEqual(
      [...down.breakers()].map((b) => [b.scope, b.destination]),
      [['host', rcv.url]],
    );
  });
});
