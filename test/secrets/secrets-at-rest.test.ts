/**
 * Secrets at rest (src/secrets/): values sealed with AES-256-GCM under the key file, a plain store
 * migrated on open, a missing or wrong key file refused by name, a key rotation beside a running
 * reader, and dumps of the SQLite file and of a PostgreSQL database that show no secret.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  isSealed,
  openSecretsKey,
  readKeyFile,
  rotateSecretsKey,
  SecretSealer,
  SecretsKeyError,
  sealedKeyId,
} from '../../src/secrets/index.js';
import type { HookSecretRecord } from '../../src/store/index.js';
import { PgDatabase } from '../../src/store/postgres/pg-database.js';
import { PostgresDeliveryStore } from '../../src/store/postgres/postgres-delivery-store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { skipReason } from '../helpers/require.js';
import { storedHook } from '../store/store-contract.js';

// Asked before any suite is declared: a top-level await between suites can let the runner
// finish the file before the suites after it are declared, so they would never run.
const noPgDump = spawnSync('pg_dump', ['--version']).status !== 0;
// PostgreSQL first (its own flag), then the dump tool.
const unavailable = (await pgSkipReason()) ?? skipReason(noPgDump && 'pg_dump is not installed');

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'hookd-secrets-'));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A secret nobody could mistake for anything else in a dump. */
const secretNo = (n: number) => `whsec_${Buffer.from(`secret number ${n} of the test!!`).toString('base64')}`;
const rec = (hookId: string, secret: string, previous: string | null = null): HookSecretRecord => ({
  hookId,
  secret,
  previous,
  previousValidUntil: previous === null ? null : 4_000_000_000_000,
});

/** A new key file in `dir`, loaded. */
async function sealerIn(dir: string): Promise<SecretSealer> {
  const sealer = new SecretSealer(join(dir, 'secrets.key'));
  await openSecretsKey(sealer, { secrets: [] });
  return sealer;
}

