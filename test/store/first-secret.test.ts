/**
 * A new hook and its first signing secret are written in one transaction: a hook the store
 * refuses (here its Name, taken by another of the owner's hooks) leaves no secret behind, in every
 * backend and in both kinds of hook (durable, and the `Persist: false` ones).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DeliveryStore, HookSecretRecord, HookStore } from '../../src/store/index.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { PgDatabase } from '../../src/store/postgres/pg-database.js';
import { PostgresDeliveryStore } from '../../src/store/postgres/postgres-delivery-store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { storedHook } from './store-contract.js';

const secretOf = (hookId: string): HookSecretRecord => ({
  hookId,
  secret: `whsec_first_${hookId}`,
  previous: null,
  previousValidUntil: null,
});

function firstSecretContract(
  name: string,
  open: () => Promise<{ hooks: HookStore; secrets: DeliveryStore; close(): Promise<void> }>,
  persist = true,
): void {
  describe(`a new hook's first secret: ${name}`, () => {
    let parts: Awaited<ReturnType<typeof open>>;
    before(async () => {
      parts = await open();
    });
    after(async () => {
      await parts.close();
    });

    it('is stored with the hook', async () => {
      const hook = storedHook('alice', { Persist: persist });
      await parts.hooks.putHook(hook, secretOf(hook.Id));
      assert.equal((await parts.hooks.getHook(hook.Id))?.Id, hook.Id);
      assert.deepEqual(await parts.secrets.getSecret(hook.Id), secretOf(hook.Id));
    });

    it('is not stored when the hook is refused', async () => {
      const first = storedHook('alice', { Name: 'taken', Persist: persist });
      await parts.hooks.putHook(first, secretOf(first.Id));
      const second = storedHook('alice', { Name: 'taken', Persist: persist });
      await assert.rejects(
        parts.hooks.putHook(second, secretOf(second.Id)),
        (e: Error & { code?: string }) => {
          assert.equal(e.code, 'CONFLICT');
          return true;
        },
      );
      assert.equal(await parts.hooks.getHook(second.Id), undefined);
      assert.equal(await parts.secrets.getSecret(second.Id), undefined, 'no secret left behind');
      assert.deepEqual(await parts.secrets.getSecret(first.Id), secretOf(first.Id));
    });
  });
}

firstSecretContract(
  'memory',
  async () => {
    const secrets = new MemoryDeliveryStore();
    return { hooks: new MemoryStore(secrets), secrets, close: async () => undefined };
  },
  false,
);

firstSecretContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-first-secret-'));
  const store = new SqliteStore(join(dir, 'hookd.db'));
  return {
    hooks: store,
    secrets: new SqliteDeliveryStore(store.db),
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

const skip = await pgSkipReason();
if (skip) {
  describe("a new hook's first secret: postgres", { skip }, () => undefined);
} else {
  let tdb: TestDatabase;
  before(async () => {
    tdb = await createTestDatabase();
  });
  after(async () => {
    await tdb?.drop();
  });
  for (const ephemeral of [false, true]) {
    firstSecretContract(
      `postgres${ephemeral ? ' (Persist: false)' : ''}`,
      async () => {
        const db = await PgDatabase.open(tdb.url);
        const store = new PostgresStore(db);
        return {
          hooks: ephemeral ? store.ephemeralHooks : store,
          secrets: new PostgresDeliveryStore(db, { ephemeral }),
          close: () => store.close(),
        };
      },
      !ephemeral,
    );
  }
}
