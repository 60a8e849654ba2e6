import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ListenerAttemptStore,
  MemoryListenerAttempts,
  PgListenerAttempts,
  SqliteListenerAttempts,
} from '../../src/listen/index.js';
import { pgSkipReason } from '../helpers/pg-test-db.js';
import { onPostgres, onSqlite } from '../helpers/stores.js';

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
contract('SQLite', () => onSqlite((db) => new SqliteListenerAttempts(db)));

const skip = await pgSkipReason();
if (skip) describe('listener attempts: PostgreSQL', { skip }, () => undefined);
else contract('PostgreSQL', () => onPostgres((db) => new PgListenerAttempts(db.pool)));
