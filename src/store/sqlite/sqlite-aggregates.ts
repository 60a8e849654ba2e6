import type Database from 'better-sqlite3';
import {
  bucketFromRow,
  type DeliveryAggregates,
  HOOK_BUCKET_MS,
  LATENCY_BINS,
  type LastDelivery,
  lastDeliveryFromRow,
  latencyBinSql,
  type OutcomeBucket,
  type OutcomeTotals,
  OWNER_BUCKET_MS,
  pendingFromRow,
} from '../delivery-aggregates.js';

const O = OWNER_BUCKET_MS;
const H = HOOK_BUCKET_MS;

/**
 * The console's rollups (schema version 3): per owner and 5-minute bucket, outcomes and attempts;
 * per owner, bucket and latency bin, attempt counts; per hook and hour, outcomes. Existing
 * deliveries are counted once when this migration runs. The row triggers it creates are dropped
 * by a later migration: the writer counts a batch's changes and adds them inside the same
 * transaction (sqlite-rollups.ts), so the rollups never disagree with the log.
 */
export const AGGREGATES_MIGRATION = `
  CREATE TABLE stats_owner (
    owner TEXT NOT NULL, bucket INTEGER NOT NULL,
    succeeded INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0, attempts_ok INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, bucket)
  ) WITHOUT ROWID;
  CREATE TABLE stats_latency (
    owner TEXT NOT NULL, bucket INTEGER NOT NULL, bin INTEGER NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (owner, bucket, bin)
  ) WITHOUT ROWID;
  CREATE TABLE stats_hook (
    hook_id TEXT NOT NULL, bucket INTEGER NOT NULL,
    succeeded INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (hook_id, bucket)
  ) WITHOUT ROWID;
  CREATE INDEX deliveries_pending ON deliveries (owner, created) WHERE status = 'pending';

  INSERT INTO stats_owner (owner, bucket, succeeded, failed)
    SELECT owner, created - created % ${O}, sum(status = 'succeeded'), sum(status = 'failed')
    FROM deliveries GROUP BY 1, 2;
  INSERT INTO stats_owner (owner, bucket, attempts, attempts_ok)
    SELECT d.owner, a.time - a.time % ${O}, count(*), sum(coalesce(a.status BETWEEN 200 AND 299, 0))
    FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE true GROUP BY 1, 2
    ON CONFLICT (owner, bucket) DO UPDATE SET attempts = excluded.attempts, attempts_ok = excluded.attempts_ok;
  INSERT INTO stats_latency (owner, bucket, bin, n)
    SELECT d.owner, a.time - a.time % ${O}, ${latencyBinSql('a.latency_ms')}, count(*)
    FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id GROUP BY 1, 2, 3;
  INSERT INTO stats_hook (hook_id, bucket, succeeded, failed)
    SELECT hook_id, created - created % ${H}, sum(status = 'succeeded'), sum(status = 'failed')
    FROM deliveries GROUP BY 1, 2;

  CREATE TRIGGER stats_attempt AFTER INSERT ON delivery_attempts BEGIN
    INSERT INTO stats_owner (owner, bucket, attempts, attempts_ok)
      SELECT owner, NEW.time - NEW.time % ${O}, 1, coalesce(NEW.status BETWEEN 200 AND 299, 0)
      FROM deliveries WHERE id = NEW.delivery_id
      ON CONFLICT (owner, bucket) DO UPDATE SET attempts = attempts + 1, attempts_ok = attempts_ok + excluded.attempts_ok;
    INSERT INTO stats_latency (owner, bucket, bin, n)
      SELECT owner, NEW.time - NEW.time % ${O}, ${latencyBinSql('NEW.latency_ms')}, 1
      FROM deliveries WHERE id = NEW.delivery_id
      ON CONFLICT (owner, bucket, bin) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER stats_outcome_insert AFTER INSERT ON deliveries WHEN NEW.status != 'pending' BEGIN
    INSERT INTO stats_owner (owner, bucket, succeeded, failed)
      VALUES (NEW.owner, NEW.created - NEW.created % ${O}, NEW.status = 'succeeded', NEW.status = 'failed')
      ON CONFLICT (owner, bucket) DO UPDATE SET succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed;
    INSERT INTO stats_hook (hook_id, bucket, succeeded, failed)
      VALUES (NEW.hook_id, NEW.created - NEW.created % ${H}, NEW.status = 'succeeded', NEW.status = 'failed')
      ON CONFLICT (hook_id, bucket) DO UPDATE SET succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed;
  END;
  CREATE TRIGGER stats_outcome_update AFTER UPDATE OF status ON deliveries WHEN OLD.status != NEW.status BEGIN
    INSERT INTO stats_owner (owner, bucket, succeeded, failed)
      VALUES (NEW.owner, NEW.created - NEW.created % ${O},
        (NEW.status = 'succeeded') - (OLD.status = 'succeeded'), (NEW.status = 'failed') - (OLD.status = 'failed'))
      ON CONFLICT (owner, bucket) DO UPDATE SET succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed;
    INSERT INTO stats_hook (hook_id, bucket, succeeded, failed)
      VALUES (NEW.hook_id, NEW.created - NEW.created % ${H},
        (NEW.status = 'succeeded') - (OLD.status = 'succeeded'), (NEW.status = 'failed') - (OLD.status = 'failed'))
      ON CONFLICT (hook_id, bucket) DO UPDATE SET succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed;
  END;
  CREATE TRIGGER stats_hook_gone AFTER DELETE ON hooks BEGIN
    DELETE FROM stats_hook WHERE hook_id = OLD.id;
  END;
`;

