import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { redactDatabaseUrl } from '../../src/config/load-config.js';
import { skipReason } from './require.js';
import { startTcpRelay, type TcpRelay } from './tcp-relay.js';

/**
 * PostgreSQL for tests: a server URL to create throw-away databases on (`HOOKD_TEST_DATABASE_URL`,
 * default the local server with trust auth), and whether it is reachable at all. Tests that need
 * it are skipped, saying so, when it is not; with HOOKD_REQUIRE_ALL=1 or HOOKD_REQUIRE_POSTGRES=1
 * (CI) they fail instead (test/helpers/require.ts).
 */
export const PG_ADMIN_URL =
  process.env.HOOKD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let reachable: Promise<string | undefined> | undefined;

/** Undefined when PostgreSQL answers; otherwise the reason to skip, naming the server. */
export function pgSkipReason(): Promise<string | undefined> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return undefined;
    } catch (err) {
      const why = (err as Error).message || (err as { code?: string }).code || String(err);
      const reason = `PostgreSQL not reachable at ${redactDatabaseUrl(PG_ADMIN_URL)} (${why}); set HOOKD_TEST_DATABASE_URL`;
      // CI sets HOOKD_REQUIRE_ALL=1: there the PostgreSQL tests must never silently skip.
      return skipReason(reason, 'postgres');
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

export interface TestDatabase {
  name: string;
  url: string;
  /** Runs one statement as the admin user, in this database. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
  /** Empties every hookd table (a fresh store without a new database). */
  truncate(): Promise<void>;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>, url = PG_ADMIN_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh, empty database `hookd_test_<random>`; `drop()` removes it (closing its connections). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `hookd_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  let pool: pg.Pool | undefined;
  const db = (): pg.Pool => {
    if (pool === undefined) {
      pool = new pg.Pool({ connectionString: url, max: 2 });
      // An idle connection cut by the server (a DROP ... WITH (FORCE) of this database, seen once in
      // CI while the suite ran) is emitted on the pool: without a listener it would fail whichever
      // test is running. A query on a broken connection still fails, and says so, where it is made.
      pool.on('error', () => undefined);
    }
    return pool;
  };
  return {
    name,
    url,
    query: (text, values) => db().query(text, values),
    async truncate() {
      const { rows } = await db().query<{ t: string }>(
        "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'",
      );
      if (rows.length > 0)
        await db().query(`TRUNCATE ${rows.map((r) => r.t).join(', ')} RESTART IDENTITY CASCADE`);
    },
    async drop() {
      await pool?.end().catch(() => undefined);
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/**
 * A fresh test database behind a TCP relay the test owns: a daemon given `viaRelay` loses its
 * store when the test cuts the relay (the shared PostgreSQL server itself is never stopped).
 */
export interface RelayedTestDatabase {
  db: TestDatabase;
  relay: TcpRelay;
  /** The database's URL through the relay. */
  viaRelay: string;
  /** Closes the relay and drops the database: after the daemons on it are closed. */
  close(): Promise<void>;
}

export async function createRelayedTestDatabase(): Promise<RelayedTestDatabase> {
  const db = await createTestDatabase();
  const u = new URL(db.url);
  let relay: TcpRelay;
  try {
    relay = await startTcpRelay(u.hostname, Number(u.port || 5432));
  } catch (e) {
    await db.drop();
    throw e;
  }
  u.hostname = relay.host;
  u.port = String(relay.port);
  return {
    db,
    relay,
    viaRelay: u.toString(),
    async close() {
      await relay.close();
      await db.drop();
    },
  };
}
