import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { HOOK_BUCKET_MS, latencyBinSql, OWNER_BUCKET_MS } from '../../src/store/delivery-aggregates.js';
import { type DeliveryRecord, type DeliveryState, emptyBatch } from '../../src/store/delivery-store.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { attempt, record } from './delivery-store-contract.js';

const root = mkdtempSync(join(tmpdir(), 'hookd-sqlite-rollups-'));
after(() => rmSync(root, { recursive: true, force: true }));

const O = OWNER_BUCKET_MS;
const H = HOOK_BUCKET_MS;

/** The rollups recounted from the log, as the migration that created them counts them. */
const RECOUNT = {
  owner: `SELECT owner, bucket, sum(s) AS succeeded, sum(f) AS failed, sum(a) AS attempts, sum(ok) AS attempts_ok FROM (
      SELECT owner, created - created % ${O} AS bucket, status = 'succeeded' AS s, status = 'failed' AS f, 0 AS a, 0 AS ok FROM deliveries
      UNION ALL
      SELECT d.owner, a.time - a.time % ${O}, 0, 0, 1, coalesce(a.status BETWEEN 200 AND 299, 0)
        FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
    ) GROUP BY 1, 2 HAVING sum(s) + sum(f) + sum(a) > 0 ORDER BY 1, 2`,
  latency: `SELECT d.owner, a.time - a.time % ${O} AS bucket, ${latencyBinSql('a.latency_ms')} AS bin, count(*) AS n
      FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
  hook: `SELECT hook_id, created - created % ${H} AS bucket, sum(status = 'succeeded') AS succeeded, sum(status = 'failed') AS failed
      FROM deliveries GROUP BY 1, 2 HAVING sum(status != 'pending') > 0 ORDER BY 1, 2`,
};
const KEPT = {
  owner:
    'SELECT owner, bucket, succeeded, failed, attempts, attempts_ok FROM stats_owner ' +
    'WHERE succeeded + failed + attempts > 0 ORDER BY 1, 2',
  latency: 'SELECT owner, bucket, bin, n FROM stats_latency WHERE n > 0 ORDER BY 1, 2, 3',
  hook: 'SELECT hook_id, bucket, succeeded, failed FROM stats_hook WHERE succeeded + failed > 0 ORDER BY 1, 2',
};

const state = (d: DeliveryRecord, over: Partial<DeliveryState>): DeliveryState => ({
  id: d.id,
  status: d.status,
  attempts: d.attempts,
  roundStart: d.roundStart,
  nextAttempt: d.nextAttempt,
  lastStatusCode: d.lastStatusCode,
  lastError: d.lastError,
  ...over,
});

describe('SQLite rollups counted by the writer', () => {
  it('agree with a recount of the log after mixed batches', async () => {
    const sqlite = new SqliteStore(join(root, 'mixed.db'));
    try {
      const store = new SqliteDeliveryStore(sqlite.db);
      const t0 = Date.now() - 3 * H;
      const ds: DeliveryRecord[] = [];
      for (let i = 0; i < 150; i++)
        ds.push(
          record(`hk_roll_${i % 4}`, t0 + i * 97_000, {
            owner: i % 3 === 0 ? 'bob' : 'alice',
            ...(i % 10 === 0 && { status: 'failed' as const, nextAttempt: null }),
          }),
        );
      // More than one chunk of inserts, states and reads; some finished when inserted.
      await store.write({ ...emptyBatch(), inserts: ds.slice(0, 100) });
      const outcome = (d: DeliveryRecord, ok: boolean, n: number) => ({
        state: state(d, { status: ok ? 'succeeded' : 'failed', attempts: n, nextAttempt: null }),
        attempt: attempt(d, n, { statusCode: ok ? 200 : 503, latencyMs: (n * 37) % 900 }),
      });
      const first = ds.slice(0, 90).map((d, i) => outcome(d, i % 4 !== 0, 1));
      await store.write({
        // Some inserted and finished in the same batch; a delivery changed twice in one batch.
        inserts: ds.slice(100),
        updates: [
          ...first.map((o) => o.state),
          ...ds.slice(100, 120).map((d) => state(d, { status: 'succeeded', attempts: 1, nextAttempt: null })),
          state(ds[1]!, { status: 'pending', attempts: 1, nextAttempt: t0 }),
          state(ds[1]!, { status: 'failed', attempts: 1, nextAttempt: null }),
          state(record('hk_roll_gone', t0), { status: 'succeeded' }),
        ],
        attempts: [
          ...first.map((o) => o.attempt),
          ...ds.slice(100, 120).map((d) => attempt(d, 1, { statusCode: 204, latencyMs: 12 })),
          attempt(record('hk_roll_gone', t0), 1),
        ],
        deletedHooks: [],
      });
      // A redelivery: a new round, then its outcome.
      const again = ds.slice(0, 30).filter((_d, i) => i % 4 === 0);
      await store.write({
        ...emptyBatch(),
        updates: again.map((d) =>
          state(d, { status: 'pending', attempts: 1, roundStart: 1, nextAttempt: t0 }),
        ),
      });
      await store.write({
        ...emptyBatch(),
        updates: again.map((d) =>
          state(d, { status: 'succeeded', attempts: 2, roundStart: 1, nextAttempt: null }),
        ),
        attempts: again.map((d) => attempt(d, 2, { statusCode: 200, latencyMs: 2500 })),
      });
      for (const k of ['owner', 'latency', 'hook'] as const)
        assert.deepEqual(sqlite.db.prepare(KEPT[k]).all(), sqlite.db.prepare(RECOUNT[k]).all(), k);
      assert.ok((sqlite.db.prepare(KEPT.owner).all() as unknown[]).length > 2, 'the figures are not empty');
    } finally {
      await sqlite.close();
    }
  });
});