type Row = Record<string, number | string | null>;

/** The console's aggregates from the SQLite rollups. */
export class SqliteAggregates implements DeliveryAggregates {
  private readonly s;

  constructor(db: Database.Database) {
    this.s = {
      totals: db.prepare(
        'SELECT coalesce(sum(succeeded), 0) AS s, coalesce(sum(failed), 0) AS f, coalesce(sum(attempts), 0) AS a, ' +
          'coalesce(sum(attempts_ok), 0) AS ok FROM stats_owner WHERE owner = ? AND bucket >= ?',
      ),
      latency: db.prepare(
        'SELECT bin, sum(n) AS n FROM stats_latency WHERE owner = ? AND bucket >= ? GROUP BY bin',
      ),
      series: db.prepare(
        'SELECT bucket, succeeded, failed FROM stats_owner WHERE owner = ? AND bucket >= ? ORDER BY bucket',
      ),
      pending: db.prepare(
        "SELECT count(*) AS n, min(created) AS oldest FROM deliveries WHERE owner = ? AND status = 'pending'",
      ),
      hook: db.prepare('SELECT bucket, succeeded, failed FROM stats_hook WHERE hook_id = ? AND bucket >= ?'),
      last: db.prepare(
        'SELECT status, last_status, created FROM deliveries WHERE hook_id = ? ORDER BY id DESC LIMIT 1',
      ),
    };
  }

  async totals(owner: string, since: number): Promise<OutcomeTotals> {
    const r = this.s.totals.get(owner, since) as Row;
    return { succeeded: Number(r.s), failed: Number(r.f), attempts: Number(r.a), attemptsOk: Number(r.ok) };
  }

  async latency(owner: string, since: number): Promise<number[]> {
    const h = new Array<number>(LATENCY_BINS).fill(0);
    for (const r of this.s.latency.all(owner, since) as Row[]) h[r.bin as number] = Number(r.n);
    return h;
  }

  async series(owner: string, since: number): Promise<OutcomeBucket[]> {
    return (this.s.series.all(owner, since) as Row[]).map(bucketFromRow);
  }

  async pending(owner: string): Promise<{ count: number; oldest: number | null }> {
    const r = this.s.pending.get(owner) as Row;
    return pendingFromRow(r);
  }

  async hookSeries(hookIds: readonly string[], since: number): Promise<Map<string, OutcomeBucket[]>> {
    const out = new Map<string, OutcomeBucket[]>();
    for (const id of hookIds) out.set(id, (this.s.hook.all(id, since) as Row[]).map(bucketFromRow));
    return out;
  }

  async lastDeliveries(hookIds: readonly string[]): Promise<Map<string, LastDelivery>> {
    const out = new Map<string, LastDelivery>();
    for (const id of hookIds) {
      const r = this.s.last.get(id) as Row | undefined;
      if (r) out.set(id, lastDeliveryFromRow(r));
    }
    return out;
  }
}