/** Every printable run in the files (what `strings` shows), the SQLite file's WAL included. */
function stringsOf(dir: string, prefix: string): string {
  let out = '';
  for (const f of readdirSync(dir).filter((n) => n.startsWith(prefix))) {
    const r = spawnSync('strings', ['-n', '6', join(dir, f)], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    out += r.stdout;
  }
  return out;
}

describe('the sealer', () => {
  it('seals each value differently, opens it for its own row only, and names the key', async () => {
    const sealer = await sealerIn(tmp());
    const a = sealer.seal('hk_a', secretNo(1));
    const b = sealer.seal('hk_a', secretNo(1));
    assert.notEqual(a, b, 'a data key and an iv of its own each time');
    assert.ok(isSealed(a) && !a.includes(secretNo(1)));
    assert.equal(sealedKeyId(a), sealer.currentKeyId);
    assert.equal(sealer.open('hk_a', a), secretNo(1));
    assert.throws(() => sealer.open('hk_b', a), /does not open with key .* another row/);
    const tampered = `${a.slice(0, -6)}AAAAA=`;
    assert.throws(() => sealer.open('hk_a', tampered), SecretsKeyError);
  });

  it('refuses a value sealed with a key its file does not hold, naming the file', async () => {
    const one = await sealerIn(tmp());
    const other = await sealerIn(tmp());
    const sealed = one.seal('hk_a', 'x');
    assert.throws(
      () => other.open('hk_a', sealed),
      (e: Error) =>
        e instanceof SecretsKeyError &&
        e.message.includes(other.file) &&
        e.message.includes(sealedKeyId(sealed)),
    );
  });

  it('creates the key file 0600, and refuses one that is not a key file, naming it', async () => {
    const dir = tmp();
    const sealer = await sealerIn(dir);
    assert.equal(statSync(sealer.file).mode & 0o777, 0o600);
    const set = readKeyFile(sealer.file);
    assert.equal(set.current, sealer.currentKeyId);
    const bad = join(dir, 'bad.key');
    writeFileSync(bad, '{"format": "hookd-secrets-key 1", "current": "k1", "keys": {"k1": "AAAA"}}');
    assert.throws(
      () => readKeyFile(bad),
      (e: Error) => e instanceof SecretsKeyError && e.message.includes(bad),
    );
    // A key listed under a name that is not its own: a hand-edited or swapped file.
    const doc = JSON.parse(readFileSync(sealer.file, 'utf8')) as { keys: Record<string, string> };
    const [[, key]] = Object.entries(doc.keys) as [[string, string]];
    writeFileSync(bad, JSON.stringify({ format: 'hookd-secrets-key 1', current: 'k0', keys: { k0: key } }));
    assert.throws(() => readKeyFile(bad), /not its own/);
  });
});

describe('a SQLite store', () => {
  /** A store written by a hookd from before sealing: plain secrets. */
  function plainStore(dir: string): void {
    const store = new SqliteStore(join(dir, 'hookd.db'));
    const d = new SqliteDeliveryStore(store.db);
    void d.putSecret(rec('hk_one', secretNo(1)));
    void d.putSecret(rec('hk_two', secretNo(2), secretNo(3)));
    void d.putSecret(rec('hookd:loop-marker', 'bG9vcCBtYXJrZXIga2V5IG9mIHRoZSB0ZXN0IQ=='));
    store.db.close();
  }

  function open(dir: string, keyFile = join(dir, 'secrets.key')) {
    const sealer = new SecretSealer(keyFile);
    const store = new SqliteStore(join(dir, 'hookd.db'), { secrets: sealer });
    return { sealer, store, deliveries: new SqliteDeliveryStore(store.db, sealer) };
  }

  it('is migrated from plain text on open: the file then holds no secret, and every one still reads', async () => {
    const dir = tmp();
    plainStore(dir);
    assert.match(
      stringsOf(dir, 'hookd.db'),
      /whsec_/,
      'the plain store shows its secrets (the check can fail)',
    );
    const s = open(dir);
    const r = await openSecretsKey(s.sealer, { secrets: [s.deliveries] });
    assert.deepEqual(r, { resealed: 3, created: true });
    assert.deepEqual(await s.deliveries.getSecret('hk_two'), rec('hk_two', secretNo(2), secretNo(3)));
    // A new hook's first secret, written with the hook.
    const hook = storedHook();
    await s.store.putHook(hook, rec(hook.Id, secretNo(4)));
    assert.equal((await s.deliveries.getSecret(hook.Id))?.secret, secretNo(4));
    await s.store.close();
    const dump = stringsOf(dir, 'hookd.db');
    assert.ok(dump.includes(hook.Id), 'strings does read the file');
    for (const n of [1, 2, 3, 4])
      assert.ok(!dump.includes(secretNo(n).slice(6, 30)), `secret ${n} in the file`);
    assert.ok(!dump.includes('whsec_'));
    assert.ok(!dump.includes('bG9vcCBtYXJrZXIga2V5'), 'the loop-marker key is sealed too');
    // Opened again: nothing left to seal.
    const again = open(dir);
    assert.deepEqual(await openSecretsKey(again.sealer, { secrets: [again.deliveries] }), {
      resealed: 0,
      created: false,
    });
    await again.store.close();
  });

  it('with sealed secrets, a missing key file or another key file stops the open, naming the file', async () => {
    const dir = tmp();
    plainStore(dir);
    const s = open(dir);
    await openSecretsKey(s.sealer, { secrets: [s.deliveries] });
    await s.store.close();
    rmSync(join(dir, 'secrets.key'));
    const missing = open(dir);
    await assert.rejects(openSecretsKey(missing.sealer, { secrets: [missing.deliveries] }), (e: Error) => {
      assert.ok(e instanceof SecretsKeyError);
      assert.match(e.message, /does not exist, but the store holds secrets sealed with key k[0-9a-f]{16}/);
      assert.ok(e.message.includes(join(dir, 'secrets.key')));
      return true;
    });
    assert.ok(!existsSync(join(dir, 'secrets.key')), 'no new key file made over sealed secrets');
    const wrong = open(dir, join(tmp(), 'other.key'));
    await openSecretsKey(new SecretSealer(wrong.sealer.file), { secrets: [] });
    await assert.rejects(openSecretsKey(wrong.sealer, { secrets: [wrong.deliveries] }), (e: Error) => {
      assert.ok(e instanceof SecretsKeyError);
      assert.ok(e.message.includes(wrong.sealer.file), e.message);
      assert.match(e.message, /a wrong or an older key file/);
      return true;
    });
    await missing.store.close();
    await wrong.store.close();
  });

  it('rotate-key re-seals under a new key beside a running reader, and a reopen works', async () => {
    const dir = tmp();
    plainStore(dir);
    const running = open(dir);
    await openSecretsKey(running.sealer, { secrets: [running.deliveries] });
    const first = running.sealer.currentKeyId;
    const tool = new SqliteStore(join(dir, 'hookd.db'));
    const r = await rotateSecretsKey(running.sealer.file, { secrets: [new SqliteDeliveryStore(tool.db)] });
    assert.notEqual(r.current, first);
    assert.equal(r.resealed, 3);
    // The running reader meets the new key's values and picks the file up.
    assert.equal((await running.deliveries.getSecret('hk_one'))?.secret, secretNo(1));
    for (const row of await new SqliteDeliveryStore(tool.db).storedSecrets('', 10)) {
      assert.equal(sealedKeyId(row.secret), r.current);
    }
    assert.deepEqual([...readKeyFile(running.sealer.file).keys.keys()], [r.current, first]);
    // A second rotation retires the first key, which no value names any more.
    const r2 = await rotateSecretsKey(running.sealer.file, { secrets: [new SqliteDeliveryStore(tool.db)] });
    assert.deepEqual(r2.retired, [first]);
    await tool.close();
    await running.store.close();
    const reopened = open(dir);
    assert.deepEqual(await openSecretsKey(reopened.sealer, { secrets: [reopened.deliveries] }), {
      resealed: 0,
      created: false,
    });
    assert.deepEqual(await reopened.deliveries.getSecret('hk_two'), rec('hk_two', secretNo(2), secretNo(3)));
    await reopened.store.close();
  });
});

describe('a PostgreSQL database', {
  skip: unavailable,
}, () => {
  let tdb: TestDatabase;
  before(async () => {
    tdb = await createTestDatabase();
  });
  after(async () => {
    await tdb?.drop();
  });

  it('is migrated from plain text, and pg_dump of it shows no secret', async () => {
    const db = await PgDatabase.open(tdb.url);
    const plain = new PostgresDeliveryStore(db);
    await plain.putSecret(rec('hk_pg1', secretNo(11)));
    await new PostgresDeliveryStore(db, { ephemeral: true }).putSecret(
      rec('hk_pg2', secretNo(12), secretNo(13)),
    );
    const dump = () => {
      const r = spawnSync('pg_dump', ['--data-only', tdb.url], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout;
    };
    assert.ok(dump().includes(secretNo(11)), 'a plain store shows its secrets (the check can fail)');

    const sealer = new SecretSealer(join(tmp(), 'secrets.key'));
    const durable = new PostgresDeliveryStore(db, { secrets: sealer });
    const ephemeral = new PostgresDeliveryStore(db, { ephemeral: true, secrets: sealer });
    assert.deepEqual(await openSecretsKey(sealer, { secrets: [durable, ephemeral] }), {
      resealed: 2,
      created: true,
    });
    const store = new PostgresStore(db, { secrets: sealer });
    const hook = storedHook();
    await store.putHook(hook, rec(hook.Id, secretNo(14)));
    const eph = storedHook('alice', { Persist: false });
    await store.ephemeralHooks.putHook(eph, rec(eph.Id, secretNo(15)));
    await durable.putSecret(rec('hk_pg3', secretNo(16), secretNo(11)));
    assert.equal((await durable.createSecret(rec('hk_pg4', secretNo(17)))).secret, secretNo(17));

    const text = dump();
    assert.ok(text.includes(hook.Id) && text.includes(eph.Id), 'the dump holds the hooks');
    for (const n of [11, 12, 13, 14, 15, 16, 17])
      assert.ok(!text.includes(secretNo(n).slice(6)), `secret ${n}`);
    assert.ok(!text.includes('whsec_'));
    assert.deepEqual(await ephemeral.getSecret('hk_pg2'), rec('hk_pg2', secretNo(12), secretNo(13)));
    assert.equal((await ephemeral.getSecret(eph.Id))?.secret, secretNo(15));
    assert.equal((await durable.getSecret(hook.Id))?.secret, secretNo(14));
    await db.close();
  });
});
