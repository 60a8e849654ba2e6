import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { redactDatabaseUrl } from '../../config/index.js';
import { MIGRATIONS } from './migrations.js';
import { DatabaseUnavailableError, LOCK_CLASS, LOCKS, SchemaTooNewError } from './pg-common.js';
import { PgListener } from './pg-listener.js';

export { DatabaseUnavailableError, LOCK_CLASS, LOCKS, SchemaTooNewError } from './pg-common.js';

export interface PgDatabaseOptions {
  /** Pool size (default 10). */
  max?: number;
  log?: Logger;
  /** Shown in `pg_stat_activity` (default `hookd`). */
  applicationName?: string;
}

// Epoch-millisecond columns are BIGINT, which pg returns as strings by default; they fit a double.
const types = new pg.TypeOverrides();
types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

/**
 * One PostgreSQL database shared by hookd's stores and cluster pieces: the connection pool, the
 * schema migrations, start-up locking, and one dedicated connection for LISTEN.
 */
export class PgDatabase {
  readonly pool: pg.Pool;
  /** The URL without its password, for logs. */
  readonly redacted: string;
  /** Random per process: tells this process's notifications from the other instances'. */
  readonly nodeId = `n_${randomBytes(8).toString('hex')}`;
  private listenerInstance: PgListener | undefined;
  private closed = false;

  private constructor(
    private readonly url: string,
    private readonly opts: PgDatabaseOptions,
  ) {
    this.redacted = redactDatabaseUrl(url);
    this.pool = new pg.Pool({
      connectionString: url,
      max: opts.max ?? 10,
      types,
      application_name: opts.applicationName ?? 'hookd',
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
    });
    // An idle connection that breaks (the database restarted) is reported here, not thrown.
    this.pool.on('error', (err) => {
      this.opts.log?.warn({ err: err.message, database: this.redacted }, 'idle database connection lost');
    });
  }

  /** Connects and brings the schema up to date. Rejects with a message that names no password. */
  static async open(url: string, opts: PgDatabaseOptions = {}): Promise<PgDatabase> {
    const db = new PgDatabase(url, opts);
    try {
      const applied = await db.migrate();
      if (applied.length > 0)
        opts.log?.info({ database: db.redacted, versions: applied }, 'database schema migrated');
    } catch (err) {
      await db.close();
      if (err instanceof SchemaTooNewError) throw err;
      throw new DatabaseUnavailableError(url, err);
    }
    return db;
  }

  /**
   * Applies the migrations this database lacks, under the start-up lock, each in a transaction.
   * Returns the versions applied (none when another instance was first).
   */
  async migrate(): Promise<number[]> {
    return this.exclusively(async (client) => {
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, ' +
          'applied TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())',
      );
      const { rows } = await client.query<{ v: number }>(
        'SELECT coalesce(max(version), 0)::int AS v FROM schema_migrations',
      );
      const current = rows[0]!.v;
      const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
      if (current > latest) throw new SchemaTooNewError(current, latest);
      const applied: number[] = [];
      for (const m of MIGRATIONS) {
        if (m.version <= current) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
            m.version,
            m.name,
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
        applied.push(m.version);
      }
      return applied;
    });
  }

  /**
   * Runs `fn` while holding the start-up advisory lock, so that instances starting together take
   * turns (migrations, the admin bootstrap, the cluster's "am I the first?" check). The lock is a
   * session lock: if this process dies, the database releases it with the connection.
   */
  async exclusively<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1, $2)', [LOCK_CLASS, LOCKS.startup]);
    } catch (err) {
      client.release(err as Error);
      throw err;
    }
    try {
      return await fn(client);
    } finally {
      try {
        await client.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_CLASS, LOCKS.startup]);
        client.release();
      } catch (err) {
        // Closed rather than reused: closing the session releases the lock.
        client.release(err as Error);
      }
    }
  }

  /** Runs `fn` in a transaction on one pooled connection. */
  async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(err as Error);
      throw err;
    }
  }

  /** The connection that LISTENs (created on first use, started by its owner). */
  get listener(): PgListener {
    this.listenerInstance ??= new PgListener(this.url, {
      applicationName: `hookd-listen/${this.nodeId}`,
      ...(this.opts.log && { log: this.opts.log }),
      redacted: this.redacted,
    });
    return this.listenerInstance;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.listenerInstance?.stop();
    await this.pool.end();
  }
}
