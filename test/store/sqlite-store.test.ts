import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { storeContract, storedHook } from './store-contract.js';

const root = mkdtempSync(join(tmpdir(), 'hookd-sqlite-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshFile = () => join(root, `store-${++n}`, 'hookd.db');

storeContract('SqliteStore', () => new SqliteStore(freshFile()));

describe('SqliteStore on disk', () => {
  const sample = () => storedHook();

  it('keeps users, tokens and hooks across close and reopen', async () => {
    const file = freshFile();
    const h = sample();
    const first = new SqliteStore(file);
    await first.addUser({ name: 'alice', created: 'c' });
    await first.addToken({ id: 'aaaaaaaaaaaa', user: 'alice', hash: 'ff', label: '', created: 'c' });
    await first.putHook(h);
    await first.close();

    const again = new SqliteStore(file);
    try {
      assert.deepEqual(await again.getHook(h.Id), h);
      assert.deepEqual(await again.getUser('alice'), { name: 'alice', created: 'c' });
      assert.equal((await again.getToken('aaaaaaaaaaaa'))?.user, 'alice');
    } finally {
      await again.close();
    }
  });

  it('creates its directory, and the database file is readable by its owner only', async () => {
    const file = freshFile();
    const s = new SqliteStore(file);
    try {
      assert.equal(statSync(file).mode & 0o777, 0o600);
    } finally {
      await s.close();
    }
  });

  it('records the schema version and does not migrate twice on reopen', async () => {
    const file = freshFile();
    await new SqliteStore(file).close();
    const s = new SqliteStore(file);
    try {
      assert.equal(s.db.pragma('user_version', { simple: true }), MIGRATIONS.length);
      assert.equal(s.db.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      await s.close();
    }
  });

  it('close is idempotent', async () => {
    const s = new SqliteStore(freshFile());
    await s.close();
    await s.close();
  });
});
