import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClaimRequest, IdempotencyStore } from '../../src/idempotency/idempotency-store.js';
import { MemoryIdempotencyStore } from '../../src/idempotency/idempotency-store.js';
import { PostgresIdempotencyStore } from '../../src/idempotency/postgres-idempotency-store.js';
import { SqliteIdempotencyStore } from '../../src/idempotency/sqlite-idempotency-store.js';
import { pgSkipReason } from '../helpers/pg-test-db.js';
import { onPostgres, onSqlite } from '../helpers/stores.js';

// One contract for the three stores of Idempotency-Keys: what a claim finds, replay, mismatch,
// in-progress, expiry, stale claims, release, pruning, and per-user scope.

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
