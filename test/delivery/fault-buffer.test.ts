import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { DeliveryPipeline } from '../../src/delivery/pipeline.js';
import { samePlanForAll } from '../../src/delivery/plan/index.js';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { isStoreFault } from '../../src/store/store-fault.js';
import { StoreHealth } from '../../src/store/store-health.js';
import { requireOrSkip } from '../helpers/require.js';
import { startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// The outbox's store-fault buffer (docs/DECISIONS.md "Store faults"), on the real SQLite delivery
// store on a tmpfs filled to the last byte (so its writes fail as on a full disk), while callbacks
// go to a real receiver.

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

/** Writes to `file` until the file system has no byte left. */
function fill(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch {
    for (;;) {
      try {
        writeSync(fd, chunk, 0, 512);
      } catch {
        break;
      }
    }
  } finally {
    closeSync(fd);
  }
}

describe('store-fault buffer', () => {
  it('sends while the store refuses writes, marks not durable, writes through, drops beyond the bound', {
    timeout: 60_000,
  }, async (t) => {
    if (process.getuid?.() !== 0)
      return requireOrSkip(t, 'mounting a tmpfs needs root (the disk-full store)');
    const dir = mkdtempSync(join(tmpdir(), 'hookd-fault-buffer-'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', dir]);
    if (mounted.status !== 0) {
      rmSync(dir, { recursive: true, force: true });
      return requireOrSkip(t, `mount -t tmpfs failed (${mounted.stderr.toString().trim()})`);
    }
    cleanups.push(() => {
      spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    });
    const r = await startReceiver();
    cleanups.push(() => r.close());
    const store = new SqliteStore(join(dir, 'hookd.db'));
    // The WAL only grows (no checkpoint starts it over): every commit needs new space on the disk.
    store.db.pragma('wal_autocheckpoint = 0');
    cleanups.push(() => store.close());
    const durable = new SqliteDeliveryStore(store.db);
    const health = new StoreHealth();
    const p = new DeliveryPipeline({
      stores: { durable, ephemeral: new MemoryDeliveryStore(), health, faultBuffer: 5 },
      send: { policy: new AddressPolicy(['127.0.0.0/8']) },
      schedule: { delaysMs: [0], jitter: 0 },
      plans: samePlanForAll(),
    });
    await p.start();
    cleanups.push(() => p.close(0));

    // A first callback while there is room: the hook's signing secret is stored with it, as the
    // daemon stores it when the hook is made (a secret cannot be made on a full disk).
    p.accept([event('hk_a', `${r.url}/a`, 0)]);
    await r.waitFor(1);
    await p.flush();
    const filler = join(dir, 'filler');
    fill(filler);
    // One callback at a time until the store refuses one (the last free pages may still take one).
    let n = 0;
    await until(
      'the store to refuse a write',
      async () => {
        p.accept([event('hk_a', `${r.url}/a`, ++n)]);
        await p.settled();
        return !health.available;
      },
      { ms: 30_000, every: 0 },
    );
    const firstBuffered = n;
    assert.equal(p.stats().buffered, 1, 'held in memory');
    assert.deepEqual(health.state?.sources, ['deliveries']);
    p.accept([1, 2].map((i) => event('hk_a', `${r.url}/a`, firstBuffered + i)));
    await p.settled();
    assert.equal(p.stats().buffered, 3);
    const buffered = new Set([0, 1, 2].map((i) => String(firstBuffered + i)));
    await until('the buffered ones sent', () =>
      [...buffered].every((b) => r.calls.some((c) => c.body === b)),
    );
    const listed = await p.list('hk_a');
    assert.ok(
      listed.items.filter((d) => (d as { buffered?: boolean }).buffered === true).length === 3,
      'the delivery log lists the buffered deliveries',
    );

    // Beyond the bound (5): dropped and counted, never sent.
    p.accept([3, 4, 5, 6, 7].map((i) => event('hk_a', `${r.url}/a`, firstBuffered + i)));
    await p.settled();
    assert.equal(p.stats().buffered, 5);
    assert.equal(p.stats().dropped, 3);
    for (const i of [3, 4]) buffered.add(String(firstBuffered + i));
    await until('the buffered ones sent', () =>
      [...buffered].every((b) => r.calls.some((c) => c.body === b)),
    );

    rmSync(filler);
    await until('the buffer to be written through', () => p.stats().buffered === 0, 20_000);
    assert.equal(health.available, true);
    await p.flush();
    const stored = await durable.listDeliveries('hk_a');
    const storedBuffered = stored.filter((d) => buffered.has(d.request.body ?? ''));
    assert.equal(storedBuffered.length, 5, 'every buffered delivery is stored');
    assert.ok(
      storedBuffered.every((d) => d.status === 'succeeded' && d.attempts === 1),
      'with the outcome of the attempt made while buffered',
    );
    const dropped = [5, 6, 7].map((i) => String(firstBuffered + i));
    assert.deepEqual(
      r.calls.filter((c) => dropped.includes(c.body)),
      [],
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
