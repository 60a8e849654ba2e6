import assert from 'node:assert/strict';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { ClaimRequest, IdempotencyStore } from '../../src/idempotency/idempotency-store.js';
import { MemoryIdempotencyStore } from '../../src/idempotency/idempotency-store.js';
import { PostgresIdempotencyStore } from '../../src/idempotency/postgres-idempotency-store.js';
import { SqliteIdempotencyStore } from '../../src/idempotency/sqlite-idempotency-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/hookd.js';
import { pgSkipReason } from '../helpers/pg-test-db.js';
import { onPostgres, onSqlite } from '../helpers/stores.js';

// One contract for the three stores of Idempotency-Keys: what a claim finds, replay, mismatch,
// in-progress, expiry, stale claims, release, pruning, and per-user scope; and the SQLite store's
// claims beside a second connection that commits.

const HOUR = 3600_000;
const answer = {
  status: 202,
  contentType: 'application/json; charset=utf-8',
  body: '{"accepted":1,"fired":1}',
};

function req(over: Partial<ClaimRequest> = {}): ClaimRequest {
  return {
    owner: 'alice',
    key: 'k1',
    fingerprint: 'f1',
    now: 1_000_000,
    ttlMs: HOUR,
    staleMs: 60_000,
    ...over,
  };
}

function contract(name: string, open: () => Promise<{ store: IdempotencyStore; close(): Promise<void> }>) {
  describe(`idempotency store: ${name}`, () => {
    let store: IdempotencyStore;
    let close: () => Promise<void>;
    before(async () => {
      ({ store, close } = await open());
    });
    after(async () => close());

    it('claims a new key, then replays its answer for the same request', async () => {
      assert.deepEqual(await store.claim(req()), { kind: 'claimed' });
      assert.deepEqual(await store.claim(req({ now: 1_000_010 })), { kind: 'in-progress' });
      await store.complete('alice', 'k1', 'f1', answer);
      assert.deepEqual(await store.claim(req({ now: 1_000_020 })), { kind: 'replay', answer });
    });

    it('says mismatch for the same key with another request, answered or not', async () => {
      assert.deepEqual(await store.claim(req({ fingerprint: 'other', now: 1_000_030 })), {
        kind: 'mismatch',
      });
      assert.deepEqual(await store.claim(req({ key: 'k2' })), { kind: 'claimed' });
      assert.deepEqual(await store.claim(req({ key: 'k2', fingerprint: 'x' })), { kind: 'mismatch' });
    });

    it('scopes keys per user', async () => {
      assert.deepEqual(await store.claim(req({ owner: 'bob', fingerprint: 'bobs' })), { kind: 'claimed' });
    });

    it('lets a key go once it expired, and takes over a stale claim', async () => {
      const later = 1_000_000 + HOUR;
      assert.deepEqual(await store.claim(req({ fingerprint: 'new', now: later })), { kind: 'claimed' });
      // k2 was claimed and never answered: after staleMs another request may take it.
      assert.deepEqual(await store.claim(req({ key: 'k2', fingerprint: 'y', now: 1_000_000 + 60_001 })), {
        kind: 'claimed',
      });
    });

    it('release gives an unanswered claim up, but never an answered one', async () => {
      assert.deepEqual(await store.claim(req({ key: 'r' })), { kind: 'claimed' });
      await store.release('alice', 'r', 'f1');
      assert.deepEqual(await store.claim(req({ key: 'r', fingerprint: 'f2' })), { kind: 'claimed' });
      await store.complete('alice', 'r', 'f2', answer);
      await store.release('alice', 'r', 'f2');
      assert.equal((await store.claim(req({ key: 'r', fingerprint: 'f2' }))).kind, 'replay');
    });

    it('prunes expired keys only', async () => {
      assert.deepEqual(await store.claim(req({ key: 'young', now: 5 * HOUR })), { kind: 'claimed' });
      let removed = 0;
      for (;;) {
        const n = await store.prune(5 * HOUR, 2);
        removed += n;
        if (n < 2) break;
      }
      assert.ok(removed >= 3, `removed ${removed}`);
      assert.deepEqual(await store.claim(req({ key: 'young', now: 5 * HOUR + 1 })), { kind: 'in-progress' });
    });

    it('of many claims of one new key at once, exactly one wins', async () => {
      const claims = await Promise.all(
        Array.from({ length: 12 }, () => store.claim(req({ key: 'race', now: 9 * HOUR }))),
      );
      assert.equal(claims.filter((c) => c.kind === 'claimed').length, 1);
      assert.equal(claims.filter((c) => c.kind === 'in-progress').length, 11);
    });
  });
}

contract('memory', async () => ({ store: new MemoryIdempotencyStore(), close: async () => undefined }));

contract('sqlite', () => onSqlite((db) => new SqliteIdempotencyStore(db)));

describe('idempotency store: postgres', async () => {
  const skip = await pgSkipReason();
  if (skip) {
    it('needs PostgreSQL', { skip }, () => undefined);
    return;
  }
  contract('postgres (shared database)', () => onPostgres((db) => new PostgresIdempotencyStore(db)));
});

describe('idempotency store: sqlite, beside another connection that writes', () => {
  it('claims every key while a second connection commits back to back (no SQLITE_BUSY_SNAPSHOT)', async () => {
    const dir = tempDir('hookd-idem-race-');
    const file = join(dir, 'hookd.db');
    const sqlite = new SqliteStore(file);
    const store = new SqliteIdempotencyStore(sqlite.db);
    sqlite.db.exec('CREATE TABLE scratch (n INTEGER)');
    // The delivery writer thread is such a second connection on the daemon's file.
    const writer = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const db = new (require(workerData.module))(workerData.file);
       db.pragma('busy_timeout = 5000');
       const insert = db.prepare('INSERT INTO scratch (n) VALUES (?)');
       let stop = false;
       parentPort.on('message', () => { stop = true; });
       const loop = () => {
         for (let i = 0; i < 50 && !stop; i++) insert.run(i);
         if (stop) { db.close(); parentPort.close(); } else setImmediate(loop);
       };
       parentPort.postMessage('writing');
       loop();`,
      { eval: true, workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), file } },
    );
    try {
      await once(writer, 'message');
      const failures: string[] = [];
      let claimed = 0;
      const until = Date.now() + 1500;
      for (let i = 0; Date.now() < until; i++) {
        try {
          if ((await store.claim(req({ key: `race-${i}` }))).kind === 'claimed') claimed++;
        } catch (err) {
          failures.push((err as { code?: string }).code ?? String(err));
        }
        if (i % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      const written = sqlite.db.prepare('SELECT count(*) AS n FROM scratch').get() as { n: number };
      assert.ok(written.n > 1000, `the other connection wrote ${written.n} rows`);
      assert.deepEqual(
        failures.slice(0, 5),
        [],
        `${failures.length} of ${claimed + failures.length} claims failed`,
      );
      assert.ok(claimed > 100, `claimed ${claimed}`);
    } finally {
      writer.postMessage('stop');
      await once(writer, 'exit');
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
