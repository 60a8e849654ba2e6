import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { AttemptMessage, FiredMessage } from '../../src/delivery/delivery-events.js';
import {
  DeliveryPipeline,
  type DeliveryPipelineOptions,
  type PipelineStores,
} from '../../src/delivery/pipeline.js';
import { DEFAULT_PLAN, INACTIVE_PLAN, samePlanForAll } from '../../src/delivery/plan/index.js';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import type { DeliveryStore } from '../../src/store/delivery-store.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

const LOOPBACK = new AddressPolicy(['127.0.0.0/8']);
const FAST = { delaysMs: [0, 50, 100], jitter: 0 };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let hookSeq = 0;
const newHookId = () => `hk_test${String(++hookSeq).padStart(4, '0')}`;

function event(hookId: string, url: string, over: Partial<FiredEvent> = {}): FiredEvent {
  return {
    hookId,
    owner: 'alice',
    hookType: 1,
    persist: true,
    firedAt: new Date().toISOString(),
    trigger: { method: 'GET', path: '/repositories/r1/timeseries/ts1', statusCode: 200 },
    request: {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', 'X-Custom': 'yes' },
      body: JSON.stringify({ hook: hookId, path: '/repositories/r1/timeseries/ts1' }),
    },
    ...over,
  };
}

async function receiver(reply?: Receiver['reply']): Promise<Receiver> {
  const r = await startReceiver(reply ? { reply } : {});
  cleanups.push(() => r.close());
  return r;
}

function sqliteStore(): { file: string; store: SqliteStore; deliveries: SqliteDeliveryStore } {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-pipeline-'));
  const file = join(dir, 'hookd.db');
  const store = new SqliteStore(file);
  cleanups.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { file, store, deliveries: new SqliteDeliveryStore(store.db) };
}

interface Harness {
  pipeline: DeliveryPipeline;
  durable: DeliveryStore;
  ephemeral: DeliveryStore;
  disabled: string[];
  inactive: Set<string>;
  attempts: AttemptMessage[];
  fired: FiredMessage[];
}

/** A started pipeline on a real SQLite file (unless stores are given), closed after the test. */
async function pipeline(
  over: Partial<Omit<DeliveryPipelineOptions, 'stores'>> & { stores?: Partial<PipelineStores> } = {},
): Promise<Harness> {
  const durable = over.stores?.durable ?? sqliteStore().deliveries;
  const ephemeral = over.stores?.ephemeral ?? new MemoryDeliveryStore();
  const disabled: string[] = [];
  const inactive = new Set<string>();
  const p = new DeliveryPipeline({
    send: { policy: LOOPBACK },
    schedule: FAST,
    plans: {
      planOf: (id) => (inactive.has(id) ? INACTIVE_PLAN : DEFAULT_PLAN),
      disable: (id) => {
        if (inactive.has(id)) return false;
        disabled.push(id);
        inactive.add(id);
        return true;
      },
    },
    ...over,
    stores: { ...over.stores, durable, ephemeral },
  });
  const attempts: AttemptMessage[] = [];
  const fired: FiredMessage[] = [];
  p.events.on('attempt', (m) => attempts.push(m));
  p.events.on('fired', (m) => fired.push(m));
  await p.start();
  cleanups.push(() => p.close(0));
  return { pipeline: p, durable, ephemeral, disabled, inactive, attempts, fired };
}

const finished = (h: Harness, id: string) => async () => {
  const d = await h.pipeline.get(id);
  return d !== undefined && d.status !== 'pending';
};

