import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isoTimestamp } from '../../src/hook/hook.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/hookd.js';
import { until } from '../helpers/until.js';

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
      const store = new SqliteStore(file, { backgroundCheckpoint: background });
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
