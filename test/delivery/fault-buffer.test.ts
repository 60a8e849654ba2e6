import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { DeliveryPipeline } from '../../src/delivery/pipeline.js';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import type { DeliveryBatch } from '../../src/store/delivery-store.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { isStoreFault } from '../../src/store/store-fault.js';
import { StoreHealth } from '../../src/store/store-health.js';
import { startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// The outbox's store-fault buffer (docs/DECISIONS.md "Store faults"), on a real memory store that
// refuses writes the way a full disk does (an ENOSPC error), while callbacks go to a real receiver.

/** A memory store whose writes fail with ENOSPC while `full` is set. */
class FullableStore extends MemoryDeliveryStore {
  full = false;
  refused = 0;
  override async write(batch: DeliveryBatch): Promise<void> {
    if (this.full) {
      this.refused++;
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    }
    return super.write(batch);
  }
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function event(hookId: string, url: string, n: number): FiredEvent {
  return {
    hookId,
    owner: 'alice',
    hookType: 1,
    persist: true,
    firedAt: new Date().toISOString(),
    trigger: { method: 'GET', path: `/x/${n}`, statusCode: 200 },
    request: { method: 'POST', url, headers: {}, body: String(n) },
  };
}

describe('store-fault buffer', () => {
  it('sends while the store refuses writes, marks not durable, writes through, drops beyond the bound', async () => {
    const r = await startReceiver();
    cleanups.push(() => r.close());
    const durable = new FullableStore();
    const health = new StoreHealth();
    const p = new DeliveryPipeline({
      durable,
      ephemeral: new MemoryDeliveryStore(),
      policy: new AddressPolicy(['127.0.0.0/8']),
      schedule: { delaysMs: [0], jitter: 0 },
      hookState: { isActive: () => true, disable: async () => undefined },
      health,
      faultBuffer: 5,
    });
    await p.start();
    cleanups.push(() => p.close(0));

    durable.full = true;
    p.accept([1, 2, 3].map((n) => event('hk_a', `${r.url}/a`, n)));
    await p.settled();
    assert.equal(p.stats().buffered, 3, 'held in memory');
    assert.equal(health.available, false, 'the store is marked unavailable');
    assert.deepEqual(health.state?.sources, ['deliveries']);
    await r.waitFor(3);
    const listed = await p.list('hk_a');
    assert.equal(listed.items.length, 3, 'the delivery log lists the buffered deliveries');
    assert.ok(listed.items.every((d) => (d as { buffered?: boolean }).buffered === true));

    // Beyond the bound (5): dropped and counted, never sent.
    p.accept([4, 5, 6, 7, 8].map((n) => event('hk_a', `${r.url}/a`, n)));
    await p.settled();
    assert.equal(p.stats().buffered, 5);
    assert.equal(p.stats().dropped, 3);
    await r.waitFor(5);

    durable.full = false;
    await until('the buffer to be written through', () => p.stats().buffered === 0, 10_000);
    assert.equal(health.available, true);
    await p.flush();
    const stored = await durable.listDeliveries('hk_a');
    assert.equal(stored.length, 5, 'every buffered delivery is stored');
    assert.ok(
      stored.every((d) => d.status === 'succeeded' && d.attempts === 1),
      'with the outcome of the attempt made while buffered',
    );
    assert.deepEqual(
      r.calls.map((c) => c.body).sort(),
      ['1', '2', '3', '4', '5'],
      'the dropped ones were never sent',
    );
  });

  it('classifies store faults by their codes and messages', () => {
    for (const code of [
      'ENOSPC',
      'EROFS',
      'SQLITE_FULL',
      'SQLITE_READONLY',
      'SQLITE_IOERR_WRITE',
      '57P01',
      '08006',
      '53100',
    ])
      assert.ok(isStoreFault(Object.assign(new Error('x'), { code })), code);
    assert.ok(isStoreFault(new Error('Connection terminated unexpectedly')));
    assert.ok(
      isStoreFault(
        Object.assign(new Error('wrapped'), {
          cause: Object.assign(new Error('y'), { code: 'ECONNREFUSED' }),
        }),
      ),
    );
    for (const code of ['SQLITE_CONSTRAINT_PRIMARYKEY', '23505', '42P01', undefined])
      assert.ok(!isStoreFault(Object.assign(new Error('x'), { code })), String(code));
    assert.ok(!isStoreFault(new TypeError('a bug')));
  });
});
