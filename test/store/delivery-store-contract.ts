/** The DeliveryStore contract: memory, SQLite and PostgreSQL all run this one suite. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newDeliveryId } from '../../src/delivery/delivery-id.js';
import {
  type AttemptRecord,
  type DeliveryQuery,
  type DeliveryRecord,
  type DeliveryStore,
  emptyBatch,
} from '../../src/store/delivery-store.js';

const DAY = 24 * 60 * 60 * 1000;

export function record(hookId: string, created: number, over: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    id: newDeliveryId(created),
    hookId,
    owner: 'alice',
    hookType: 1,
    status: 'pending',
    attempts: 0,
    roundStart: 0,
    created,
    nextAttempt: created,
    lastStatusCode: null,
    lastError: null,
    trigger: { method: 'GET', path: '/repositories/r1/timeseries/ts1', statusCode: 200 },
    request: {
      method: 'POST',
      url: 'https://receiver.example/hook?x=1',
      headers: { 'content-type': 'application/json', 'X-Token': 'abc' },
      body: '{"a":"ü\\n"}',
    },
    ...over,
  };
}

export function attempt(d: DeliveryRecord, n: number, over: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    deliveryId: d.id,
    hookId: d.hookId,
    attempt: n,
    time: d.created + n,
    statusCode: 500,
    latencyMs: 3.25,
    error: null,
    responseBody: 'oops',
    ...over,
  };
}

export async function insert(store: DeliveryStore, records: DeliveryRecord[]): Promise<void> {
  await store.write({ ...emptyBatch(), inserts: records });
}

/**
 * The contract every delivery store passes. `open` returns a fresh store (the prune test opens a
 * second one of its own).
 */
