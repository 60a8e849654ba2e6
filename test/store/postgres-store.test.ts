import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import type { Hook } from '../../src/hook/hook.js';
import { MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { PgDatabase, SchemaTooNewError } from '../../src/store/postgres/pg-database.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { until } from '../helpers/until.js';
import { storeContract, storedHook } from './store-contract.js';

const skip = await pgSkipReason();

const sample = storedHook;

if (skip) {
  describe('store contract: PostgresStore', { skip }, () => undefined);
  describe('PostgresStore', { skip }, () => undefined);
} else {
  let tdb: TestDatabase;
  before(async () => {
    tdb = await createTestDatabase();
  });
  after(async () => {
    await tdb?.drop();
  });

  storeContract('PostgresStore', async () => {
    await (await PgDatabase.open(tdb.url)).close();
    await tdb.truncate();
    return new PostgresStore(await PgDatabase.open(tdb.url));
  });

  describe('PostgresStore', () => {
    it('records the schema version, and instances opening together migrate once', async () => {
      const fresh = await createTestDatabase();
      try {
        const opened = await Promise.all([1, 2, 3, 4].map(() => PgDatabase.open(fresh.url)));
        const { rows } = await fresh.query<{ version: number }>('SELECT version FROM schema_migrations');
        assert.deepEqual(
          rows.map((r) => r.version),
          MIGRATIONS.map((m) => m.version),
        );
        for (const db of opened) await db.close();
      } finally {
        await fresh.drop();
      }
    });

    it('refuses a database migrated by a newer hookd, naming both versions', async () => {
      const fresh = await createTestDatabase();
      try {
        await (await PgDatabase.open(fresh.url)).close();
        await fresh.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')");
        await assert.rejects(PgDatabase.open(fresh.url), (err: Error) => {
          assert.ok(err instanceof SchemaTooNewError);
          assert.match(
            err.message,
            new RegExp(`version 999.*\\(${MIGRATIONS[MIGRATIONS.length - 1]!.version}\\)`),
          );
          return true;
        });
      } finally {
        await fresh.drop();
      }
    });

    it('a connection failure names the database without its password', async () => {
      const url = 'postgres://hookd:s3cret-pa55@127.0.0.1:1/hookd';
      await assert.rejects(PgDatabase.open(url), (err: Error) => {
        assert.match(err.message, /postgres:\/\/hookd:\*\*\*@127\.0\.0\.1:1\/hookd/);
        assert.ok(!err.message.includes('s3cret'), err.message);
        return true;
      });
    });

    it('keeps the two hook tables apart; removeUser empties both', async () => {
      await tdb.truncate();
      const store = new PostgresStore(await PgDatabase.open(tdb.url));
      try {
        await store.addUser({ name: 'alice', created: 'c' });
        const durable = sample();
        const ephemeral = sample('alice', { Persist: false });
        await store.putHook(durable);
        await store.ephemeralHooks.putHook(ephemeral);
        assert.deepEqual(
          (await store.allHooks()).map((h) => h.Id),
          [durable.Id],
        );
        assert.deepEqual(await store.ephemeralHooks.getHook(ephemeral.Id), ephemeral);
        assert.equal(await store.getHook(ephemeral.Id), undefined);
        assert.equal(await store.removeUser('alice'), true);
        assert.deepEqual(await store.ephemeralHooks.allHooks(), []);
        assert.deepEqual(await store.allHooks(), []);
      } finally {
        await store.close();
      }
    });

    it('reports hook changes made through another connection, in either table', async () => {
      await tdb.truncate();
      const watching = new PostgresStore(await PgDatabase.open(tdb.url));
      const writer = new PostgresStore(await PgDatabase.open(tdb.url));
      const saved: Hook[] = [];
      const deleted: string[] = [];
      const secrets: string[] = [];
      try {
        const stop = await watching.watchHookChanges({
          changed: (s, d) => {
            saved.push(...s);
            deleted.push(...d);
          },
          resync: () => undefined,
          secretChanged: (id) => secrets.push(id),
        });
        const a = sample();
        const b = sample('bob', { Persist: false });
        await writer.putHook(a);
        await writer.ephemeralHooks.putHook(b);
        await until('the condition', () => saved.length >= 2);
        assert.deepEqual(new Set(saved.map((h) => h.Id)), new Set([a.Id, b.Id]));
        assert.deepEqual(
          saved.find((h) => h.Id === b.Id),
          b,
        );
        await writer.deleteHook(a.Id);
        await until('the condition', () => deleted.length >= 1);
        assert.deepEqual(deleted, [a.Id]);
        await writer.db.pool.query("INSERT INTO hook_secrets (hook_id, secret) VALUES ($1, 'whsec_x')", [
          b.Id,
        ]);
        await until('the condition', () => secrets.length >= 1);
        assert.deepEqual(secrets, [b.Id]);
        stop();
      } finally {
        await watching.close();
        await writer.close();
      }
    });

    it('after the notification connection is lost, asks for a resync once it is back', async () => {
      await tdb.truncate();
      const db = await PgDatabase.open(tdb.url, { log: pino({ level: 'silent' }) });
      const watching = new PostgresStore(db);
      const writer = new PostgresStore(await PgDatabase.open(tdb.url));
      let resyncs = 0;
      const seen = new Set<string>();
      try {
        await watching.watchHookChanges({
          changed: (s) => {
            for (const h of s) seen.add(h.Id);
          },
          resync: () => {
            resyncs++;
          },
        });
        const killed = await tdb.query<{ n: number }>(
          'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
          [`hookd-listen/${db.nodeId}`],
        );
        assert.equal(killed.rows[0]!.n, 1, 'the listening connection was found and cut');
        await until('the condition', () => resyncs === 1, 10_000);
        // Listening again: a change made now arrives as a notification.
        const h = sample();
        await writer.putHook(h);
        await until('the condition', () => seen.has(h.Id));
      } finally {
        await watching.close();
        await writer.close();
      }
    });

    it('exclusively runs one section at a time across connections', async () => {
      const a = new PostgresStore(await PgDatabase.open(tdb.url));
      const b = new PostgresStore(await PgDatabase.open(tdb.url));
      try {
        const log: string[] = [];
        let release!: () => void;
        const gate = new Promise<void>((r) => {
          release = r;
        });
        const first = a.exclusively(async () => {
          log.push('a in');
          await gate;
          log.push('a out');
        });
        await until('the condition', () => log.length === 1);
        const second = b.exclusively(async () => {
          log.push('b in');
        });
        // b has reached the lock and waits: PostgreSQL shows its request, not granted.
        await until('b waits for the lock', async () => {
          const { rows } = await tdb.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          );
          return rows[0]!.n > 0;
        });
        assert.deepEqual(log, ['a in'], 'b waits while a holds the lock');
        release();
        await Promise.all([first, second]);
        assert.deepEqual(log, ['a in', 'a out', 'b in']);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
}
