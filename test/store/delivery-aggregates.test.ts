import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OWNER_BUCKET_MS, quantile } from '../../src/store/delivery-aggregates.js';
import { type DeliveryStore, emptyBatch } from '../../src/store/delivery-store.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { PgDatabase } from '../../src/store/postgres/pg-database.js';
import { PostgresDeliveryStore } from '../../src/store/postgres/postgres-delivery-store.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createTestDatabase, pgSkipReason } from '../helpers/pg-test-db.js';
import { attempt, record } from './delivery-store-contract.js';

type Open = () => Promise<{ store: DeliveryStore; close: () => Promise<void> }>;

/** The console's figures, the same from every store, as deliveries are written and redelivered. */
function aggregatesContract(name: string, open: Open, skip?: string): void {
  describe(`DeliveryAggregates: ${name}`, { skip }, () => {
    let store: DeliveryStore;
    let close: () => Promise<void>;
    before(async () => {
      ({ store, close } = await open());
    });
    after(async () => close());

    it('counts outcomes, attempts and latencies per owner, and follows a redelivery', async () => {
      const agg = store.aggregates!;
      const now = Date.now();
      const since = now - 3_600_000;
      const ok = record('hk_agg_a', now);
      const bad = record('hk_agg_a', now + 1);
      const other = record('hk_agg_b', now + 2, { owner: 'bob' });
      // A delivery and its first attempt in one batch (the PostgreSQL single-statement write).
      await store.write({
        ...emptyBatch(),
        inserts: [ok, bad, other],
        attempts: [attempt(other, 1, { statusCode: 200, latencyMs: 10 })],
      });
      await store.write({
        ...emptyBatch(),
        updates: [
          { ...ok, status: 'succeeded', attempts: 1, nextAttempt: null, lastStatusCode: 200 },
          { ...bad, status: 'failed', attempts: 2, nextAttempt: null, lastStatusCode: 500 },
        ],
        attempts: [
          attempt(ok, 1, { statusCode: 200, latencyMs: 40 }),
          attempt(bad, 1, { statusCode: 500, latencyMs: 400 }),
          attempt(bad, 2, { statusCode: null, latencyMs: 4000, error: 'timeout' }),
        ],
      });
      assert.deepEqual(await agg.totals('alice', since), {
        succeeded: 1,
        failed: 1,
        attempts: 3,
        attemptsOk: 1,
      });
      assert.deepEqual(await agg.totals('bob', since), {
        succeeded: 0,
        failed: 0,
        attempts: 1,
        attemptsOk: 1,
      });
      const p50 = quantile(await agg.latency('alice', since), 0.5)!;
      assert.ok(p50 > 300 && p50 <= 500, `p50 ${p50} lies in the bin of 400 ms`);
      assert.deepEqual(await agg.pending('bob'), { count: 1, oldest: other.created });
      assert.deepEqual(await agg.pending('alice'), { count: 0, oldest: null });
      const series = await agg.series('alice', since);
      assert.equal(
        series.reduce((n, b) => n + b.succeeded + b.failed, 0),
        2,
      );
      assert.equal(series[0]!.bucket % OWNER_BUCKET_MS, 0);
      const hooks = await agg.hookSeries(['hk_agg_a', 'hk_agg_b'], since);
      assert.equal(
        hooks.get('hk_agg_a')!.reduce((n, b) => n + b.failed, 0),
        1,
      );
      const last = await agg.lastDeliveries(['hk_agg_a', 'hk_agg_b', 'hk_none']);
      assert.equal(last.get('hk_agg_a')!.status, 'failed');
      assert.equal(last.get('hk_agg_b')!.status, 'pending');
      assert.equal(last.has('hk_none'), false);

      // Redelivered: out of "failed" while pending, into "succeeded" when it works.
      await store.write({
        ...emptyBatch(),
        updates: [{ ...bad, status: 'pending', attempts: 2, roundStart: 2 }],
      });
      assert.equal((await agg.totals('alice', since)).failed, 0);
      await store.write({
        ...emptyBatch(),
        updates: [{ ...bad, status: 'succeeded', attempts: 3, roundStart: 2, nextAttempt: null }],
        attempts: [attempt(bad, 3, { statusCode: 204, latencyMs: 5 })],
      });
      assert.deepEqual(await agg.totals('alice', since), {
        succeeded: 2,
        failed: 0,
        attempts: 4,
        attemptsOk: 2,
      });
      assert.deepEqual(await agg.totals('alice', now + 2 * OWNER_BUCKET_MS), {
        succeeded: 0,
        failed: 0,
        attempts: 0,
        attemptsOk: 0,
      });
    });
  });
}

aggregatesContract('memory', async () => ({
  store: new MemoryDeliveryStore(),
  close: async () => undefined,
}));

aggregatesContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-agg-'));
  const sqlite = new SqliteStore(join(dir, 'hookd.db'));
  return {
    store: new SqliteDeliveryStore(sqlite.db),
    close: async () => {
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

const skip = await pgSkipReason();
for (const ephemeral of [false, true]) {
  aggregatesContract(
    ephemeral ? 'postgres (unlogged tables)' : 'postgres',
    async () => {
      const tdb = await createTestDatabase();
      const db = await PgDatabase.open(tdb.url);
      return {
        store: new PostgresDeliveryStore(db, { ephemeral }),
        close: async () => {
          await db.close();
          await tdb.drop();
        },
      };
    },
    skip,
  );
}
