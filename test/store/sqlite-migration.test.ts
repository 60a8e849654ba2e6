import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { DeliveryPipeline } from '../../src/delivery/pipeline.js';
import { samePlanForAll } from '../../src/delivery/plan/index.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import { OWNER_BUCKET_MS } from '../../src/store/delivery-aggregates.js';
import { emptyBatch } from '../../src/store/delivery-store.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { attempt, record } from './delivery-store-contract.js';

const root = mkdtempSync(join(tmpdir(), 'hookd-sqlite-migration-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** The schema of version 12 (rollups kept by row triggers), applied as a hookd of then did. */
const V12 = 12;

const INSERT_V12 =
  'INSERT INTO deliveries (id, hook_id, owner, hook_type, status, attempts, round_start, created, next_attempt, ' +
  'last_status, last_error, t_method, t_path, t_status, method, url, headers, body) ' +
  'VALUES (@id, @hookId, @owner, 1, @status, @attempts, 0, @created, @nextAttempt, @last, NULL, ' +
  "'GET', '/r/1', 200, 'POST', @url, '{\"content-type\":\"application/json\"}', '{\"n\":1}')";

describe('SqliteStore: a data dir of schema version 12', () => {
  it('opens with every delivery and its rollups kept; a pending one resumes and is counted once', async () => {
    const dir = join(root, 'v12');
    mkdirSync(dir);
    const file = join(dir, 'hookd.db');
    const r = await startReceiver();
    const now = Date.now();
    const done = record('hk_mig_a', now - 2000, { status: 'succeeded', attempts: 1, nextAttempt: null });
    const waiting = record('hk_mig_a', now - 1000, { request: { ...done.request, url: `${r.url}/resume` } });
    {
      const old = new Database(file);
      old.pragma('journal_mode = WAL');
      for (const m of MIGRATIONS.slice(0, V12)) old.exec(m);
      old.pragma(`user_version = ${V12}`);
      const ins = old.prepare(INSERT_V12);
      for (const d of [done, waiting])
        ins.run({ ...d, last: d.status === 'succeeded' ? 200 : null, url: d.request.url });
      old
        .prepare(
          'INSERT INTO delivery_attempts (delivery_id, attempt, hook_id, time, status, latency_ms) VALUES (?, 1, ?, ?, 200, 12)',
        )
        .run(done.id, done.hookId, done.created + 5);
      old.close();
    }

    const sqlite = new SqliteStore(file);
    try {
      assert.equal(sqlite.db.pragma('user_version', { simple: true }), MIGRATIONS.length);
      const triggers = sqlite.db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
        .pluck()
        .all();
      // The sealed marker's triggers (docs/decisions/0077) and the change count of users, tokens
      // and hooks (decision 0082) are the only others.
      const marker = triggers.filter((n) => String(n).startsWith('secrets_sealed_'));
      assert.equal(marker.length, 6, 'the sealed marker is kept by triggers on three tables');
      const counted = triggers.filter((n) => String(n).startsWith('store_changes_'));
      assert.equal(counted.length, 9, 'every insert, update and delete of three tables is counted');
      assert.deepEqual(
        triggers.filter((n) => !marker.includes(n) && !counted.includes(n)),
        ['listener_attempts_gone', 'stats_hook_gone'],
        'no rollup trigger left',
      );
      assert.deepEqual(sqlite.db.prepare('SELECT key, sealed FROM secrets_sealed').get(), {
        key: null,
        sealed: 0,
      });
      const store = new SqliteDeliveryStore(sqlite.db);
      assert.equal((await store.getDelivery(done.id))?.status, 'succeeded');
      assert.equal((await store.listAttempts(done.id)).length, 1);
      assert.deepEqual(
        (await store.pendingDeliveries()).map((d) => d.id),
        [waiting.id],
      );
      const since = now - 3_600_000;
      assert.deepEqual(await store.aggregates.totals('alice', since), {
        succeeded: 1,
        failed: 0,
        attempts: 1,
        attemptsOk: 1,
      });

      const pipeline = new DeliveryPipeline({
        stores: { durable: store, ephemeral: new MemoryDeliveryStore() },
        send: { policy: new AddressPolicy(['127.0.0.0/8']) },
        plans: samePlanForAll(),
        retention: { intervalMs: 0 },
      });
      await pipeline.start();
      try {
        await r.waitFor(1);
        await until('the resumed delivery to end', () => pipeline.stats().live === 0);
        await pipeline.flush();
      } finally {
        await pipeline.close(0);
      }
      assert.equal(r.calls[0]?.url, '/resume');
      assert.equal((await store.getDelivery(waiting.id))?.status, 'succeeded');
      assert.deepEqual(await store.aggregates.totals('alice', since), {
        succeeded: 2,
        failed: 0,
        attempts: 2,
        attemptsOk: 2,
      });
      const bucket = (t: number) => t - (t % OWNER_BUCKET_MS);
      const series = await store.aggregates.series('alice', since);
      assert.equal(
        series.reduce((n, b) => n + b.succeeded, 0),
        2,
        `each delivery once, filed under its creation (${series.map((b) => b.bucket - bucket(now)).join(', ')})`,
      );

      // A write with the triggers gone counts a redelivery's round as they did.
      await store.write({
        ...emptyBatch(),
        updates: [{ ...done, status: 'pending', attempts: 1, roundStart: 1, nextAttempt: now }],
      });
      await store.write({
        ...emptyBatch(),
        updates: [
          { ...done, status: 'failed', attempts: 2, roundStart: 1, nextAttempt: null, lastStatusCode: 500 },
        ],
        attempts: [attempt(done, 2, { time: now, statusCode: 500, latencyMs: 40 })],
      });
      assert.deepEqual(await store.aggregates.totals('alice', since), {
        succeeded: 1,
        failed: 1,
        attempts: 3,
        attemptsOk: 2,
      });
    } finally {
      await sqlite.close();
      await r.close();
    }
  });
});