export function deliveryStoreContract(
  name: string,
  open: () => Promise<{ store: DeliveryStore; close: () => Promise<void> }>,
) {
  describe(`DeliveryStore contract: ${name}`, () => {
    let store: DeliveryStore;
    let close: () => Promise<void>;
    before(async () => {
      ({ store, close } = await open());
    });
    after(async () => close());

    it('keeps the trace context of a delivery and the rate-limit wait of an attempt', async () => {
      const d = record('hk_traced', Date.now(), {
        traceParent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      });
      await insert(store, [d]);
      assert.equal((await store.getDelivery(d.id))?.traceParent, d.traceParent);
      assert.equal((await store.pendingDeliveries()).find((r) => r.id === d.id)?.traceParent, d.traceParent);
      await store.write({
        ...emptyBatch(),
        attempts: [attempt(d, 1, { rateLimitWaitMs: 250.5 }), attempt(d, 2)],
      });
      const back = await store.listAttempts(d.id);
      assert.equal(back[0]!.rateLimitWaitMs, 250.5);
      assert.equal(back[1]!.rateLimitWaitMs, undefined);
    });

    it("keeps a failed Transform's input until the request is rewritten with what the Transform made", async () => {
      const input = JSON.stringify({ request: { method: 'PUT', path: '/r1' }, captures: ['r1'] });
      const d = record('hk_retransform', Date.now(), {
        status: 'failed',
        nextAttempt: null,
        lastError: 'Transform: Error: not yet',
        transformInput: input,
      });
      const plain = record('hk_retransform', Date.now() + 1);
      await insert(store, [d, plain]);
      assert.equal((await store.getDelivery(d.id))?.transformInput, input);
      const [, listed] = await store.listDeliveries('hk_retransform');
      assert.equal(listed?.transformInput, input);
      assert.ok(!('transformInput' in (await store.getDelivery(plain.id))!), 'absent when none was kept');
      assert.equal(
        await store.rewriteRequest({
          id: d.id,
          headers: { 'content-type': 'text/plain', 'X-Fixed': 'yes' },
          body: 'at r1',
        }),
        true,
      );
      const back = await store.getDelivery(d.id);
      assert.deepEqual(back?.request, {
        method: 'POST',
        url: d.request.url,
        headers: { 'content-type': 'text/plain', 'X-Fixed': 'yes' },
        body: 'at r1',
      });
      assert.ok(!('transformInput' in back!), 'the input goes with the rewrite');
      assert.equal(back?.lastError, 'Transform: Error: not yet', 'the state is left to the next write');
      await store.rewriteRequest({ id: plain.id, headers: {} });
      assert.ok(
        !('body' in (await store.getDelivery(plain.id))!.request),
        'a rewrite without a body has none',
      );
      assert.equal(await store.rewriteRequest({ id: newDeliveryId(Date.now()), headers: {} }), false);
    });

    it('stores a delivery as given and reads it back', async () => {
      const d = record('hk_roundtrip', Date.now());
      const get = record('hk_roundtrip', Date.now(), {
        request: { method: 'GET', url: 'http://r.example/', headers: {} },
        trigger: { method: 'PUT', path: '/x' },
      });
      await insert(store, [d, get]);
      assert.deepEqual(await store.getDelivery(d.id), d);
      const back = await store.getDelivery(get.id);
      assert.deepEqual(back, get);
      assert.ok(!('body' in back!.request), 'no body stays no body');
      assert.ok(!('statusCode' in back!.trigger), 'a BeforeCompletion trigger has no status');
      assert.equal(await store.getDelivery('msg_00000000000000000000000000'), undefined);
    });

    it("keeps the triggering request's user, and none for an anonymous one", async () => {
      const byAlice = record('hk_user', Date.now(), {
        trigger: { method: 'GET', path: '/repositories/alice-private', statusCode: 200, user: 'alice' },
      });
      const anonymous = record('hk_user', Date.now());
      await insert(store, [byAlice, anonymous]);
      assert.equal((await store.getDelivery(byAlice.id))!.trigger.user, 'alice');
      assert.deepEqual((await store.getDelivery(byAlice.id))!.trigger, byAlice.trigger);
      assert.ok(!('user' in (await store.getDelivery(anonymous.id))!.trigger), 'anonymous: no user');
      const listed = await store.listDeliveries('hk_user');
      assert.deepEqual(listed.map((d) => d.trigger.user ?? null).sort(), ['alice', null].sort());
    });

    it('applies state updates and attempts in one batch; copies, not references', async () => {
      const d = record('hk_update', Date.now());
      await insert(store, [d]);
      d.status = 'failed';
      assert.equal(
        (await store.getDelivery(d.id))!.status,
        'pending',
        'the caller changing its object changes nothing',
      );
      const a1 = attempt(d, 1);
      const a2 = attempt(d, 2, {
        statusCode: null,
        error: 'ECONNREFUSED: connect',
        responseBody: null,
        latencyMs: 0,
      });
      await store.write({
        ...emptyBatch(),
        updates: [
          {
            id: d.id,
            status: 'failed',
            attempts: 2,
            roundStart: 0,
            nextAttempt: null,
            lastStatusCode: null,
            lastError: 'ECONNREFUSED: connect',
          },
        ],
        attempts: [a1, a2],
      });
      const back = await store.getDelivery(d.id);
      assert.equal(back!.status, 'failed');
      assert.equal(back!.attempts, 2);
      assert.equal(back!.nextAttempt, null);
      assert.equal(back!.lastError, 'ECONNREFUSED: connect');
      assert.deepEqual(await store.listAttempts(d.id), [a1, a2]);
      assert.deepEqual(await store.listAttempts('msg_none'), []);
    });

    it('lists a hook newest first with status, time filters and paging', async () => {
      const t0 = Date.parse('2026-01-01T00:00:00Z');
      const all: DeliveryRecord[] = [];
      for (let i = 0; i < 12; i++) {
        all.push(
          record('hk_list', t0 + i * 1000, {
            status: i % 3 === 0 ? 'failed' : 'succeeded',
            nextAttempt: null,
          }),
        );
      }
      await insert(store, [...all, record('hk_other', t0)]);
      const newestFirst = [...all].reverse().map((r) => r.id);
      assert.deepEqual(
        (await store.listDeliveries('hk_list')).map((r) => r.id),
        newestFirst,
      );
      const page1 = await store.listDeliveries('hk_list', { limit: 5 });
      const page2 = await store.listDeliveries('hk_list', { limit: 5, after: page1[4]!.id });
      assert.deepEqual(
        [...page1, ...page2].map((r) => r.id),
        newestFirst.slice(0, 10),
      );
      const failed = await store.listDeliveries('hk_list', { status: 'failed' });
      assert.deepEqual(
        failed.map((r) => r.created),
        [t0 + 9000, t0 + 6000, t0 + 3000, t0],
      );
      const window = await store.listDeliveries('hk_list', { since: t0 + 2000, until: t0 + 4000 });
      assert.deepEqual(
        window.map((r) => r.created),
        [t0 + 4000, t0 + 3000, t0 + 2000],
      );
      assert.deepEqual(await store.listDeliveries('hk_nobody'), []);
    });

    it("filters a hook's deliveries by the trigger's path prefix and the receiver's status", async () => {
      const t0 = Date.parse('2026-01-02T00:00:00Z');
      const rows = [
        record('hk_f', t0, {
          trigger: { method: 'GET', path: '/items/1' },
          lastStatusCode: 200,
          status: 'succeeded',
        }),
        record('hk_f', t0 + 1, {
          trigger: { method: 'GET', path: '/items/12' },
          lastStatusCode: 503,
          status: 'failed',
        }),
        record('hk_f', t0 + 2, {
          trigger: { method: 'GET', path: '/orders/1' },
          lastStatusCode: 404,
          status: 'failed',
        }),
        record('hk_f', t0 + 3, { trigger: { method: 'GET', path: '/items/2' }, lastStatusCode: null }),
        record('hk_f', t0 + 4, { trigger: { method: 'GET', path: '/it%25ms/_' }, lastStatusCode: 200 }),
      ];
      await insert(store, rows);
      const paths = async (q: DeliveryQuery) =>
        (await store.listDeliveries('hk_f', q)).map((r) => r.trigger.path);
      assert.deepEqual(await paths({ pathPrefix: '/items/1' }), ['/items/12', '/items/1']);
      // Literal prefixes: no LIKE wildcards.
      assert.deepEqual(await paths({ pathPrefix: '/it%' }), ['/it%25ms/_']);
      assert.deepEqual(await paths({ pathPrefix: '/items/_' }), []);
      assert.deepEqual(await paths({ receiverStatus: [500, 599] }), ['/items/12']);
      assert.deepEqual(await paths({ receiverStatus: [404, 404] }), ['/orders/1']);
      assert.deepEqual(await paths({ receiverStatus: [200, 299], pathPrefix: '/items' }), ['/items/1']);
      assert.deepEqual(await paths({ receiverStatus: [200, 299], limit: 1 }), ['/it%25ms/_']);
    });

    it('returns every pending delivery, of every hook', async () => {
      const p1 = record('hk_pend_a', Date.now());
      const p2 = record('hk_pend_b', Date.now());
      const done = record('hk_pend_a', Date.now(), { status: 'succeeded', nextAttempt: null });
      await insert(store, [p1, p2, done]);
      const ids = new Set((await store.pendingDeliveries()).map((r) => r.id));
      assert.ok(ids.has(p1.id) && ids.has(p2.id));
      assert.ok(!ids.has(done.id));
    });

    it("drops a deleted hook's deliveries, attempts and secret", async () => {
      const d = record('hk_gone', Date.now());
      const keep = record('hk_kept', Date.now());
      await insert(store, [d, keep]);
      await store.write({ ...emptyBatch(), attempts: [attempt(d, 1)] });
      await store.putSecret({
        hookId: 'hk_gone',
        secret: 'whsec_a',
        previous: null,
        previousValidUntil: null,
      });
      await store.write({ ...emptyBatch(), deletedHooks: ['hk_gone'] });
      assert.equal(await store.getDelivery(d.id), undefined);
      assert.deepEqual(await store.listAttempts(d.id), []);
      assert.equal(await store.getSecret('hk_gone'), undefined);
      assert.ok(await store.getDelivery(keep.id));
    });

    it('stores, replaces and deletes secrets', async () => {
      assert.equal(await store.getSecret('hk_sec'), undefined);
      await store.putSecret({
        hookId: 'hk_sec',
        secret: 'whsec_one',
        previous: null,
        previousValidUntil: null,
      });
      await store.putSecret({
        hookId: 'hk_sec',
        secret: 'whsec_two',
        previous: 'whsec_one',
        previousValidUntil: 123,
      });
      assert.deepEqual(await store.getSecret('hk_sec'), {
        hookId: 'hk_sec',
        secret: 'whsec_two',
        previous: 'whsec_one',
        previousValidUntil: 123,
      });
      assert.ok(await store.deleteSecret('hk_sec'));
      assert.ok(!(await store.deleteSecret('hk_sec')));
    });

    it('hands out its secret rows as stored, in hookId order, and rewrites one only over what was read', async () => {
      for (const id of ['hk_raw_c', 'hk_raw_a', 'hk_raw_b']) {
        await store.putSecret({
          hookId: id,
          secret: `whsec_${id}`,
          previous: null,
          previousValidUntil: null,
        });
      }
      await store.putSecret({
        hookId: 'hk_raw_b',
        secret: 'whsec_b2',
        previous: 'whsec_b1',
        previousValidUntil: 9,
      });
      const mine = async (after: string, limit: number) =>
        (await store.storedSecrets(after, limit)).filter((r) => r.hookId.startsWith('hk_raw_'));
      const rows = await mine('hk_raw_', 10);
      assert.deepEqual(
        rows.map((r) => r.hookId),
        ['hk_raw_a', 'hk_raw_b', 'hk_raw_c'],
      );
      assert.deepEqual(
        (await mine('hk_raw_a', 1)).map((r) => r.hookId),
        ['hk_raw_b'],
      );
      const b = rows[1]!;
      assert.ok(await store.replaceStoredSecret(b, { hookId: 'hk_raw_b', secret: 'x2', previous: 'x1' }));
      // A second rewrite from the same (now stale) read loses: another writer came first.
      assert.ok(!(await store.replaceStoredSecret(b, { hookId: 'hk_raw_b', secret: 'y2', previous: 'y1' })));
      const a = rows[0]!;
      assert.ok(await store.replaceStoredSecret(a, { hookId: 'hk_raw_a', secret: 'x', previous: null }));
      assert.deepEqual(await store.getSecret('hk_raw_b'), {
        hookId: 'hk_raw_b',
        secret: 'x2',
        previous: 'x1',
        previousValidUntil: 9,
      });
    });

    it('prunes by age and by count per hook, never pending ones, in chunks', async () => {
      // A store of its own: deliveries are inserted in creation order, as the outbox does.
      const { store, close } = await open();
      const now = Date.now();
      const old = record('hk_prune_age', now - 8 * DAY, { status: 'succeeded', nextAttempt: null });
      const oldPending = record('hk_prune_age', now - 8 * DAY + 1);
      const young = record('hk_prune_age', now - DAY, { status: 'failed', nextAttempt: null });
      await insert(store, [old, oldPending, young]);
      await store.write({ ...emptyBatch(), attempts: [attempt(old, 1)] });
      const pendingFirst = record('hk_prune_count', now - 2000);
      const many: DeliveryRecord[] = [];
      for (let i = 0; i < 8; i++) {
        many.push(record('hk_prune_count', now - 1000 + i, { status: 'succeeded', nextAttempt: null }));
      }
      many.push(pendingFirst); // the hook's oldest, and pending
      await insert(store, [pendingFirst, ...many.slice(0, 8)]);

      const rule = { olderThan: now - 7 * DAY, maxPerHook: 5, limit: 2 };
      let total = 0;
      for (let n = await store.prune(rule); ; n = await store.prune(rule)) {
        total += n;
        if (n < rule.limit) break;
      }
      assert.ok(total >= 4, `removed ${total}`);
      assert.equal(await store.getDelivery(old.id), undefined, 'old finished delivery pruned');
      assert.deepEqual(await store.listAttempts(old.id), [], 'with its attempts');
      assert.ok(await store.getDelivery(oldPending.id), 'pending is never pruned');
      assert.ok(await store.getDelivery(young.id));
      const left = await store.listDeliveries('hk_prune_count');
      assert.deepEqual(
        left.map((r) => r.id),
        [...many.slice(3, 8).reverse(), many[8]!].map((r) => r.id),
        'the newest five are kept, the older finished ones go, the pending one stays',
      );
      assert.equal(await store.prune(rule), 0, 'nothing more to do');
      await close();
    });
  });
}

/**
 * Writes batches of 20 new deliveries one after another for `ms`; with `turn`, the loop turns once
 * between two (as the daemon's group commit lets it). Returns how many were written.
 */
export async function writeWithoutPause(store: DeliveryStore, ms: number, turn = false): Promise<number> {
  const end = Date.now() + ms;
  let written = 0;
  while (Date.now() < end) {
    await insert(
      store,
      Array.from({ length: 20 }, () => record('h1', Date.now())),
    );
    written += 20;
    if (turn) await new Promise((resolve) => setImmediate(resolve));
  }
  return written;
}
