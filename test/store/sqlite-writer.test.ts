import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { emptyBatch, isStoreFault, type SecretCodec } from '../../src/store/index.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { SqliteWriterStore } from '../../src/store/sqlite-writer/index.js';
import { until } from '../helpers/until.js';
import { insert, record, writeWithoutPause } from './delivery-store-contract.js';

// A codec whose sealed text shows which hook it was sealed for, and that it was.
const CODEC: SecretCodec = {
  seal: (hookId, plain) => `${hookId}|${Buffer.from(plain).toString('base64')}`,
  open: (hookId, stored) => {
    const [h, b] = stored.split('|');
    assert.equal(h, hookId, 'opened for the hook it was sealed for');
    return Buffer.from(b!, 'base64').toString();
  },
};

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function open(checkpointMs = 1000): { sqlite: SqliteStore; store: SqliteWriterStore; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-writer-'));
  const file = join(dir, 'hookd.db');
  const sqlite = new SqliteStore(file, { checkpoint: 'writer', secrets: CODEC });
  const store = new SqliteWriterStore(new SqliteDeliveryStore(sqlite.db, CODEC), CODEC, {
    file,
    synchronous: sqlite.synchronous,
    checkpointMs,
  });
  cleanups.push(async () => {
    await store.close();
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { sqlite, store, file };
}

describe('the SQLite writer thread', () => {
  it('seals a URL with credentials and a secret before they cross, and reads them back open', async () => {
    const { store, file } = open();
    const d = record('h1', Date.now(), {
      request: { method: 'POST', url: 'https://user:pw@receiver.example/x', headers: {} },
    });
    await insert(store, [d]);
    await store.putSecret({
      hookId: 'h1',
      secret: 'whsec_new',
      previous: 'whsec_old',
      previousValidUntil: 5,
    });
    const raw = new Database(file, { readonly: true });
    cleanups.push(() => {
      raw.close();
    });
    const url = raw.prepare('SELECT url FROM deliveries WHERE id = ?').pluck().get(d.id) as string;
    assert.ok(url.startsWith('sealed:h1|'), url);
    assert.ok(!url.includes('pw'), 'no password on disk');
    const secret = raw.prepare('SELECT secret, previous FROM hook_secrets').get() as Record<string, string>;
    assert.ok(secret.secret!.startsWith('h1|') && secret.previous!.startsWith('h1|'), JSON.stringify(secret));
    assert.equal((await store.getDelivery(d.id))?.request.url, 'https://user:pw@receiver.example/x');
    assert.deepEqual(await store.getSecret('h1'), {
      hookId: 'h1',
      secret: 'whsec_new',
      previous: 'whsec_old',
      previousValidUntil: 5,
    });
  });

  it("moves none of the store's external-change readings; another process's user does", async () => {
    const { sqlite, store, file } = open();
    const stamp = sqlite.credentialStamp();
    let changes = 0;
    cleanups.push(sqlite.watchExternalChanges(() => changes++, 20));
    const d = record('h1', Date.now());
    await insert(store, [d]);
    await store.write({
      ...emptyBatch(),
      updates: [{ ...d, status: 'succeeded', attempts: 1, nextAttempt: null }],
    });
    await store.putSecret({ hookId: 'h1', secret: 's', previous: null, previousValidUntil: null });
    // The daemon's own changes on its connection are its own too.
    await sqlite.addUser({ name: 'bob', created: new Date().toISOString() });
    const own = sqlite.credentialStamp();
    assert.equal(own, stamp + 1, 'its own user is a change it made');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(changes, 0, 'no external change seen');
    assert.equal(sqlite.credentialStamp(), own);

    const other = new Database(file);
    cleanups.push(() => {
      other.close();
    });
    other.prepare("INSERT INTO users (name, created) VALUES ('carol', '2026-12-03')").run();
    await until('the change is seen', () => changes === 1);
    assert.equal(sqlite.credentialStamp(), own + 1, "another connection's change moves the stamp");
  });

  it("answers a write with the store's own error, by name and code", async () => {
    const { store } = open();
    const d = record('h1', Date.now());
    await insert(store, [d]);
    await assert.rejects(insert(store, [d]), (err: Error & { code?: string }) => {
      assert.equal(err.name, 'SqliteError');
      assert.match(err.code ?? '', /^SQLITE_CONSTRAINT/);
      assert.equal(isStoreFault(err), false, 'a bug, not a fault of the surroundings');
      return true;
    });
  });

  it('a thread that dies fails its unanswered writes as store faults; the next write starts another', async () => {
    const { store } = open();
    await insert(store, [record('h1', Date.now())]);
    // Handed over while the thread is ending: it is never answered.
    const ended = store.terminateThread();
    const a = record('h1', Date.now() + 1);
    await assert.rejects(insert(store, [a]), (err: Error) => {
      assert.ok(isStoreFault(err), String(err));
      assert.match(err.message, /SQLite writer thread stopped/);
      return true;
    });
    await ended;
    assert.equal(await store.getDelivery(a.id), undefined, 'not written');
    const b = record('h1', Date.now() + 2);
    await insert(store, [b]);
    assert.equal((await store.getDelivery(b.id))?.id, b.id);
  });

  it('keeps the WAL from growing under batches that never pause: its checkpoints reach the end', async () => {
    const { store, file } = open(100);
    const written = await writeWithoutPause(store, 2000);
    // A checkpoint run beside the writes (a thread of its own) never caught their end: the WAL grew
    // by every batch, about 160,000 frames in these two seconds here.
    const probe = new Database(file);
    cleanups.push(() => {
      probe.close();
    });
    const [row] = probe.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
    assert.ok(
      row !== undefined && row.log < 20_000,
      `${row?.log} frames in the WAL after ${written} deliveries`,
    );
    assert.ok(written > 2000, `${written} deliveries written`);
  });
});
