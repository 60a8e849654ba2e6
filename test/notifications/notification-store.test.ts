import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type NotificationEndpoint, newEndpointId } from '../../src/notifications/notification-endpoint.js';
import {
  MemoryNotificationStore,
  type NotificationStore,
  PgNotificationStore,
  SqliteNotificationStore,
} from '../../src/notifications/notification-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/hookd.js';
import { pgSkipReason } from '../helpers/pg-test-db.js';
import { onPostgres } from '../helpers/stores.js';

const skip = await pgSkipReason();

function endpoint(owner: string, url: string): NotificationEndpoint {
  return {
    Id: newEndpointId(),
    Owner: owner,
    Url: url,
    Events: ['hook.disabled'],
    Description: 'ünïcode ✓',
    Created: '2026-11-23T15:00:00.000+00:00',
  };
}

/** The same behaviour on every backend: put (insert and replace), list all by Id, delete. */
function contract(
  name: string,
  open: () => Promise<{ store: NotificationStore; close(): Promise<void> }>,
): void {
  it(`${name}: keeps endpoints exactly, lists them by Id, replaces and deletes`, async () => {
    const { store, close } = await open();
    try {
      assert.deepEqual(await store.allEndpoints(), []);
      const a = endpoint('alice', 'https://a.example/n');
      await new Promise((r) => setTimeout(r, 2));
      const b = endpoint('bob', 'https://b.example/n');
      await store.putEndpoint(b);
      await store.putEndpoint(a);
      assert.deepEqual(await store.allEndpoints(), [a, b]);
      const a2 = { ...a, Events: ['*'] };
      await store.putEndpoint(a2);
      assert.deepEqual(await store.allEndpoints(), [a2, b]);
      assert.equal(await store.deleteEndpoint(a.Id), true);
      assert.equal(await store.deleteEndpoint(a.Id), false);
      assert.deepEqual(await store.allEndpoints(), [b]);
    } finally {
      await close();
    }
  });
}

describe('notification endpoint stores', () => {
  contract('memory', async () => ({ store: new MemoryNotificationStore(), close: async () => undefined }));

  const dir = tempDir();
  after(() => rmSync(dir, { recursive: true, force: true }));
  contract('SQLite (and it survives reopening the file)', async () => {
    const file = join(dir, 'hookd.db');
    const s = new SqliteStore(file);
    return {
      store: new SqliteNotificationStore(s.db),
      close: async () => {
        const before = await new SqliteNotificationStore(s.db).allEndpoints();
        await s.close();
        const again = new SqliteStore(file);
        assert.deepEqual(await new SqliteNotificationStore(again.db).allEndpoints(), before);
        await again.close();
      },
    };
  });

  if (skip) it('PostgreSQL', { skip }, () => undefined);
  else contract('PostgreSQL', () => onPostgres((db) => new PgNotificationStore(db.pool)));
});
