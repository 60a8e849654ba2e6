/**
 * The sealed marker (docs/decisions/0077): a start whose store is wholly sealed under the current
 * key skips the re-sealing walk; the first start, a rotation, a plain value an older hookd wrote
 * and a write under the replaced key make the walk run again. A real SQLite data dir and a real
 * PostgreSQL database, with hooks whose Callbacks carry credentials.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openSecretsKey, readKeyFile, type SealedTables, SecretSealer } from '../../src/secrets/index.js';
import { emptyBatch, type HookSecretRecord } from '../../src/store/index.js';
import { PgDatabase } from '../../src/store/postgres/pg-database.js';
import { PgSealedMarker } from '../../src/store/postgres/pg-sealed-marker.js';
import { PostgresDeliveryStore } from '../../src/store/postgres/postgres-delivery-store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteSealedMarker } from '../../src/store/sqlite/sqlite-sealed-marker.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { HOOKD_BIN, spawnHookd } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { createHook } from '../helpers/servers.js';
import { record } from '../store/delivery-store-contract.js';
import { storedHook } from '../store/store-contract.js';

const CALLBACK = 'https://alice:pw-marker-7Qx@receiver.example/hooks';
const unavailable = await pgSkipReason();
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'hookd-marker-'));
  dirs.push(d);
  return d;
}
const rec = (hookId: string, secret: string): HookSecretRecord => ({
  hookId,
  secret,
  previous: null,
  previousValidUntil: null,
});
function rotateKey(args: string[]): string {
  const r = spawnSync(process.execPath, [HOOKD_BIN, 'secrets', 'rotate-key', ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

describe('the sealed marker in a SQLite data dir', () => {
  const dir = tmp();
  const keyFile = join(dir, 'secrets.key');
  const file = join(dir, 'hookd.db');

  function open() {
    const sealer = new SecretSealer(keyFile);
    const store = new SqliteStore(file, { secrets: sealer });
    const deliveries = new SqliteDeliveryStore(store.db, sealer);
    const marker = new SqliteSealedMarker(store.db);
    const tables: SealedTables = { secrets: [deliveries], credentials: [store, deliveries], marker };
    return { sealer, store, deliveries, marker, tables };
  }
  const markerRow = (s: SqliteStore) =>
    s.db.prepare('SELECT key, sealed FROM secrets_sealed').get() as { key: string | null; sealed: number };

  before(async () => {
    // A store as a hookd from before sealing left it: plain credentials and secrets.
    const plain = new SqliteStore(file);
    const d = new SqliteDeliveryStore(plain.db);
    for (let i = 0; i < 3; i++) {
      const hook = storedHook('alice', { Callback: CALLBACK });
      await plain.putHook(hook, rec(hook.Id, `whsec_plain_${i}`));
      const delivery = record(hook.Id, Date.now(), {
        request: { method: 'POST', url: CALLBACK, headers: {} },
      });
      await d.write({ ...emptyBatch(), inserts: [delivery] });
    }
    assert.equal(markerRow(plain).sealed, 0, 'the migration leaves the marker unset');
    await plain.close();
  });

  it('the first start walks and records the key; the second skips the walk', async () => {
    const first = open();
    const r1 = await openSecretsKey(first.sealer, first.tables);
    assert.equal(r1.created, true);
    assert.ok(r1.resealed >= 9, `resealed ${r1.resealed}`);
    assert.equal(r1.marker, 'set');
    assert.deepEqual(markerRow(first.store), { key: first.sealer.currentKeyId, sealed: 1 });
    // Writes through a sealer under the marker's key keep it.
    const hook = storedHook('alice', { Callback: CALLBACK });
    await first.store.putHook(hook, rec(hook.Id, 'whsec_new'));
    assert.equal(markerRow(first.store).sealed, 1);
    await first.store.close();

    const second = open();
    assert.deepEqual(await openSecretsKey(second.sealer, second.tables), {
      resealed: 0,
      created: false,
      marker: 'kept',
    });
    await second.store.close();
  });

  it('hookd secrets rotate-key walks and records the new key', async () => {
    const before = readKeyFile(keyFile).current;
    const out = rotateKey(['--data-dir', dir]);
    const current = readKeyFile(keyFile).current;
    assert.notEqual(current, before);
    assert.match(out, /re-encrypted (\d+) stored secret/);
    assert.ok(Number(/re-encrypted (\d+)/.exec(out)![1]) >= 9, out);
    const s = open();
    assert.deepEqual(markerRow(s.store), { key: current, sealed: 1 });
    assert.deepEqual(await openSecretsKey(s.sealer, s.tables), {
      resealed: 0,
      created: false,
      marker: 'kept',
    });
    await s.store.close();
  });

  it('a plain value written as an older hookd writes it clears the marker, and the next start walks', async () => {
    const old = new SqliteStore(file);
    const hook = storedHook('alice', { Callback: CALLBACK });
    await old.putHook(hook);
    assert.deepEqual(markerRow(old), { key: null, sealed: 0 });
    await old.close();
    const s = open();
    const r = await openSecretsKey(s.sealer, s.tables);
    assert.equal(r.resealed, 1);
    assert.equal(r.marker, 'set');
    await s.store.close();
    const raw = new SqliteStore(file);
    // A plain secret and a plain delivery URL, each alone, clear it too.
    const changed = raw.db
      .prepare(
        "UPDATE hook_secrets SET secret = 'whsec_plain_again' WHERE hook_id = (SELECT min(hook_id) FROM hook_secrets)",
      )
      .run();
    assert.equal(changed.changes, 1);
    assert.equal(markerRow(raw).sealed, 0);
    await raw.close();
    const t = open();
    assert.equal((await openSecretsKey(t.sealer, t.tables)).marker, 'set');
    const d = new SqliteDeliveryStore(t.store.db);
    const delivery = record(hook.Id, Date.now(), { request: { method: 'POST', url: CALLBACK, headers: {} } });
    await d.write({ ...emptyBatch(), inserts: [delivery] });
    assert.equal(markerRow(t.store).sealed, 0);
    // A plain URL without credentials keeps it.
    assert.equal((await openSecretsKey(t.sealer, t.tables)).marker, 'set');
    const other = record(hook.Id, Date.now(), {
      request: { method: 'POST', url: 'https://receiver.example/a?to=x@y', headers: {} },
    });
    await d.write({ ...emptyBatch(), inserts: [other] });
    assert.equal(markerRow(t.store).sealed, 1);
    await t.store.close();
  });

  it('a walk beside another walk, or a write under another key during it, records nothing', async () => {
    const s = open();
    s.sealer.load();
    const k = s.sealer.currentKeyId;
    const a = await s.marker.beginWalk(k);
    const b = await s.marker.beginWalk(k);
    assert.equal(await s.marker.finishWalk(k, a), false, 'the earlier walk');
    assert.equal(await s.marker.finishWalk(k, b), true, 'the later walk');
    const c = await s.marker.beginWalk('kSomeOtherKey000');
    const hook = storedHook();
    await s.store.putHook(hook, rec(hook.Id, 'whsec_x'));
    assert.equal(await s.marker.finishWalk('kSomeOtherKey000', c), false);
    assert.equal(await s.marker.sealedUnder(), undefined);
    await s.store.close();
  });
});

describe('the sealed marker in a running hookd', () => {
  const NOTHING = 'nothing to walk';
  const start = (dataDir: string) => spawnHookd([], { dataDir, env: { HOOKD_LOG_LEVEL: 'debug' } });
  const said = (lines: string[]) => lines.find((l) => l.includes(NOTHING));

  it('walks at its first start, logs that it skips the walk at the next, and after rotate-key', async () => {
    const dir = tmp();
    const keyFile = join(dir, 'secrets.key');
    const first = await start(dir);
    await createHook(first, {
      PathPattern: '/orders/*',
      Methods: ['GET'],
      Type: 1,
      Callback: 'https://alice:pw@127.0.0.1:9/cb',
    });
    assert.equal(said(first.lines), undefined, 'the first start walks');
    await first.stop();
    const second = await start(dir);
    assert.match(said(second.lines) ?? '', new RegExp(`under key ${readKeyFile(keyFile).current}`));
    await second.stop();
    rotateKey(['--data-dir', dir]);
    const third = await start(dir);
    assert.match(said(third.lines) ?? '', new RegExp(`under key ${readKeyFile(keyFile).current}`));
    await third.stop();
  });
});

describe('the sealed marker in a PostgreSQL database', { skip: unavailable }, () => {
  let tdb: TestDatabase;
  before(async () => {
    tdb = await createTestDatabase();
  });
  after(async () => {
    await tdb?.drop();
  });

  it('set by the first start, kept by the next, right after concurrent starts, a rotation and a stale writer', async () => {
    const keyFile = join(tmp(), 'secrets.key');
    const db = await PgDatabase.open(tdb.url);
    try {
      const plain = new PostgresStore(db);
      for (const persist of [true, false]) {
        const hook = storedHook('alice', { Callback: CALLBACK, Persist: persist });
        await (persist ? plain : plain.ephemeralHooks).putHook(hook, rec(hook.Id, 'whsec_pg_plain'));
      }
      const open = () => {
        const sealer = new SecretSealer(keyFile);
        const store = new PostgresStore(db, { secrets: sealer });
        const durable = new PostgresDeliveryStore(db, { secrets: sealer });
        const ephemeral = new PostgresDeliveryStore(db, { ephemeral: true, secrets: sealer });
        const tables: SealedTables = {
          secrets: [durable, ephemeral],
          credentials: [store.hooks, store.ephemeralHooks, durable, ephemeral],
          marker: new PgSealedMarker(db),
        };
        return { sealer, store, durable, tables };
      };
      const markerRow = async () =>
        (
          await db.pool.query<{ key: string | null; sealed: number }>(
            'SELECT key, sealed FROM secrets_sealed',
          )
        ).rows[0];
      const first = open();
      const r1 = await openSecretsKey(first.sealer, first.tables);
      assert.equal(r1.marker, 'set');
      assert.ok(r1.resealed >= 4, `resealed ${r1.resealed}`);
      const second = open();
      assert.deepEqual(await openSecretsKey(second.sealer, second.tables), {
        resealed: 0,
        created: false,
        marker: 'kept',
      });

      // Two instances starting at once on a store to walk: whatever each records, the marker is
      // set only if every value is sealed under its key, and a start after them finds it so.
      await new PostgresStore(db).putHook(storedHook('alice', { Callback: CALLBACK }));
      assert.equal((await markerRow())?.sealed, 0);
      const [x, y] = [open(), open()];
      const both = await Promise.all([
        openSecretsKey(x.sealer, x.tables),
        openSecretsKey(y.sealer, y.tables),
      ]);
      assert.equal(both[0].resealed + both[1].resealed, 1);
      const after = open();
      assert.match((await openSecretsKey(after.sealer, after.tables)).marker ?? '', /^(kept|set)$/);
      const unsealed = await db.pool.query(
        "SELECT hook_id FROM hook_secrets WHERE secret NOT LIKE 'hkx1:' || $1 || ':%'",
        [after.sealer.currentKeyId],
      );
      assert.equal(unsealed.rowCount, 0);

      // A rotation walks and records the new key; an instance still on the replaced key then
      // writes under it, which clears the marker, and the next start walks.
      const stale = open();
      await openSecretsKey(stale.sealer, stale.tables);
      const out = rotateKey(['--database-url', tdb.url, '--secrets-key-file', keyFile]);
      assert.match(out, /new key/);
      const current = readKeyFile(keyFile).current;
      assert.deepEqual(await markerRow(), { key: current, sealed: 1 });
      const h = storedHook('alice', { Callback: CALLBACK });
      await stale.store.putHook(h, rec(h.Id, 'whsec_under_the_old_key'));
      assert.notEqual(stale.sealer.currentKeyId, current, 'the stale instance has not read the new file');
      assert.deepEqual(await markerRow(), { key: null, sealed: 0 });
      const next = open();
      const r = await openSecretsKey(next.sealer, next.tables);
      assert.equal(r.marker, 'set');
      assert.equal(r.resealed, 2, 'the hook document and its secret');
      assert.deepEqual(await markerRow(), { key: current, sealed: 1 });
    } finally {
      await db.close();
    }
  });
});
