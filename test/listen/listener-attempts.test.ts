import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type ListenerAttemptStore,
  MemoryListenerAttempts,
  PgListenerAttempts,
  SqliteListenerAttempts,
} from '../../src/listen/index.js';
import { PgDatabase } from '../../src/store/postgres/pg-database.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../cluster/pg-test-db.js';
import { tempDir } from '../helpers/hookd.js';

const attempt = (deliveryId: string, status: number | null) => ({
  deliveryId,
  hookId: 'hk_1',
  listener: 'ls_a',
  time: 1_700_000_000_000,
  statusCode: status,
  latencyMs: 1.5,
  error: status === null ? 'ECONNREFUSED' : null,
  responseBody: status === null ? null : 'ok',
});

function contract(
  name: string,
  make: () => Promise<{ store: ListenerAttemptStore; close(): Promise<void> }>,
) {
  describe(`listener attempts: ${name}`, () => {
    it("records attempts numbered per delivery, in order, and lists only that delivery's", async () => {
      const { store, close } = await make();
      try {
        await store.record(attempt('msg_1', 200));
        await store.record(attempt('msg_1', null));
        await store.record(attempt('msg_2', 202));
        const one = await store.list('msg_1');
        assert.deepEqual(
          one.map((a) => [a.seq, a.statusCode, a.error]),
          [
            [1, 200, null],
            [2, null, 'ECONNREFUSED'],
          ],
        );
        assert.equal(one[0]!.time, 1_700_000_000_000);
        assert.equal(one[0]!.responseBody, 'ok');
        assert.deepEqual(
          (await store.list('msg_2')).map((a) => a.seq),
          [1],
        );
        assert.deepEqual(await store.list('msg_3'), []);
      } finally {
        await close();
      }
    });
  });
}

contract('memory', async () => ({ store: new MemoryListenerAttempts(), close: async () => undefined }));
contract('SQLite', async () => {
  const dir = tempDir();
  const s = new SqliteStore(join(dir, 'hookd.db'));
  return { store: new SqliteListenerAttempts(s.db), close: () => s.close() };
});

const skip = await pgSkipReason();
if (skip) describe('listener attempts: PostgreSQL', { skip }, () => undefined);
else {
  let tdb: TestDatabase;
  before(async () => {
    tdb = await createTestDatabase();
  });
  after(async () => {
    await tdb?.drop();
  });
  contract('PostgreSQL', async () => {
    const store = new PostgresStore(await PgDatabase.open(tdb.url));
    await tdb.truncate();
    return { store: new PgListenerAttempts(store.db.pool), close: () => store.close() };
  });
}
