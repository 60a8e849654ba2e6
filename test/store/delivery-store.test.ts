import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PLAIN_SECRETS } from '../../src/store/index.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { SqliteWriterStore } from '../../src/store/sqlite-writer/index.js';
import { deliveryStoreContract, insert, record } from './delivery-store-contract.js';

deliveryStoreContract('memory', async () => ({
  store: new MemoryDeliveryStore(),
  close: async () => undefined,
}));

deliveryStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-dstore-'));
  const sqlite = new SqliteStore(join(dir, 'hookd.db'));
  return {
    store: new SqliteDeliveryStore(sqlite.db),
    close: async () => {
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// The daemon's SQLite store with delivery threads on: writes on the writer thread's connection,
// reads on the store's own.
deliveryStoreContract('sqlite, writes on the writer thread', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-dstore-'));
  const file = join(dir, 'hookd.db');
  const sqlite = new SqliteStore(file, { checkpoint: 'writer' });
  const store = new SqliteWriterStore(new SqliteDeliveryStore(sqlite.db), PLAIN_SECRETS, {
    file,
    synchronous: sqlite.synchronous,
    checkpointMs: 1000,
  });
  return {
    store,
    close: async () => {
      await store.close();
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SqliteDeliveryStore', () => {
  it('keeps deliveries and secrets across a reopen of the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookd-dstore-'));
    try {
      const file = join(dir, 'hookd.db');
      const first = new SqliteStore(file);
      const d = record('hk_reopen', Date.now());
      await insert(new SqliteDeliveryStore(first.db), [d]);
      await new SqliteDeliveryStore(first.db).putSecret({
        hookId: 'hk_reopen',
        secret: 'whsec_k',
        previous: null,
        previousValidUntil: null,
      });
      await first.close();
      const second = new SqliteStore(file);
      const store = new SqliteDeliveryStore(second.db);
      assert.deepEqual(await store.getDelivery(d.id), d);
      assert.equal((await store.getSecret('hk_reopen'))!.secret, 'whsec_k');
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes a batch all or nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookd-dstore-'));
    const sqlite = new SqliteStore(join(dir, 'hookd.db'));
    try {
      const store = new SqliteDeliveryStore(sqlite.db);
      const a = record('hk_atomic', Date.now());
      await insert(store, [a]);
      const b = record('hk_atomic', Date.now());
      await assert.rejects(insert(store, [b, a]), /UNIQUE/);
      assert.equal(await store.getDelivery(b.id), undefined, 'the batch was rolled back');
    } finally {
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('MemoryDeliveryStore', () => {
  it('keeps at most maxPerHook finished deliveries per hook as they arrive, never dropping pending ones', async () => {
    const store = new MemoryDeliveryStore({ maxPerHook: 10 });
    const now = Date.now();
    const pending = record('hk_cap', now - 1);
    const done = Array.from({ length: 30 }, (_, i) =>
      record('hk_cap', now + i, { status: 'succeeded', nextAttempt: null }),
    );
    await insert(store, [pending]);
    for (const d of done) await insert(store, [d]);
    const left = await store.listDeliveries('hk_cap');
    assert.ok(left.length <= 12, `${left.length} kept`);
    assert.ok(
      left.some((d) => d.id === pending.id),
      'the pending one stays',
    );
    assert.equal(left[0]!.id, done[29]!.id, 'the newest stay');
    assert.equal(await store.getDelivery(done[0]!.id), undefined, 'the oldest went');
  });
});
