import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeliveryRecord } from '../../src/store/delivery-store.js';
import { emptyBatch } from '../../src/store/delivery-store.js';
import { PgDatabase } from '../../src/store/postgres/pg-database.js';
import { PostgresDeliveryStore } from '../../src/store/postgres/postgres-delivery-store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { createTestDatabase, pgSkipReason } from '../helpers/pg-test-db.js';
import { requireOrSkip } from '../helpers/require.js';
import { attempt, deliveryStoreContract, insert, record } from './delivery-store-contract.js';

const skip = await pgSkipReason();

/** A store on a database of its own; `close` drops the database. */
async function open(ephemeral = false) {
  const tdb = await createTestDatabase();
  const db = await PgDatabase.open(tdb.url);
  return {
    tdb,
    db,
    store: new PostgresDeliveryStore(db, { ephemeral }),
    close: async () => {
      await db.close();
      await tdb.drop();
    },
  };
}

if (skip) {
  describe('DeliveryStore contract: postgres', { skip }, () => undefined);
} else {
  deliveryStoreContract('postgres', () => open());
  deliveryStoreContract('postgres (unlogged tables of Persist: false hooks)', () => open(true));

  describe('PostgresDeliveryStore', () => {
    it('the log filters take the partial indexes, which hold no success', async () => {
      const { db, store, close } = await open();
      try {
        const t0 = Date.now();
        // Mostly successes, as a hook's log is, with the statistics read: the rare statuses'
        // filters are then worth an index.
        const ds = Array.from({ length: 3000 }, (_, i) =>
          record('hk_plans', t0 + i, {
            ...(i % 30 !== 1 && { status: 'succeeded' as const, lastStatusCode: 200, nextAttempt: null }),
            ...(i % 30 === 1 && { status: 'failed' as const, lastStatusCode: 503, nextAttempt: null }),
          }),
        );
        await insert(store, ds);
        await db.pool.query('ANALYZE deliveries');
        const seen: { text: string; values: unknown[] }[] = [];
        const query = db.pool.query.bind(db.pool) as (text: string, values?: unknown[]) => Promise<unknown>;
        (db.pool as { query: unknown }).query = (text: string, values?: unknown[]) => {
          seen.push({ text, values: values ?? [] });
          return query(text, values);
        };
        // With the table's scans priced out, what the planner takes shows that the filter's
        // WHERE can use the partial index.
        const plan = async (q: Parameters<typeof store.listDeliveries>[1]): Promise<string> => {
          seen.length = 0;
          await store.listDeliveries('hk_plans', q);
          const { text, values } = seen.at(-1)!;
          const client = await db.pool.connect();
          try {
            await client.query('SET enable_seqscan = off');
            const r = await client.query(`EXPLAIN ${text}`, values);
            return (r.rows as { 'QUERY PLAN': string }[]).map((l) => l['QUERY PLAN']).join('\n');
          } finally {
            await client.query('RESET enable_seqscan');
            client.release();
          }
        };
        assert.match(await plan({ status: 'failed' }), /deliveries_by_hook_status/);
        assert.match(await plan({ receiverStatus: [500, 599] }), /deliveries_by_hook_last_status/);
        assert.match(await plan({ receiverStatus: [503, 503] }), /deliveries_by_hook_last_status/);
        assert.doesNotMatch(await plan({ receiverStatus: [200, 299] }), /deliveries_by_hook_last_status/);
        const defs = await db.pool.query(
          "SELECT indexname, indexdef FROM pg_indexes WHERE indexname IN ('deliveries_by_hook_status', 'deliveries_by_hook_last_status') ORDER BY indexname",
        );
        assert.deepEqual(
          (defs.rows as { indexname: string; indexdef: string }[]).map((r) => [
            r.indexname,
            / WHERE /.test(r.indexdef),
          ]),
          [
            ['deliveries_by_hook_last_status', true],
            ['deliveries_by_hook_status', true],
          ],
        );
      } finally {
        await close();
      }
    });

    it('writes a batch all or nothing', async () => {
      const { store, close } = await open();
      try {
        const a = record('hk_atomic', Date.now());
        await insert(store, [a]);
        const b = record('hk_atomic', Date.now());
        await assert.rejects(insert(store, [b, a]), /duplicate key/);
        assert.equal(await store.getDelivery(b.id), undefined, 'the batch was rolled back');
      } finally {
        await close();
      }
    });

    it('keeps a NUL in a body, a path and an error (PostgreSQL text cannot hold one)', async () => {
      const { store, close } = await open();
      try {
        const d = record('hk_nul', Date.now(), {
          trigger: { method: 'GET', path: '/a\u0000b' },
          request: { method: 'POST', url: 'https://r.example/', headers: {}, body: 'x\u0000y' },
          lastError: 'bad\u0000',
        });
        await insert(store, [d]);
        const back = (await store.getDelivery(d.id))!;
        assert.equal(back.request.body, 'x\u0000y', 'the body is bytes and comes back exactly');
        assert.equal(back.trigger.path, '/a\ufffdb');
        assert.equal(back.lastError, 'bad\ufffd');
      } finally {
        await close();
      }
    });

    it('an update inserted in the same batch, and a deleted hook in a batch, apply in order', async () => {
      const { store, close } = await open();
      try {
        const d = record('hk_same', Date.now());
        const gone = record('hk_same_gone', Date.now());
        await store.write({
          inserts: [d, gone],
          updates: [{ ...d, status: 'succeeded', attempts: 1, nextAttempt: null }],
          attempts: [],
          deletedHooks: ['hk_same_gone'],
        });
        assert.equal((await store.getDelivery(d.id))!.status, 'succeeded');
        assert.equal(await store.getDelivery(gone.id), undefined);
      } finally {
        await close();
      }
    });

    it("claims free pending deliveries and those of an instance whose lease ran out, never a live one's", async () => {
      const { db, tdb, close } = await open();
      try {
        const live = { id: 'i_live' };
        const dead = { id: 'i_dead' };
        const me = { id: 'i_me' };
        await tdb.query(
          "INSERT INTO hookd_instances (id, host, pid, lease_until) VALUES ('i_live', 'h', 1, now() + interval '1 hour'), " +
            "('i_dead', 'h', 2, now() - interval '1 second'), ('i_me', 'h', 3, now() + interval '1 hour')",
        );
        const byLive = new PostgresDeliveryStore(db, { lease: live });
        const byDead = new PostgresDeliveryStore(db, { lease: dead });
        const mine = new PostgresDeliveryStore(db, { lease: me });
        const ofLive = [record('hk_c', Date.now()), record('hk_c', Date.now())];
        const ofDead = [record('hk_c', Date.now()), record('hk_c', Date.now())];
        const deadDone = record('hk_c', Date.now(), { status: 'succeeded', nextAttempt: null });
        const released = record('hk_c', Date.now());
        await insert(byLive, ofLive);
        await insert(byDead, [...ofDead, deadDone]);
        await insert(byLive, [released]);
        await tdb.query('UPDATE deliveries SET lease_owner = NULL WHERE id = $1', [released.id]);

        const first = await mine.claimPending(2);
        const second = await mine.claimPending(10);
        const claimed = [...first, ...second].map((r) => r.id).sort();
        assert.equal(first.length, 2, 'limit');
        assert.deepEqual(claimed, [...ofDead, released].map((r) => r.id).sort());
        assert.deepEqual(await mine.claimPending(10), [], 'nothing is claimed twice');
        const { rows } = await tdb.query<{ id: string; lease_owner: string }>(
          "SELECT id, lease_owner FROM deliveries WHERE status = 'pending'",
        );
        for (const r of rows) {
          const expected = ofLive.some((d) => d.id === r.id) ? 'i_live' : 'i_me';
          assert.equal(r.lease_owner, expected, r.id);
        }

        // The dead instance comes back (its lease ran out): its outcome for a delivery now held
        // by another instance is not written; a graceful stop lets go of what it holds.
        await byDead.write({
          ...emptyBatch(),
          updates: [{ ...ofDead[0]!, status: 'failed', attempts: 9, nextAttempt: null }],
        });
        assert.equal((await mine.getDelivery(ofDead[0]!.id))!.status, 'pending');
        assert.equal(await mine.releasePending(), 3);
        assert.equal((await byLive.claimPending(10)).length, 3);
      } finally {
        await close();
      }
    });

    it('several instances claiming at once never claim a delivery twice', async () => {
      const { db, tdb, close } = await open();
      try {
        const producer = new PostgresDeliveryStore(db, { lease: { id: 'i_gone' } });
        const all = Array.from({ length: 600 }, () => record('hk_race', Date.now()));
        await insert(producer, all);
        await tdb.query('UPDATE deliveries SET lease_owner = NULL');
        const claimers = [1, 2, 3, 4].map((n) => new PostgresDeliveryStore(db, { lease: { id: `i_${n}` } }));
        const got = await Promise.all(
          claimers.map(async (c) => {
            const ids: string[] = [];
            for (;;) {
              const batch = await c.claimPending(50);
              if (batch.length === 0) return ids;
              ids.push(...batch.map((r) => r.id));
            }
          }),
        );
        const flat = got.flat();
        assert.equal(flat.length, all.length);
        assert.equal(new Set(flat).size, all.length);
      } finally {
        await close();
      }
    });

    it("removeUser takes the user's deliveries, attempts and secrets along, of both kinds", async () => {
      const { db, close } = await open();
      try {
        const store = new PostgresStore(db, { ownsDatabase: false });
        const durable = new PostgresDeliveryStore(db);
        const ephemeral = new PostgresDeliveryStore(db, { ephemeral: true });
        await store.addUser({ name: 'alice', created: 'c' });
        await store.addUser({ name: 'bob', created: 'c' });
        const hook = (id: string, owner: string, persist: boolean) => ({
          Id: id,
          Owner: owner,
          PathPattern: '/a',
          Callback: 'https://r.example/',
          Methods: ['GET'],
          Type: 1 as const,
          StatusCodeBlackList: [],
          StatusCodeWhiteList: [],
          CallbackMethod: 'POST' as const,
          CallbackContentMediaType: 'application/json',
          Headers: {},
          Persist: persist,
          Modified: 'm',
          State: 'active' as const,
        });
        await store.putHook(hook('hk_a1', 'alice', true));
        await store.ephemeralHooks.putHook(hook('hk_a2', 'alice', false));
        await store.putHook(hook('hk_b1', 'bob', true));
        const a1 = record('hk_a1', Date.now(), { owner: 'alice' });
        const a2 = record('hk_a2', Date.now(), { owner: 'alice' });
        const b1 = record('hk_b1', Date.now(), { owner: 'bob' });
        await insert(durable, [a1, b1]);
        await insert(ephemeral, [a2]);
        await durable.write({ ...emptyBatch(), attempts: [attempt(a1, 1), attempt(b1, 1)] });
        const secret = (hookId: string) => ({
          hookId,
          secret: 'whsec_x',
          previous: null,
          previousValidUntil: null,
        });
        await durable.putSecret(secret('hk_a1'));
        await ephemeral.putSecret(secret('hk_a2'));
        await durable.putSecret(secret('hk_b1'));

        assert.equal(await store.removeUser('alice'), true);
        assert.equal(await durable.getDelivery(a1.id), undefined);
        assert.equal(await ephemeral.getDelivery(a2.id), undefined);
        assert.deepEqual(await durable.listAttempts(a1.id), []);
        assert.equal(await durable.getSecret('hk_a1'), undefined);
        assert.equal(await ephemeral.getSecret('hk_a2'), undefined);
        assert.ok(await durable.getDelivery(b1.id), "bob's stay");
        assert.equal((await durable.listAttempts(b1.id)).length, 1);
        assert.ok(await durable.getSecret('hk_b1'));
      } finally {
        await close();
      }
    });

    it('createSecret: the first secret stored wins, and every creator gets it', async () => {
      const { store, close } = await open();
      try {
        const tries = await Promise.all(
          ['whsec_a', 'whsec_b', 'whsec_c'].map((secret) =>
            store.createSecret({ hookId: 'hk_s', secret, previous: null, previousValidUntil: null }),
          ),
        );
        const stored = (await store.getSecret('hk_s'))!.secret;
        assert.ok(['whsec_a', 'whsec_b', 'whsec_c'].includes(stored));
        assert.deepEqual(
          tries.map((t) => t.secret),
          [stored, stored, stored],
        );
      } finally {
        await close();
      }
    });

    it('writes by index lookups even when the table grew without statistics (no sequential scan)', async (t) => {
      const tdb = await createTestDatabase();
      const version = await tdb.query<{ v: number }>(
        "SELECT current_setting('server_version_num')::int AS v",
      );
      if (version.rows[0]!.v < 150000) {
        await tdb.drop();
        return requireOrSkip(t, 'needs PostgreSQL 15 (pg_stat_force_next_flush)', 'postgres');
      }
      // One connection, so that every write runs in the backend whose statistics are flushed below.
      const db = await PgDatabase.open(tdb.url, { max: 1 });
      try {
        const store = new PostgresDeliveryStore(db);
        // No autovacuum: the table keeps having no statistics at all, whatever it grows to.
        await db.pool.query('ALTER TABLE deliveries SET (autovacuum_enabled = false)');
        // Writes while the table is tiny: a prepared statement would settle on a generic plan now.
        let prev: DeliveryRecord[] = [];
        const round = async (n: number) => {
          const inserts = Array.from({ length: n }, () => record('hk_plan', Date.now()));
          const updates = prev.map((d) => ({ ...d, status: 'succeeded' as const, attempts: 1 }));
          await store.write({ ...emptyBatch(), inserts, updates, attempts: prev.map((d) => attempt(d, 1)) });
          prev = inserts;
        };
        for (let i = 0; i < 8; i++) await round(2);
        // The table grows to 20,000 deliveries behind the planner's back (no ANALYZE).
        await db.pool.query(
          `INSERT INTO deliveries (id, hook_id, owner, hook_type, status, attempts, round_start, created,
             t_method, t_path, method, url, headers)
           SELECT 'msg_bulk' || lpad(g::text, 8, '0'), 'hk_bulk', 'alice', 1, 'succeeded', 1, 0, 0,
             'POST', '/x', 'POST', 'https://r.example/', '{}'
           FROM generate_series(1, 20000) g`,
        );
        const seqScans = async () => {
          // Flush this backend's statistics, then read them (a fresh snapshot per query).
          await db.pool.query('SELECT pg_stat_force_next_flush()');
          await db.pool.query('SELECT 1');
          const { rows } = await tdb.query<{ n: string }>(
            "SELECT seq_scan AS n FROM pg_stat_user_tables WHERE relname = 'deliveries'",
          );
          return Number(rows[0]!.n);
        };
        const before = await seqScans();
        for (let i = 0; i < 6; i++) await round(50);
        assert.equal(await seqScans(), before, 'no write scanned the whole deliveries table');
        assert.equal((await store.getDelivery(prev[0]!.id))?.status, 'pending');
      } finally {
        await db.close();
        await tdb.drop();
      }
    });
  });
}
