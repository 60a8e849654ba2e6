import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { deliveriesFeature, hooksFeature } from '../../../src/api/index.js';
import { Authenticator } from '../../../src/auth/authenticator.js';
import { DeliveryPipeline } from '../../../src/delivery/pipeline.js';
import type { FiredEvent } from '../../../src/engine/fired-event.js';
import type { Hook } from '../../../src/hook/hook.js';
import { AddressPolicy } from '../../../src/policy/address-policy.js';
import { type App, buildApp } from '../../../src/server/app.js';
import { HookService } from '../../../src/service/hook-service.js';
import { MemoryDeliveryStore } from '../../../src/store/memory/memory-delivery-store.js';
import { MemoryStore } from '../../../src/store/memory/memory-store.js';
import { Accounts } from '../../../src/users/accounts.js';
import { type Receiver, startReceiver } from '../../helpers/servers.js';
import { until } from '../../helpers/until.js';

// biome-ignore lint/suspicious/noExplicitAny: the JSON answers of the API under test
type Json = any;

interface Res {
  status: number;
  headers: Headers;
  body: Json;
}

let app: App;
let base: string;
let hooks: HookService;
let pipeline: DeliveryPipeline;
let receiver: Receiver;
let alice: string;
let bob: string;
let failing = true;

async function call(token: string, method: string, path: string, body?: unknown): Promise<Res> {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** What the engine would hand over when the hook fires. */
function fire(hook: Hook, path: string): void {
  const e: FiredEvent = {
    hookId: hook.Id,
    owner: hook.Owner,
    hookType: hook.Type,
    persist: hook.Persist,
    firedAt: new Date().toISOString(),
    trigger: { method: 'GET', path, statusCode: 200 },
    request: {
      method: hook.CallbackMethod,
      url: hook.Callback,
      headers: { ...hook.Headers, 'content-type': hook.CallbackContentMediaType },
      body: JSON.stringify({ path }),
    },
  };
  pipeline.accept([e]);
}

async function newHook(owner: string, path: string): Promise<Hook> {
  return hooks.create(owner, {
    PathPattern: '/repositories/*/timeseries/(*)',
    Callback: `${receiver.url}${path}`,
    Methods: ['GET'],
  });
}

before(async () => {
  receiver = await startReceiver({
    reply: () => ({ status: failing ? 500 : 200, body: failing ? 'nope' : 'ok' }),
  });
  const store = new MemoryStore();
  const accounts = new Accounts(store);
  await accounts.addUser('alice');
  await accounts.addUser('bob');
  alice = (await accounts.createToken('alice')).token;
  bob = (await accounts.createToken('bob')).token;
  hooks = new HookService(store, new MemoryStore());
  // The hook state the pipeline sees, kept up to date from the hook service, as the daemon does.
  const states = new Map<string, Hook['State']>();
  hooks.onChange({
    hookSaved: (h) => states.set(h.Id, h.State),
    hookDeleted: (id) => {
      states.delete(id);
      pipeline.hookDeleted(id);
    },
  });
  pipeline = new DeliveryPipeline({
    durable: new MemoryDeliveryStore(),
    ephemeral: new MemoryDeliveryStore(),
    policy: new AddressPolicy(['127.0.0.0/8']),
    schedule: { delaysMs: [0], jitter: 0 },
    // Every hook here shares one receiver that answers 500: its circuit must stay closed.
    limits: { breaker: { threshold: 1_000_000 } },
    hookState: {
      isActive: (id) => states.get(id) === 'active',
      disable: async (id) => {
        await hooks.setState(id, 'disabled');
      },
    },
  });
  await pipeline.start();
  app = await buildApp({
    config: { apiBase: '/api', bodyLimit: 1 << 20 },
    auth: new Authenticator(store),
    logger: pino({ level: 'silent' }),
    system: { draining: () => false, storeReady: async () => true },
    eventsEnabled: () => true,
    features: [hooksFeature({ hooks, base: '/api' }), deliveriesFeature({ hooks, pipeline, base: '/api' })],
  });
  await app.fastify.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api`;
});

after(async () => {
  await pipeline.close(0);
  await app.fastify.close();
  await receiver.close();
});

describe('delivery routes', () => {
  it("lists a hook's deliveries newest first, filtered and paged with Link", async () => {
    const hook = await newHook('alice', '/list');
    for (let i = 0; i < 5; i++) fire(hook, `/repositories/r1/timeseries/ts${i}`);
    await until('deliveries to end', () => pipeline.stats().live === 0);

    const all = await call(alice, 'GET', `/hooks/${hook.Id}/deliveries`);
    assert.equal(all.status, 200);
    assert.equal(all.body.length, 5);
    assert.deepEqual(
      all.body.map((d: Json) => d.Trigger.Path),
      [4, 3, 2, 1, 0].map((i) => `/repositories/r1/timeseries/ts${i}`),
    );
    const d = all.body[0];
    assert.match(d.Id, /^msg_/);
    assert.equal(d.HookId, hook.Id);
    assert.equal(d.Status, 'failed');
    assert.equal(d.Attempts, 1);
    assert.equal(d.LastStatusCode, 500);
    assert.equal(d.NextAttempt, null);
    assert.match(d.Created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    assert.deepEqual(d.Request, {
      Method: 'POST',
      Url: `${receiver.url}/list`,
      ContentType: 'application/json',
      Body: '{"path":"/repositories/r1/timeseries/ts4"}',
    });

    const page1 = await call(alice, 'GET', `/hooks/${hook.Id}/deliveries?limit=2&status=failed`);
    assert.equal(page1.body.length, 2);
    const link = page1.headers.get('link')!;
    assert.match(
      link,
      /^<\/api\/hooks\/hk_[^>]+\/deliveries\?limit=2&after=msg_[^&]+&status=failed>; rel="next"$/,
    );
    const next = link.slice(link.indexOf('/hooks'), link.indexOf('>'));
    const page2 = await call(alice, 'GET', next);
    assert.deepEqual(
      [...page1.body, ...page2.body].map((x: Json) => x.Id),
      all.body.slice(0, 4).map((x: Json) => x.Id),
    );
    assert.equal((await call(alice, 'GET', `/hooks/${hook.Id}/deliveries?status=succeeded`)).body.length, 0);
    const future = await call(alice, 'GET', `/hooks/${hook.Id}/deliveries?since=2999-01-01T00:00:00Z`);
    assert.deepEqual(future.body, []);

    const bad = await call(alice, 'GET', `/hooks/${hook.Id}/deliveries?status=lost&limit=0&since=yesterday`);
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.errors.map((e: Json) => e.field).sort(), ['limit', 'since', 'status']);
  });

  it('shows one delivery with its attempt log', async () => {
    const hook = await newHook('alice', '/one');
    fire(hook, '/repositories/r1/timeseries/one');
    await until('the delivery to end', () => pipeline.stats().live === 0);
    const [listed] = (await call(alice, 'GET', `/hooks/${hook.Id}/deliveries`)).body;
    const one = await call(alice, 'GET', `/_hookd/deliveries/${listed.Id}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.Id, listed.Id);
    assert.equal(one.body.AttemptLog.length, 1);
    const a = one.body.AttemptLog[0];
    assert.equal(a.Attempt, 1);
    assert.equal(a.StatusCode, 500);
    assert.equal(a.ResponseBody, 'nope');
    assert.equal(a.Error, null);
    assert.equal(typeof a.LatencyMs, 'number');
    assert.match(a.Time, /\+00:00$/);
  });

  it('redelivers one delivery and in bulk, answering 202', async () => {
    const hook = await newHook('alice', '/again');
    fire(hook, '/a');
    fire(hook, '/b');
    fire(hook, '/c');
    await until('deliveries to end', () => pipeline.stats().live === 0);
    const failed = (await call(alice, 'GET', `/hooks/${hook.Id}/deliveries?status=failed`)).body;
    assert.equal(failed.length, 3);
    failing = false;
    try {
      const one = await call(alice, 'POST', `/_hookd/deliveries/${failed[0].Id}/redeliver`);
      assert.equal(one.status, 202);
      assert.equal(one.body.Id, failed[0].Id);
      assert.equal(one.body.Status, 'pending');
      await until('the redelivery to end', () => pipeline.stats().live === 0);
      const again = await call(alice, 'GET', `/_hookd/deliveries/${failed[0].Id}`);
      assert.equal(again.body.Status, 'succeeded');
      assert.equal(again.body.AttemptLog.length, 2);

      const bulk = await call(alice, 'POST', `/hooks/${hook.Id}/redeliver`, { status: 'failed' });
      assert.equal(bulk.status, 202);
      assert.deepEqual(bulk.body, { queued: 2, pending: 0 });
      await until('the bulk redelivery to end', () => pipeline.stats().live === 0);
      const none = await call(alice, 'POST', `/hooks/${hook.Id}/redeliver`, { status: 'failed' });
      assert.deepEqual(none.body, { queued: 0, pending: 0 }, 'none failed are left');
      const all = await call(alice, 'POST', `/hooks/${hook.Id}/redeliver`, { dryRun: true });
      assert.equal(all.status, 200);
      assert.deepEqual(all.body, { queued: 3, pending: 0, dryRun: true }, 'no filter means every delivery');

      const bad = await call(alice, 'POST', `/hooks/${hook.Id}/redeliver`, { Status: 'failed', until: 'x' });
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body.errors.map((e: Json) => e.field).sort(), ['Status', 'until']);
    } finally {
      failing = true;
    }
  });

  it('hands out the signing secret and rotates it', async () => {
    const hook = await newHook('alice', '/sig');
    const got = await call(alice, 'GET', `/hooks/${hook.Id}/secret`);
    assert.equal(got.status, 200);
    assert.match(got.body.Secret, /^whsec_/);
    assert.equal((await call(alice, 'GET', `/hooks/${hook.Id}/secret`)).body.Secret, got.body.Secret);
    const rotated = await call(alice, 'POST', `/hooks/${hook.Id}/secret/rotate`);
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.Secret, got.body.Secret);
    assert.ok(Date.parse(rotated.body.PreviousValidUntil) > Date.now());
    const before = receiver.calls.length;
    fire(hook, '/signed');
    const calls = await receiver.waitFor(before + 1);
    const c = calls[before]!;
    new Webhook(got.body.Secret).verify(c.body, c.headers as Record<string, string>);
    new Webhook(rotated.body.Secret).verify(c.body, c.headers as Record<string, string>);
  });

  it("answers 404 for another user's hook or delivery, and for unknown ids", async () => {
    const hook = await newHook('alice', '/private');
    fire(hook, '/p');
    await until('the delivery to end', () => pipeline.stats().live === 0);
    const [d] = (await call(alice, 'GET', `/hooks/${hook.Id}/deliveries`)).body;
    for (const [method, path] of [
      ['GET', `/hooks/${hook.Id}/deliveries`],
      ['GET', `/_hookd/deliveries/${d.Id}`],
      ['POST', `/_hookd/deliveries/${d.Id}/redeliver`],
      ['POST', `/hooks/${hook.Id}/redeliver`],
      ['GET', `/hooks/${hook.Id}/secret`],
      ['POST', `/hooks/${hook.Id}/secret/rotate`],
    ] as const) {
      const res = await call(bob, method, path);
      assert.equal(res.status, 404, `${method} ${path}`);
      if (path.startsWith('/_hookd/deliveries/')) {
        assert.ok(
          !JSON.stringify(res.body).includes(hook.Id),
          'the hook Id behind a delivery is not revealed',
        );
      }
    }
    assert.equal((await call(alice, 'GET', '/_hookd/deliveries/msg_00000000000000000000000000')).status, 404);
    assert.equal((await call(alice, 'GET', '/_hookd/deliveries/not-an-id')).status, 404);
    const wrong = await call(alice, 'DELETE', `/_hookd/deliveries/${d.Id}`);
    assert.equal(wrong.status, 405);
  });

  it('refuses redelivery for a hook disabled by 410 with 409', async () => {
    const gone = await startReceiver({ reply: () => ({ status: 410 }) });
    try {
      const hook = await hooks.create('alice', {
        PathPattern: '/x',
        Callback: `${gone.url}/gone`,
        Methods: ['GET'],
      });
      fire(hook, '/x');
      await until(
        'the hook to be disabled',
        async () => (await hooks.get('alice', hook.Id)).State === 'disabled',
      );
      const [d] = (await call(alice, 'GET', `/hooks/${hook.Id}/deliveries`)).body;
      assert.equal(d.LastStatusCode, 410);
      const res = await call(alice, 'POST', `/_hookd/deliveries/${d.Id}/redeliver`);
      assert.equal(res.status, 409);
      assert.match(res.body.detail, /disabled/);
    } finally {
      await gone.close();
    }
  });
});