describe('DeliveryPipeline', () => {
  after(() => undefined);

  it('retries a 500 and then succeeds, with the same webhook-id and valid signatures', async () => {
    const r = await receiver((_c, n) =>
      n === 1 ? { status: 500, body: 'try later' } : { status: 200, body: 'ok' },
    );
    const h = await pipeline();
    const hookId = newHookId();
    const secret = await h.pipeline.secretFor(hookId);
    h.pipeline.accept([event(hookId, `${r.url}/hook?x=1`)]);
    const calls = await r.waitFor(2);
    assert.equal(calls[0]!.headers['webhook-id'], calls[1]!.headers['webhook-id'], 'same id across retries');
    const id = calls[0]!.headers['webhook-id'] as string;
    assert.match(id, /^msg_[0-9A-Z]{26}$/);
    const wh = new Webhook(secret);
    for (const c of calls) {
      assert.equal(c.url, '/hook?x=1');
      assert.equal(c.headers['content-type'], 'application/json');
      assert.equal(c.headers['x-custom'], 'yes');
      assert.equal(c.headers['user-agent'], 'hookd');
      assert.deepEqual(wh.verify(c.body, c.headers as Record<string, string>), JSON.parse(c.body));
    }
    await until('the delivery to finish', finished(h, id));
    const detail = (await h.pipeline.getWithAttempts(id))!;
    assert.equal(detail.delivery.status, 'succeeded');
    assert.equal(detail.delivery.attempts, 2);
    assert.equal(detail.delivery.lastStatusCode, 200);
    assert.deepEqual(
      detail.attempts.map((a) => [a.attempt, a.statusCode, a.responseBody, a.error]),
      [
        [1, 500, 'try later', null],
        [2, 200, 'ok', null],
      ],
    );
    assert.ok(detail.attempts.every((a) => a.latencyMs >= 0));
    assert.deepEqual(
      h.attempts.map((m) => [m.Attempt, m.StatusCode, m.Outcome]),
      [
        [1, 500, 'retrying'],
        [2, 200, 'succeeded'],
      ],
    );
    assert.equal(h.fired.length, 1);
    assert.deepEqual(h.fired[0]!.Trigger, {
      Kind: 'request',
      Method: 'GET',
      Path: '/repositories/r1/timeseries/ts1',
      StatusCode: 200,
      User: null,
    });
    assert.equal(h.fired[0]!.DeliveryId, id);
  });

  it('delivers a burst of 1,000 exactly once each', async () => {
    const r = await receiver();
    const { deliveries } = sqliteStore();
    const h = await pipeline({ stores: { durable: deliveries } });
    const hooks = [newHookId(), newHookId(), newHookId()];
    const events: FiredEvent[] = [];
    for (let i = 0; i < 1000; i++) events.push(event(hooks[i % 3]!, `${r.url}/burst/${i}`));
    h.pipeline.accept(events);
    await r.waitFor(1000);
    await until('every delivery to finish', () => h.pipeline.stats().live === 0);
    await h.pipeline.flush();
    assert.equal(r.calls.length, 1000, 'no duplicates');
    const paths = new Set(r.calls.map((c) => c.url));
    const ids = new Set(r.calls.map((c) => c.headers['webhook-id']));
    assert.equal(paths.size, 1000, 'every event arrived');
    assert.equal(ids.size, 1000, 'one id per delivery');
    let stored = 0;
    for (const hook of hooks) {
      const page = await h.pipeline.list(hook);
      assert.ok(page.items.every((d) => d.status === 'succeeded' && d.attempts === 1));
      stored += page.items.length;
    }
    assert.equal(stored, 1000, 'each recorded once, in the durable store');
    assert.equal((await h.ephemeral.listDeliveries(hooks[0]!)).length, 0);
  });

  it('does not let a receiver that never answers delay callbacks to a healthy one', async () => {
    const hang = await receiver(() => 'hang');
    const ok = await receiver();
    // Few global slots, so that a limiter without per-destination shares would give them all away.
    const h = await pipeline({ limits: { concurrency: 20, perHost: 16, perEndpoint: 16 } });
    const hangHook = newHookId();
    const okHook = newHookId();
    const events: FiredEvent[] = [];
    // The hanging receiver's callbacks come first and outnumber its share of slots.
    for (let i = 0; i < 60; i++) events.push(event(hangHook, `${hang.url}/h/${i}`));
    for (let i = 0; i < 100; i++) events.push(event(okHook, `${ok.url}/ok/${i}`));
    h.pipeline.accept(events);
    await ok.waitFor(100);
    assert.equal(hang.calls.filter((c) => c.answered).length, 0, 'the hanging receiver answered nothing');
    assert.ok(
      hang.outstanding() > 0,
      'its callbacks are still outstanding while the healthy ones all arrived',
    );
    assert.ok(hang.outstanding() <= 16, 'and it holds no more than its per-destination share');
  });

  it('does not follow a 302 and counts it as a failure', async () => {
    const target = await receiver();
    const r = await receiver(() => ({ status: 302, headers: { location: `${target.url}/elsewhere` } }));
    const h = await pipeline({ schedule: { delaysMs: [0], jitter: 0 } });
    h.pipeline.accept([event(newHookId(), `${r.url}/hook`)]);
    const [call] = await r.waitFor(1);
    const id = call!.headers['webhook-id'] as string;
    await until('the delivery to fail', finished(h, id));
    const d = (await h.pipeline.get(id))!;
    assert.equal(d.status, 'failed');
    assert.equal(d.lastStatusCode, 302);
    assert.equal(target.calls.length, 0, 'the Location target received nothing');
    assert.equal(h.attempts[0]!.Outcome, 'failed');
  });

  it('disables the hook on 410 Gone and stops retrying', async () => {
    const r = await receiver(() => ({ status: 410 }));
    const h = await pipeline({ schedule: { delaysMs: [0, 50, 100], jitter: 0 } });
    const hookId = newHookId();
    h.pipeline.accept([event(hookId, `${r.url}/gone`)]);
    const [call] = await r.waitFor(1);
    const id = call!.headers['webhook-id'] as string;
    await until('the delivery to end', finished(h, id));
    assert.deepEqual(h.disabled, [hookId], 'hookState.disable was called');
    const d = (await h.pipeline.get(id))!;
    assert.equal(d.status, 'failed');
    assert.equal(d.attempts, 1);
    assert.equal(d.lastStatusCode, 410);
    // Later firings of the disabled hook are recorded but not sent.
    h.pipeline.accept([event(hookId, `${r.url}/gone`)]);
    // Ended without an attempt: nothing can be sent for it any more.
    await until('the second delivery to end', () => h.pipeline.stats().live === 0);
    assert.equal(r.calls.length, 1, 'nothing more was sent');
    await assert.rejects(h.pipeline.redeliver(id), /disabled/);
  });

  it('honours Retry-After on 429, within the bound', async () => {
    const r = await receiver((_c, n) =>
      n === 1
        ? { status: 429, headers: { 'retry-after': '1' } }
        : n === 2
          ? { status: 503, headers: { 'retry-after': '3600' } }
          : { status: 200 },
    );
    const h = await pipeline({ schedule: { delaysMs: [0, 50, 100, 100], jitter: 0, maxRetryAfterMs: 1500 } });
    h.pipeline.accept([event(newHookId(), `${r.url}/busy`)]);
    const calls = await r.waitFor(3);
    const gap1 = calls[1]!.at - calls[0]!.at;
    const gap2 = calls[2]!.at - calls[1]!.at;
    // Timers may fire a millisecond early against Date.now(); the schedule alone would say 50 ms.
    assert.ok(gap1 >= 995, `the second attempt came ${gap1} ms after the first, not before Retry-After: 1`);
    assert.ok(
      gap2 >= 1495,
      `the third came ${gap2} ms after the second: Retry-After 3600 cut to the 1500 ms bound`,
    );
  });

  it('refuses, at send time, a host that resolves to a denied address, and logs the rule, not the address', async () => {
    const r = await receiver();
    const h = await pipeline({
      schedule: { delaysMs: [0], jitter: 0 },
      send: {
        policy: LOOPBACK,
        lookup: async (name) => (name === 'internal.test' ? ['127.0.0.1', '10.0.0.7'] : ['127.0.0.1']),
      },
    });
    const hookId = newHookId();
    h.pipeline.accept([
      event(hookId, `http://internal.test:${r.port}/steal`),
      event(hookId, `http://receiver.test:${r.port}/fine`),
    ]);
    await until('both deliveries to end', () => h.pipeline.stats().live === 0);
    assert.deepEqual(
      r.calls.map((c) => [c.url, c.headers.host]),
      [['/fine', `receiver.test:${r.port}`]],
      'only the allowed name was connected to (pinned to its address, Host kept)',
    );
    const page = await h.pipeline.list(hookId);
    const refused = page.items.find((d) => d.request.url.includes('internal.test'))!;
    assert.equal(refused.status, 'failed');
    const detail = (await h.pipeline.getWithAttempts(refused.id))!;
    assert.equal(detail.attempts.length, 1);
    assert.equal(detail.attempts[0]!.statusCode, null);
    // The owner reads this log (GET /_hookd/deliveries/..., console, tail): no DNS oracle there.
    assert.match(
      detail.attempts[0]!.error!,
      /^not sent: callback host internal\.test resolves to an address the callback policy refuses: callbacks may only go to globally routable addresses/,
    );
    assert.doesNotMatch(detail.attempts[0]!.error!, /10\.0\.0\.7|127\.0\.0\.1|10\.0\.0\.0\/8/);
  });

  it("signs with both secrets during a rotation's grace period", async () => {
    const r = await receiver();
    const h = await pipeline();
    const hookId = newHookId();
    const before = await h.pipeline.secretFor(hookId);
    assert.equal(await h.pipeline.secretFor(hookId), before, 'the secret is stable');
    const rotated = await h.pipeline.rotateSecret(hookId);
    assert.notEqual(rotated.secret, before);
    assert.ok(rotated.previousValidUntil > Date.now() + 23 * 3600_000, 'default grace is 24 h');
    h.pipeline.accept([event(hookId, `${r.url}/signed`)]);
    const [call] = await r.waitFor(1);
    const headers = call!.headers as Record<string, string>;
    assert.equal(headers['webhook-signature']!.split(' ').length, 2);
    new Webhook(before).verify(call!.body, headers);
    new Webhook(rotated.secret).verify(call!.body, headers);
    assert.equal(await h.pipeline.secretFor(hookId), rotated.secret);
  });

  it('stops signing with the old secret after the grace period', async () => {
    const r = await receiver();
    const h = await pipeline({ rotationGraceMs: 0 });
    const hookId = newHookId();
    const before = await h.pipeline.secretFor(hookId);
    const rotated = await h.pipeline.rotateSecret(hookId);
    h.pipeline.accept([event(hookId, `${r.url}/signed`)]);
    const [call] = await r.waitFor(1);
    const headers = call!.headers as Record<string, string>;
    assert.equal(headers['webhook-signature']!.split(' ').length, 1);
    new Webhook(rotated.secret).verify(call!.body, headers);
    assert.throws(() => new Webhook(before).verify(call!.body, headers));
  });

  it('keeps Persist: false deliveries and secrets in memory only', async () => {
    const r = await receiver();
    const h = await pipeline();
    const hookId = newHookId();
    await h.pipeline.secretFor(hookId, false);
    h.pipeline.accept([event(hookId, `${r.url}/mem`, { persist: false })]);
    await r.waitFor(1);
    await until('the delivery to end', () => h.pipeline.stats().live === 0);
    await h.pipeline.flush();
    assert.equal((await h.durable.listDeliveries(hookId)).length, 0);
    assert.equal((await h.ephemeral.listDeliveries(hookId)).length, 1);
    assert.equal(await h.durable.getSecret(hookId), undefined);
    assert.ok(await h.ephemeral.getSecret(hookId));
  });

  it('redelivers one delivery with the same id, and in bulk by outcome', async () => {
    let failing = true;
    const r = await receiver(() => ({ status: failing ? 500 : 200 }));
    const h = await pipeline({ schedule: { delaysMs: [0], jitter: 0 } });
    const hookId = newHookId();
    h.pipeline.accept([
      event(hookId, `${r.url}/a`),
      event(hookId, `${r.url}/b`),
      event(hookId, `${r.url}/c`),
    ]);
    await r.waitFor(3);
    await until('the first round to end', () => h.pipeline.stats().live === 0);
    const failed = (await h.pipeline.list(hookId, { status: 'failed' })).items;
    assert.equal(failed.length, 3);

    failing = false;
    const one = await h.pipeline.redeliver(failed[0]!.id);
    assert.equal(one!.status, 'pending');
    await r.waitFor(4);
    assert.equal(r.calls[3]!.headers['webhook-id'], failed[0]!.id, 'a redelivery keeps its id');
    await until('the redelivery to end', finished(h, failed[0]!.id));
    const detail = (await h.pipeline.getWithAttempts(failed[0]!.id))!;
    assert.equal(detail.delivery.status, 'succeeded');
    assert.deepEqual(
      detail.attempts.map((a) => [a.attempt, a.statusCode]),
      [
        [1, 500],
        [2, 200],
      ],
    );

    assert.deepEqual(await h.pipeline.redeliverBulk(hookId, { status: 'failed', dryRun: true }), {
      queued: 2,
      pending: 0,
      failed: 0,
    });
    assert.deepEqual(await h.pipeline.redeliverBulk(hookId, { status: 'failed' }), {
      queued: 2,
      pending: 0,
      failed: 0,
    });
    await r.waitFor(6);
    await until('the bulk redelivery to end', () => h.pipeline.stats().live === 0);
    assert.deepEqual(
      new Set(r.calls.slice(4).map((c) => c.headers['webhook-id'])),
      new Set([failed[1]!.id, failed[2]!.id]),
    );
    assert.equal(
      (await h.pipeline.redeliverBulk(hookId, { status: 'failed' })).queued,
      0,
      'nothing failed any more',
    );
    // Without a filter: every delivery of the hook (all succeeded by now).
    assert.equal((await h.pipeline.redeliverBulk(hookId, { dryRun: true })).queued, 3);
    assert.equal(await h.pipeline.redeliver('msg_00000000000000000000000000'), undefined);
  });

  it("cancels a deleted hook's pending deliveries and drops its log", async () => {
    const r = await receiver(() => ({ status: 500 }));
    const h = await pipeline({ schedule: { delaysMs: [0, 200], jitter: 0 } });
    const hookId = newHookId();
    h.pipeline.accept([event(hookId, `${r.url}/del`)]);
    const [call] = await r.waitFor(1);
    const id = call!.headers['webhook-id'] as string;
    await until('the first attempt to be recorded', async () => (await h.pipeline.get(id))?.attempts === 1);
    h.inactive.add(hookId);
    h.pipeline.hookDeleted(hookId);
    await h.pipeline.flush();
    assert.equal(h.pipeline.stats().live, 0);
    assert.equal(await h.pipeline.get(id), undefined);
    assert.equal((await h.durable.listDeliveries(hookId)).length, 0);
    // A marker on the same schedule, fired later: once its retry has come, the deleted one's
    // (due earlier) would have come too.
    h.pipeline.accept([event(newHookId(), `${r.url}/marker`)]);
    await until('the marker retried', () => r.calls.filter((c) => c.url === '/marker').length === 2);
    assert.equal(r.calls.filter((c) => c.url === '/del').length, 1, 'the retry was not sent');
  });

  it('times out an attempt, and opens the circuit after consecutive failures', async () => {
    const r = await receiver(() => 'hang');
    const h = await pipeline({
      limits: { timeoutMs: 150, perHost: 1, breaker: { threshold: 2, cooldownMs: 60_000 } },
    });
    const hookId = newHookId();
    // One endpoint (the same URL): its circuit opens; other endpoints of the host would go on.
    h.pipeline.accept([0, 1, 2, 3].map(() => event(hookId, `${r.url}/slow`)));
    await until('four attempts', () => h.attempts.length >= 4);
    assert.equal(r.calls.length, 2, 'only the first two were sent');
    const byOutcome = h.attempts.map((m) => m.Error);
    assert.deepEqual(byOutcome.slice(0, 2), [
      'no complete response within 150 ms',
      'no complete response within 150 ms',
    ]);
    for (const e of byOutcome.slice(2))
      assert.match(e!, /^not sent: the circuit for endpoint http:\/\/127\.0\.0\.1:\d+\/slow is open/);
    assert.ok(h.attempts.every((m) => m.Outcome === 'retrying' && m.StatusCode === null));
  });

  it('keeps the first 4 KiB of a response body for the log', async () => {
    const big = `${'é'.repeat(3000)}`;
    const r = await receiver(() => ({ status: 500, body: big }));
    const h = await pipeline({ schedule: { delaysMs: [0], jitter: 0 } });
    h.pipeline.accept([event(newHookId(), `${r.url}/big`)]);
    const [call] = await r.waitFor(1);
    const id = call!.headers['webhook-id'] as string;
    await until('the delivery to end', finished(h, id));
    const { attempts } = (await h.pipeline.getWithAttempts(id))!;
    assert.equal(Buffer.byteLength(attempts[0]!.responseBody!), 4096);
    assert.ok(big.startsWith(attempts[0]!.responseBody!));
  });

  it('close() leaves unfinished deliveries pending; a new pipeline delivers them', async () => {
    let hang = true;
    const r = await receiver(() => (hang ? 'hang' : { status: 200 }));
    const { deliveries } = sqliteStore();
    const ephemeral = new MemoryDeliveryStore();
    const first = new DeliveryPipeline({
      stores: { durable: deliveries, ephemeral },
      send: { policy: LOOPBACK },
      schedule: FAST,
      limits: { perHost: 2 },
      plans: samePlanForAll(),
    });
    await first.start();
    const hookId = newHookId();
    const events = [0, 1, 2, 3].map((i) => event(hookId, `${r.url}/close/${i}`));
    first.accept(events);
    await r.waitFor(2);
    await first.close(50);
    const pending = await deliveries.listDeliveries(hookId);
    assert.equal(pending.length, 4);
    assert.ok(
      pending.every((d) => d.status === 'pending' && d.attempts === 0),
      'in-flight (aborted) and queued deliveries stay pending, with no attempt counted',
    );

    hang = false;
    const second = new DeliveryPipeline({
      stores: { durable: deliveries, ephemeral },
      send: { policy: LOOPBACK },
      schedule: FAST,
      plans: samePlanForAll(),
    });
    cleanups.push(() => second.close(0));
    await second.start();
    await until('the resumed deliveries to end', () => second.stats().live === 0);
    const delivered = new Set(r.calls.filter((c) => c.answered).map((c) => c.url));
    assert.deepEqual(delivered, new Set(events.map((_e, i) => `/close/${i}`)));
  });

  it('prunes the delivery log by count per hook', async () => {
    const r = await receiver();
    const h = await pipeline({ retention: { maxPerHook: 3, intervalMs: 0 } });
    const hookId = newHookId();
    h.pipeline.accept([0, 1, 2, 3, 4].map((i) => event(hookId, `${r.url}/p/${i}`)));
    await r.waitFor(5);
    await until('deliveries to end', () => h.pipeline.stats().live === 0);
    await h.pipeline.flush();
    assert.equal(await h.pipeline.log.prune(), 2);
    assert.equal((await h.pipeline.list(hookId)).items.length, 3);
  });

  it('prunes the delivery log by age', async () => {
    const r = await receiver();
    const h = await pipeline({ retention: { maxAgeMs: 60_000, intervalMs: 0 } });
    const hookId = newHookId();
    h.pipeline.accept([event(hookId, `${r.url}/age`)]);
    await r.waitFor(1);
    await until('the delivery to end', () => h.pipeline.stats().live === 0);
    await h.pipeline.flush();
    assert.equal(await h.pipeline.log.prune(Date.now()), 0, 'young enough');
    assert.equal(await h.pipeline.log.prune(Date.now() + 61_000), 1, 'a minute later it is too old');
    assert.equal((await h.pipeline.list(hookId)).items.length, 0);
  });
});
