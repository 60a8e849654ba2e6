/**
 * The capabilities every store hands out (docs/DECISIONS.md "Store capabilities as interfaces"):
 * what each backend's Coordination and DeliverySharing do, on real SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Hook } from '../../src/hook/hook.js';
import {
  type ChangeFollower,
  type DeliveryStore,
  fromStore,
  guardStore,
  type HookSecretRecord,
  type Store,
} from '../../src/store/index.js';
import { MemoryDeliveryStore, MemoryStore } from '../../src/store/memory/index.js';
import { PgDatabase, PostgresDeliveryStore, PostgresStore } from '../../src/store/postgres/index.js';
import { SqliteDeliveryStore, SqliteStore } from '../../src/store/sqlite/index.js';
import { createTestDatabase, pgSkipReason } from '../helpers/pg-test-db.js';
import { until } from '../helpers/until.js';
import { insert, record } from './delivery-store-contract.js';
import { storedHook } from './store-contract.js';

const skip = await pgSkipReason();

/** A follower that records what it is told. */
function recorder() {
  const seen = { changed: [] as Hook[], elsewhere: 0 };
  const follower: ChangeFollower = {
    changed: (saved) => seen.changed.push(...saved),
    resync: () => undefined,
    changedElsewhere: () => {
      seen.elsewhere++;
    },
  };
  return { seen, follower };
}

const secret = (hookId: string, text: string): HookSecretRecord => ({
  hookId,
  secret: text,
  previous: null,
  previousValidUntil: null,
});

function sqliteFile() {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-capabilities-'));
  return { file: join(dir, 'hookd.db'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** What a delivery store of one process answers: everything is its own, nothing to claim or release. */
async function singleProcessSharing(store: DeliveryStore): Promise<void> {
  assert.equal(store.sharing.shared, false);
  const pending = record('hk_cap', Date.now());
  const done = record('hk_cap', Date.now(), { status: 'succeeded', nextAttempt: null });
  await insert(store, [pending, done]);
  assert.deepEqual(
    (await store.sharing.resumable()).map((r) => r.id),
    [pending.id],
  );
  assert.deepEqual(await store.sharing.claim(10), []);
  assert.equal(await store.sharing.release(), 0);
  assert.equal((await store.getDelivery(pending.id))!.status, 'pending', 'release leaves it where it is');
  const first = secret('hk_cap', 'whsec_a');
  assert.equal(await store.sharing.storeFirstSecret(first), first);
  assert.equal((await store.getSecret('hk_cap'))!.secret, 'whsec_a');
}

describe('store capabilities: one process', () => {
  it('memory: alone, exclusive sections run at once, nothing to follow', async () => {
    const store = new MemoryStore();
    assert.equal(store.coordination.shared, false);
    assert.equal(await store.coordination.exclusively(async () => 42), 42);
    const { seen, follower } = recorder();
    const stop = await store.coordination.followChanges(follower);
    await store.putHook(storedHook());
    stop();
    assert.deepEqual(seen, { changed: [], elsewhere: 0 }, 'its own writes are not news');
    await singleProcessSharing(new MemoryDeliveryStore());
  });

  it('SQLite: another process writing the file is followed as a change made elsewhere', async () => {
    const { file, remove } = sqliteFile();
    const daemon = new SqliteStore(file);
    const admin = new SqliteStore(file);
    try {
      assert.equal(daemon.coordination.shared, false);
      assert.equal(await daemon.coordination.exclusively(async () => 'ran'), 'ran');
      const { seen, follower } = recorder();
      const stop = await daemon.coordination.followChanges(follower);
      try {
        await admin.addUser({ name: 'bob', created: new Date().toISOString() });
        await until('the change made elsewhere', () => seen.elsewhere > 0, 5000);
      } finally {
        stop();
      }
      await singleProcessSharing(new SqliteDeliveryStore(daemon.db));
    } finally {
      await admin.close();
      await daemon.close();
      remove();
    }
  });

  it('a guarded store marks a store fault thrown inside its capabilities, and nothing else', async () => {
    const store = guardStore<Store>(new MemoryStore());
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    await assert.rejects(
      store.coordination.exclusively(async () => {
        throw refused;
      }),
      (err) => err === refused && fromStore(err),
    );
    const bug = new TypeError('not a fault');
    await assert.rejects(
      store.coordination.exclusively(async () => {
        throw bug;
      }),
      (err) => err === bug && !fromStore(err),
    );
    assert.equal(store.coordination, store.coordination, 'one guarded capability object per store');
  });
});

describe('store capabilities: a shared PostgreSQL database', { skip }, () => {
  it('coordination: shared, and a hook saved by another instance is followed', async () => {
    const tdb = await createTestDatabase();
    const a = new PostgresStore(await PgDatabase.open(tdb.url));
    const b = new PostgresStore(await PgDatabase.open(tdb.url));
    try {
      assert.equal(a.coordination.shared, true);
      assert.equal(await a.coordination.exclusively(async () => 7), 7);
      const { seen, follower } = recorder();
      const stop = await a.coordination.followChanges(follower);
      try {
        await b.addUser({ name: 'alice', created: new Date().toISOString() });
        const hook = storedHook('alice');
        await b.putHook(hook);
        await until('the hook saved by the other instance', () => seen.changed.some((h) => h.Id === hook.Id));
        assert.equal(seen.elsewhere, 0);
      } finally {
        stop();
      }
    } finally {
      await a.close();
      await b.close();
      await tdb.drop();
    }
  });

  it('delivery sharing: resumable claims what nobody holds; release hands it on; the first secret wins', async () => {
    const tdb = await createTestDatabase();
    const db = await PgDatabase.open(tdb.url);
    try {
      const one = new PostgresDeliveryStore(db, { lease: { id: 'i_one' } });
      const two = new PostgresDeliveryStore(db, { lease: { id: 'i_two' } });
      assert.equal(one.sharing.shared, true);
      const held = [record('hk_s', Date.now()), record('hk_s', Date.now())];
      await insert(one, held);
      assert.deepEqual(await two.sharing.resumable(), [], 'held by another instance');
      assert.equal(await one.sharing.release(), 2);
      const resumed = await two.sharing.resumable();
      assert.deepEqual(resumed.map((r) => r.id).sort(), held.map((r) => r.id).sort());
      assert.deepEqual(await one.sharing.claim(10), [], 'claimed once');
      const mine = await one.sharing.storeFirstSecret(secret('hk_s', 'whsec_one'));
      const theirs = await two.sharing.storeFirstSecret(secret('hk_s', 'whsec_two'));
      assert.equal(mine.secret, 'whsec_one');
      assert.equal(theirs.secret, 'whsec_one', 'the second creator gets the first one');
    } finally {
      await db.close();
      await tdb.drop();
    }
  });
});
