import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isoTimestamp } from '../../src/hook/hook.js';
import { PLAIN_SECRETS } from '../../src/store/secret-codec.js';
import { Checkpointer } from '../../src/store/sqlite/checkpointer.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { checkpointWal } from '../../src/store/sqlite/wal-checkpoint.js';
import { tempDir } from '../helpers/hookd.js';
import { until } from '../helpers/until.js';
import { writeWithoutPause } from './delivery-store-contract.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Writes `n` users with a 10 KiB name-sized payload each in its own commit (via the created column). */
async function burst(store: SqliteStore, prefix: string, n: number): Promise<void> {
  const pad = 'x'.repeat(10_000);
  for (let i = 0; i < n; i++)
    await store.addUser({ name: `${prefix}${i}`, created: `${isoTimestamp()}${pad}` });
}

const walSize = (file: string) => statSync(`${file}-wal`).size;

describe('SQLite background checkpoints', () => {
  it('keep the WAL from growing while commits never checkpoint themselves', async () => {
    const run = async (background: boolean) => {
      const dir = tempDir();
      dirs.push(dir);
      const file = join(dir, 'hookd.db');
      const store = new SqliteStore(file, { checkpoint: background ? 'thread' : 'commit' });
      // Without the worker, turn auto-checkpointing off too, so the two runs differ only in the worker.
      if (!background) store.db.pragma('wal_autocheckpoint = 0');
      await burst(store, 'a', 150);
      let n = 0;
      if (background) {
        // Once the worker has checkpointed the first burst, the next commit starts the WAL over:
        // a write no longer grows the file. (Without the worker nothing can checkpoint: no wait.)
        await until(
          'a checkpoint by the worker',
          async () => {
            const before = walSize(file);
            await burst(store, `w${n++}-`, 1);
            return walSize(file) === before;
          },
          { ms: 30_000, every: 100 },
        );
      }
      await burst(store, 'b', 150);
      const size = walSize(file);
      assert.equal((await store.listUsers()).length, 300 + n);
      await store.close();
      return size;
    };
    const without = await run(false);
    const withWorker = await run(true);
    // The worker checkpointed the first burst, so the second reused the WAL from its start.
    assert.ok(withWorker < without * 0.75, `WAL ${withWorker} bytes with the worker vs ${without} without`);
  });
});

describe('SQLite checkpoints from a thread of their own', () => {
  it('have the writing connection start the WAL over once it is past its bound, though writes never pause', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = join(dir, 'hookd.db');
    const store = new SqliteStore(file, { checkpoint: 'commit' });
    store.db.pragma('wal_autocheckpoint = 0');
    // What SqliteStore does when told: checkpoint on its own connection, between two writes.
    let told = 0;
    const checkpointer = new Checkpointer(
      file,
      () => {
        told++;
        checkpointWal(store.db);
      },
      50,
      1000,
    );
    const deliveries = new SqliteDeliveryStore(store.db, PLAIN_SECRETS);
    try {
      // A turn of the loop between batches, as the daemon's group commit has.
      const written = await writeWithoutPause(deliveries, 2000, true);
      await checkpointer.stop();
      const [row] = store.db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
      // The thread's checkpoints alone left every frame of the two seconds in the WAL (about 50,000).
      assert.ok(told > 0, 'the writing connection was told');
      assert.ok(
        row !== undefined && row.log < 10_000,
        `${row?.log} frames in the WAL after ${written} deliveries`,
      );
      assert.ok(written > 2000, `${written} deliveries written`);
    } finally {
      await checkpointer.stop();
      await store.close();
    }
  });
});
