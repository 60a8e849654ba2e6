/**
 * Credentials in a Callback URL (`https://user:password@host/…`) are sealed like the signing
 * secrets: in the hook's stored document and in each delivery's stored URL, migrated from a plain
 * store on open, re-sealed by a key rotation, and absent from `strings` of the SQLite file and
 * from `pg_dump`; every read gives the URL back as it was given.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openSecretsKey, rotateSecretsKey, SecretSealer, sealedKeyId } from '../../src/secrets/index.js';
import { emptyBatch } from '../../src/store/index.js';
import { PgDatabase } from '../../src/store/postgres/pg-database.js';
import { PostgresDeliveryStore } from '../../src/store/postgres/postgres-delivery-store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { skipReason } from '../helpers/require.js';
import { record } from '../store/delivery-store-contract.js';
import { storedHook } from '../store/store-contract.js';

// Asked before any suite is declared: a top-level await between suites can let the runner
// finish the file before the suites after it are declared, so they would never run.
const noPgDump = spawnSync('pg_dump', ['--version']).status !== 0;
// PostgreSQL first (its own flag), then the dump tool.
const unavailable = (await pgSkipReason()) ?? skipReason(noPgDump && 'pg_dump is not installed');

const PASSWORD = 'pw-Zq8xV3nT6kLr';
const CALLBACK = `https://alice:${PASSWORD}@receiver.example/hooks?x=1`;
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function stringsOf(dir: string): string {
  let out = '';
  for (const f of readdirSync(dir).filter((n) => n.startsWith('hookd.db'))) {
    out += spawnSync('strings', ['-n', '6', join(dir, f)], { encoding: 'utf8' }).stdout;
  }
  return out;
}

const noStrings = spawnSync('strings', ['--version']).status !== 0;
describe('Callback credentials in a SQLite store', {
  skip: noStrings && process.env.HOOKD_REQUIRE_ALL !== '1' ? 'strings is not installed' : undefined,
}, () => {
  it('are migrated from plain text on open, read back as given, and re-sealed by a rotation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookd-cred-'));
    dirs.push(dir);
    const hook = storedHook('alice', { Callback: CALLBACK });
    const plain = new SqliteStore(join(dir, 'hookd.db'));
    await plain.putHook(hook);
    const delivery = record(hook.Id, Date.now(), { request: { method: 'POST', url: CALLBACK, headers: {} } });
    await new SqliteDeliveryStore(plain.db).write({ ...emptyBatch(), inserts: [delivery] });
    await plain.close();
    assert.ok(stringsOf(dir).includes(PASSWORD), 'a plain store shows the password (the check can fail)');

    const open = () => {
      const sealer = new SecretSealer(join(dir, 'secrets.key'));
      const store = new SqliteStore(join(dir, 'hookd.db'), { secrets: sealer });
      const deliveries = new SqliteDeliveryStore(store.db, sealer);
      return {
        sealer,
        store,
        deliveries,
        tables: { secrets: [deliveries], credentials: [store, deliveries] },
      };
    };
    const s = open();
    assert.deepEqual(await openSecretsKey(s.sealer, s.tables), { resealed: 2, created: true });
    assert.equal((await s.store.getHook(hook.Id))?.Callback, CALLBACK);
    assert.equal((await s.store.allHooks())[0]?.Callback, CALLBACK);
    assert.equal((await s.deliveries.getDelivery(delivery.id))?.request.url, CALLBACK);
    // Written after the migration: sealed as it is written.
    const second = storedHook('alice', { Callback: CALLBACK.replace('alice', 'bob') });
    await s.store.putHook(second);
    const d2 = record(second.Id, Date.now(), {
      request: { method: 'POST', url: second.Callback, headers: {} },
    });
    await s.deliveries.write({ ...emptyBatch(), inserts: [d2] });
    assert.equal((await s.deliveries.listDeliveries(second.Id))[0]?.request.url, second.Callback);
    await s.store.close();
    const dump = stringsOf(dir);
    assert.ok(dump.includes('receiver.example'), 'the host stays readable');
    assert.ok(!dump.includes(PASSWORD), 'the password is in the file');

    const tool = new SqliteStore(join(dir, 'hookd.db'));
    const toolDeliveries = new SqliteDeliveryStore(tool.db);
    const r = await rotateSecretsKey(join(dir, 'secrets.key'), {
      secrets: [toolDeliveries],
      credentials: [tool, toolDeliveries],
    });
    assert.equal(r.resealed, 4);
    for (const row of await tool.credentialRows('', 10)) {
      assert.equal(
        sealedKeyId((JSON.parse(row.text) as { SealedCallback: string }).SealedCallback),
        r.current,
      );
    }
    for (const row of await toolDeliveries.credentialRows('', 10)) {
      assert.equal(sealedKeyId(row.text.slice('sealed:'.length)), r.current);
    }
    await tool.close();
    const again = open();
    assert.deepEqual(await openSecretsKey(again.sealer, again.tables), { resealed: 0, created: false });
    assert.equal((await again.store.getHook(hook.Id))?.Callback, CALLBACK);
    assert.equal(
      (await again.store.listHooks('alice')).find((h) => h.Id === second.Id)?.Callback,
      second.Callback,
    );
    await again.store.close();
  });
});

describe("a hook's Tls in a SQLite store", () => {
  it('is sealed as a whole, re-sealed by a rotation, and read back as given', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookd-tls-at-rest-'));
    dirs.push(dir);
    const tls = {
      ClientCertificate: 'CERT-TEXT-abc123',
      ClientKey: 'KEY-TEXT-def456',
      CaCertificates: 'CA-TEXT',
    };
    const sealer = new SecretSealer(join(dir, 'secrets.key'));
    const store = new SqliteStore(join(dir, 'hookd.db'), { secrets: sealer });
    const deliveries = new SqliteDeliveryStore(store.db, sealer);
    const tables = { secrets: [deliveries], credentials: [store, deliveries] };
    await openSecretsKey(sealer, tables);
    const hook = storedHook('alice', { Callback: 'https://receiver.example/x', Tls: tls });
    await store.putHook(hook);
    assert.deepEqual((await store.getHook(hook.Id))?.Tls, tls);
    const [row] = await store.credentialRows('', 10);
    assert.ok(row && !row.text.includes('KEY-TEXT') && !row.text.includes('CERT-TEXT'), row?.text);
    const r = await rotateSecretsKey(sealer.file, tables);
    assert.equal(r.resealed, 1);
    const [after] = await store.credentialRows('', 10);
    assert.equal(sealedKeyId((JSON.parse(after!.text) as { SealedTls: string }).SealedTls), r.current);
    assert.deepEqual((await store.allHooks())[0]?.Tls, tls);
    await store.close();
  });
});

describe('Callback credentials in a PostgreSQL database', {
  skip: unavailable,
}, () => {
  let tdb: TestDatabase;
  before(async () => {
    tdb = await createTestDatabase();
  });
  after(async () => {
    await tdb?.drop();
  });

  it('are migrated, sealed in hooks and deliveries of both kinds, and pg_dump shows none', async () => {
    const db = await PgDatabase.open(tdb.url);
    const plain = new PostgresStore(db);
    const old = storedHook('alice', { Callback: CALLBACK });
    await plain.putHook(old);
    const dump = () => spawnSync('pg_dump', ['--data-only', tdb.url], { encoding: 'utf8' }).stdout;
    assert.ok(dump().includes(PASSWORD), 'a plain store shows the password (the check can fail)');

    const sealer = new SecretSealer(join(mkdtempSync(join(tmpdir(), 'hookd-cred-pg-')), 'secrets.key'));
    const store = new PostgresStore(db, { secrets: sealer, ownsDatabase: false });
    const durable = new PostgresDeliveryStore(db, { secrets: sealer });
    const ephemeral = new PostgresDeliveryStore(db, { ephemeral: true, secrets: sealer });
    const r = await openSecretsKey(sealer, {
      secrets: [durable, ephemeral],
      credentials: [store.hooks, store.ephemeralHooks, durable, ephemeral],
    });
    assert.deepEqual(r, { resealed: 1, created: true });
    const eph = storedHook('alice', { Persist: false, Callback: CALLBACK });
    await store.ephemeralHooks.putHook(eph);
    const d1 = record(old.Id, Date.now(), { request: { method: 'POST', url: CALLBACK, headers: {} } });
    const d2 = record(eph.Id, Date.now(), { request: { method: 'POST', url: CALLBACK, headers: {} } });
    await durable.write({ ...emptyBatch(), inserts: [d1] });
    await ephemeral.write({ ...emptyBatch(), inserts: [d2] });

    const text = dump();
    assert.ok(text.includes(old.Id) && text.includes(eph.Id) && text.includes(d1.id));
    assert.ok(!text.includes(PASSWORD), 'the password is in the dump');
    assert.equal((await store.getHook(old.Id))?.Callback, CALLBACK);
    assert.equal((await store.ephemeralHooks.getHook(eph.Id))?.Callback, CALLBACK);
    assert.equal((await durable.getDelivery(d1.id))?.request.url, CALLBACK);
    assert.equal((await ephemeral.pendingDeliveries())[0]?.request.url, CALLBACK);
    await db.close();
  });
});
