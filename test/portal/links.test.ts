import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IdempotencyStore } from '../../src/idempotency/index.js';
import { MemoryIdempotencyStore, SqliteIdempotencyStore } from '../../src/idempotency/index.js';
import { PostgresIdempotencyStore } from '../../src/idempotency/postgres-idempotency-store.js';
import { type LinkGrant, PortalLinks } from '../../src/portal/links.js';
import { pgSkipReason } from '../helpers/pg-test-db.js';
import { onPostgres, onSqlite } from '../helpers/stores.js';

// Portal links on each store the daemon can run on: single use, expiry, and (PostgreSQL) two
// instances of a cluster opening one link at once, of which exactly one wins.

const T0 = 1_800_000_000_000;

function grant(over: Partial<LinkGrant> = {}): LinkGrant {
  return {
    user: 'alice',
    scopes: ['live'],
    readOnly: true,
    brand: { Title: 'Acme' },
    expiresAt: T0 + 60_000,
    ...over,
  };
}

function contract(name: string, open: () => Promise<{ store: IdempotencyStore; close(): Promise<void> }>) {
  describe(`portal links: ${name}`, () => {
    it('opens once with its grant; then says used; an unknown or malformed token is expired', async () => {
      const { store, close } = await open();
      try {
        let now = T0;
        const links = new PortalLinks(store, () => now);
        const token = await links.create(grant());
        assert.match(token, /^[A-Za-z0-9_-]{43}$/);
        now += 1000;
        assert.deepEqual(await links.open(token), { ok: true, grant: grant() });
        assert.deepEqual(await links.open(token), { ok: false, why: 'used' });
        assert.deepEqual(await links.open('x'.repeat(43)), { ok: false, why: 'expired' });
        assert.deepEqual(await links.open('../../etc'), { ok: false, why: 'expired' });
        // An unknown token leaves nothing behind that would make it valid later.
        assert.deepEqual(await links.open('x'.repeat(43)), { ok: false, why: 'expired' });
      } finally {
        await close();
      }
    });

    it('refuses a link opened once it expired', async () => {
      const { store, close } = await open();
      try {
        let now = T0;
        const links = new PortalLinks(store, () => now);
        const token = await links.create(grant());
        now = T0 + 60_000;
        assert.deepEqual(await links.open(token), { ok: false, why: 'expired' });
        const other = await links.create(grant({ expiresAt: T0 + 120_000 }));
        assert.equal((await links.open(other)).ok, true);
      } finally {
        await close();
      }
    });
  });
}

contract('memory', async () => ({ store: new MemoryIdempotencyStore(), close: async () => undefined }));
contract('sqlite', () => onSqlite((db) => new SqliteIdempotencyStore(db)));

describe('portal links: postgres', async () => {
  const skip = await pgSkipReason();
  if (skip) {
    it('needs PostgreSQL', { skip }, () => undefined);
    return;
  }
  contract('postgres', () => onPostgres((db) => new PostgresIdempotencyStore(db)));

  it('two instances opening one link at once: exactly one signs in', async () => {
    const { store, close } = await onPostgres((db) => new PostgresIdempotencyStore(db));
    try {
      const a = new PortalLinks(store);
      const b = new PortalLinks(store);
      for (let round = 0; round < 5; round++) {
        const token = await a.create(grant({ expiresAt: Date.now() + 60_000 }));
        const results = await Promise.all([a.open(token), b.open(token), a.open(token), b.open(token)]);
        assert.equal(results.filter((r) => r.ok).length, 1, `round ${round}: ${JSON.stringify(results)}`);
        assert.ok(results.filter((r) => !r.ok).every((r) => !r.ok && r.why === 'used'));
      }
    } finally {
      await close();
    }
  });
});
