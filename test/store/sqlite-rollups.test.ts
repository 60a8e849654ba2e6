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

  it('stay true when the writer does not know what changed: another connection, a deleted hook, a failed batch', async () => {
    const file = join(root, 'behind.db');
    const sqlite = new SqliteStore(file);
    const other = new SqliteStore(file);
    try {
      const store = new SqliteDeliveryStore(sqlite.db);
      const t0 = Date.now() - H;
      const batchOf = (from: number) =>
        Array.from({ length: 6 }, (_, i) => record(`hk_behind_${i % 3}`, t0 + (from + i) * 1000));
      const finish = (d: DeliveryRecord, n: number, status: 'succeeded' | 'failed' = 'succeeded') => ({
        ...emptyBatch(),
        updates: [
          state(d, {
            status,
            attempts: n,
            nextAttempt: null,
            lastStatusCode: status === 'failed' ? 500 : 200,
          }),
        ],
        attempts: [attempt(d, n, { statusCode: status === 'failed' ? 500 : 200 })],
      });
      const agree = (label: string) => {
        for (const k of ['owner', 'latency', 'hook'] as const)
          assert.deepEqual(
            sqlite.db.prepare(KEPT[k]).all(),
            sqlite.db.prepare(RECOUNT[k]).all(),
            `${label}: ${k}`,
          );
      };

      // Another connection finishes a pending delivery (as `hookd` writing the file would) and counts
      // it: the writer's next outcome of it is counted from what is stored, not the pending it wrote.
      const first = batchOf(0);
      await store.write({ ...emptyBatch(), inserts: first });
      const d0 = first[0]!;
      other.db
        .prepare("UPDATE deliveries SET status = 'failed', attempts = 1, next_attempt = NULL WHERE id = ?")
        .run(d0.id);
      other.db
        .prepare(
          'INSERT INTO stats_owner (owner, bucket, succeeded, failed, attempts, attempts_ok) VALUES (?, ?, 0, 1, 0, 0) ON CONFLICT (owner, bucket) DO UPDATE SET failed = failed + 1',
        )
        .run(d0.owner, d0.created - (d0.created % O));
      other.db
        .prepare(
          'INSERT INTO stats_hook (hook_id, bucket, succeeded, failed) VALUES (?, ?, 0, 1) ON CONFLICT (hook_id, bucket) DO UPDATE SET failed = failed + 1',
        )
        .run(d0.hookId, d0.created - (d0.created % H));
      await store.write(finish(d0, 2));
      agree('after another connection');

      // A deleted hook's pending deliveries are gone: a later outcome of one changes nothing.
      const second = batchOf(10);
      await store.write({ ...emptyBatch(), inserts: second });
      await store.write({ ...emptyBatch(), deletedHooks: ['hk_behind_1'] });
      await store.write(finish(second[1]!, 1));
      agree('after a hook was deleted');

      // A failed batch: its redelivery of a failed delivery never happened, so the delivery's next
      // outcome is counted from `failed`, not from the pending the batch would have written.
      const d2 = second[2]!;
      await store.write(finish(d2, 1, 'failed'));
      await assert.rejects(
        store.write({
          ...emptyBatch(),
          inserts: [second[3]!],
          updates: [state(d2, { status: 'pending', attempts: 1, roundStart: 1, nextAttempt: t0 })],
        }),
        /UNIQUE/,
      );
      await store.write(finish(d2, 2));
      agree('after a failed batch');

      const rest = [...first.slice(1), ...second.slice(3)].filter((d) => d.hookId !== 'hk_behind_1');
      for (const d of rest) await store.write(finish(d, 1));
      agree('at the end');
      const hooks = sqlite.db.prepare(KEPT.hook).all() as { succeeded: number }[];
      assert.equal(
        hooks.reduce((n, h) => n + h.succeeded, 0),
        rest.length + 2,
        'every outcome written is counted once',
      );
    } finally {
      await other.close();
      await sqlite.close();
    }
  });
});
