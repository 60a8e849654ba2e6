import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { DeliveryPipeline } from '../../src/delivery/pipeline.js';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { api, startHookd } from '../helpers/hookd.js';
import { until } from '../helpers/until.js';

// Issue 24: endpoint verification by the CloudEvents validation handshake. Receivers that
// answer it (with a rate), refuse it, or never answer; deliveries wait for it, bounded.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Behaviour = 'agree' | 'refuse' | 'hang';
interface Seen {
  method: string;
  headers: IncomingHttpHeaders;
}

async function receiver(behaviour: Behaviour, rate?: string): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', headers: req.headers });
    req.resume();
    if (req.method !== 'OPTIONS') return void res.writeHead(200).end();
    if (behaviour === 'hang') return;
    if (behaviour === 'refuse') return void res.writeHead(403).end();
    res
      .writeHead(200, {
        'WebHook-Allowed-Origin': String(req.headers['webhook-request-origin']),
        ...(rate && { 'WebHook-Allowed-Rate': rate }),
      })
      .end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

let seq = 0;
function event(url: string): FiredEvent {
  return {
    hookId: `hk_verify${++seq}`,
    owner: 'alice',
    hookType: 1,
    persist: false,
    firedAt: new Date().toISOString(),
    trigger: { method: 'GET', path: '/x' },
    request: { method: 'POST', url, headers: { 'content-type': 'application/json' }, body: '{}' },
  };
}

async function pipeline(rateFromVerifier = false) {
  const p: DeliveryPipeline = new DeliveryPipeline({
    durable: new MemoryDeliveryStore(),
    ephemeral: new MemoryDeliveryStore(),
    policy: new AddressPolicy(['127.0.0.0/8']),
    schedule: { delaysMs: [0, 60_000], jitter: 0 },
    hookState: { isActive: () => true, disable: async () => undefined },
    verification: { modeFor: () => 'cloudevents', waitMs: 1500, timeoutMs: 500, retryMs: 300 },
    ...(rateFromVerifier && {
      rateLimitFor: (_id: string) => p.verifier?.rateFor(new URL(rcvUrl).origin),
    }),
  });
  let rcvUrl = '';
  await p.start();
  cleanups.push(() => p.close(0));
  return { p, setUrl: (u: string) => (rcvUrl = u) };
}

describe('endpoint verification (pipeline)', () => {
  it('a receiver that answers the handshake gets its deliveries after it; its allowed rate is applied', async () => {
    const rcv = await receiver('agree', '60');
    const { p, setUrl } = await pipeline(true);
    setUrl(rcv.url);
    const one = event(`${rcv.url}/a`);
    const events = [one, { ...one }, { ...one }];
    p.accept(events);
    await until('three deliveries', () => rcv.seen.filter((s) => s.method === 'POST').length === 3, 20_000);
    assert.equal(rcv.seen[0]!.method, 'OPTIONS', 'the handshake comes first');
    assert.equal(rcv.seen[0]!.headers['webhook-request-origin'], 'hookd');
    assert.equal(rcv.seen.filter((s) => s.method === 'OPTIONS').length, 1, 'cached per origin');
    assert.equal(p.verifier?.stateOf(new URL(rcv.url).origin), 'verified');
    assert.deepEqual(p.verifier?.rateFor(new URL(rcv.url).origin), { PerSecond: 1, Burst: 1 });
    // 60 a minute, one at a time: the later deliveries waited for the rate.
    const details = [];
    for (const d of (await p.list(one.hookId)).items) details.push(await p.getWithAttempts(d.id));
    assert.equal(details.length, 3);
    const waited = details.flatMap((d) => d?.attempts ?? []).filter((a) => (a.rateLimitWaitMs ?? 0) > 0);
    assert.ok(waited.length >= 1, 'the allowed rate held attempts back');
  });

  it('a receiver that refuses: nothing is sent, and the deliveries fail after the wait with the reason', async () => {
    const rcv = await receiver('refuse');
    const { p } = await pipeline();
    const e = event(`${rcv.url}/r`);
    p.accept([e]);
    await until(
      'the failed delivery',
      async () => (await p.list(e.hookId)).items[0]?.status === 'failed',
      20_000,
    );
    const d = (await p.list(e.hookId)).items[0]!;
    assert.match(
      d.lastError!,
      /not verified within 2 s \(the endpoint answered the validation request \(OPTIONS\) with 403\)/,
    );
    assert.equal(rcv.seen.filter((s) => s.method === 'POST').length, 0);
    assert.ok(rcv.seen.filter((s) => s.method === 'OPTIONS').length >= 2, 'the handshake was retried');
    assert.equal(p.verifier?.stateOf(new URL(rcv.url).origin), 'unverified');
  });

  it('a receiver that never answers: the handshake times out, the delivery fails, nothing is sent', async () => {
    const rcv = await receiver('hang');
    const { p } = await pipeline();
    const e = event(`${rcv.url}/h`);
    p.accept([e]);
    await until(
      'the failed delivery',
      async () => (await p.list(e.hookId)).items[0]?.status === 'failed',
      20_000,
    );
    assert.match((await p.list(e.hookId)).items[0]!.lastError!, /no answer within 500 ms/);
    assert.equal(rcv.seen.filter((s) => s.method === 'POST').length, 0);
  });
});

describe('endpoint verification (daemon)', () => {
  it('shows State "unverified" until the origin agrees, and the metrics count origins', async () => {
    const refusing = await receiver('refuse');
    const d = await startHookd({ callbackVerification: 'cloudevents' });
    cleanups.push(() => d.close());
    const hook = await api<{ Id: string; State: string }>(d.url, d.token, 'POST', '/hooks', {
      PathPattern: '/v/*',
      Methods: ['GET'],
      Callback: `${refusing.url}/cb`,
    });
    assert.equal(hook.status, 201, hook.text);
    assert.equal(hook.body.State, 'unverified');
    await api(d.url, d.token, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: '/v/1', StatusCode: 200, Phase: 'after' },
    ]);
    await until('the handshake', () => refusing.seen.some((s) => s.method === 'OPTIONS'));
    assert.equal(
      (await api<{ State: string }>(d.url, d.token, 'GET', `/hooks/${hook.body.Id}`)).body.State,
      'unverified',
    );
    const off = await api<{ State: string; Verification: string }>(
      d.url,
      d.token,
      'PUT',
      `/hooks/${hook.body.Id}`,
      {
        PathPattern: '/v/*',
        Methods: ['GET'],
        Callback: `${refusing.url}/cb`,
        Verification: 'off',
      },
    );
    assert.equal(off.body.State, 'active', 'a hook that asks for no verification is active');
    await until('the metric', async () =>
      /^hookd_endpoint_verification_origins\{state="unverified"\} 1$/m.test(
        await (await fetch(`${d.opsUrl}/metrics`)).text(),
      ),
    );
  });
});
