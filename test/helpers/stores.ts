import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { PgDatabase } from '../../src/store/postgres/pg-database.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from './hookd.js';
import { createTestDatabase } from './pg-test-db.js';

/** A store under test and how to let go of everything behind it. */
export interface Opened<S> {
  store: S;
  close(): Promise<void>;
}

/** `make`'s store on a fresh SQLite file in a temp dir, removed on close. */
export async function onSqlite<S>(make: (db: Database.Database) => S): Promise<Opened<S>> {
  const dir = tempDir('hookd-store-');
  const s = new SqliteStore(join(dir, 'hookd.db'));
  return {
    store: make(s.db),
    close: async () => {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `make`'s store on a throwaway PostgreSQL database (migrated), dropped on close. */
export async function onPostgres<S>(make: (db: PgDatabase) => S): Promise<Opened<S>> {
  const tdb = await createTestDatabase();
  const db = await PgDatabase.open(tdb.url);
  return {
    store: make(db),
    close: async () => {
      await db.close();
      await tdb.drop();
    },
  };
}
