import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { DeliveryPipeline } from '../../src/delivery/pipeline.js';
import { DEFAULT_PLAN, samePlanForAll } from '../../src/delivery/plan/index.js';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { api, startHookd } from '../helpers/hookd.js';
import { until } from '../helpers/until.js';

// Endpoint verification by the CloudEvents validation handshake. Receivers that
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

/**
 * The pipeline with short verification waits (the daemon's are minutes), so that refusals and
 * time-outs end within a test; every hook asks for verification. What the daemon wires around it
 * (the per-hook mode, the allowed rate against a hook's own RateLimit) is in
 * verification-daemon.test.ts.
 */
async function pipeline() {
  const p: DeliveryPipeline = new DeliveryPipeline({
    stores: { durable: new MemoryDeliveryStore(), ephemeral: new MemoryDeliveryStore() },
    send: { policy: new AddressPolicy(['127.0.0.0/8']) },
    schedule: { delaysMs: [0, 60_000], jitter: 0 },
    plans: samePlanForAll({ ...DEFAULT_PLAN, verification: 'cloudevents' }),
    verification: { waitMs: 1500, timeoutMs: 500, retryMs: 300 },
  });
  await p.start();
  cleanups.push(() => p.close(0));
  return { p };
}

describe('endpoint verification (pipeline)', () => {
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
