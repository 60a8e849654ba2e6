import type pg from 'pg';
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
 * The console's rollups for one set of delivery tables (`''` or the UNLOGGED `eph_`): the same
 * three tables as in SQLite, kept by statement-level triggers with transition tables, so that a
 * batch written in one statement costs one aggregated upsert per rollup rather than one per row.
 */
function rollups(p: string): string {
  const u = p === 'eph_' ? 'UNLOGGED ' : '';
  const outcomeDelta = (from: string) => `
    INSERT INTO ${p}stats_owner AS s (owner, bucket, succeeded, failed)
      SELECT owner, created - created % ${O}, sum(ds), sum(df) FROM ${from} GROUP BY 1, 2
      ON CONFLICT (owner, bucket) DO UPDATE SET succeeded = s.succeeded + excluded.succeeded, failed = s.failed + excluded.failed;
    INSERT INTO ${p}stats_hook AS s (hook_id, bucket, succeeded, failed)
      SELECT hook_id, created - created % ${H}, sum(ds), sum(df) FROM ${from} GROUP BY 1, 2
      ON CONFLICT (hook_id, bucket) DO UPDATE SET succeeded = s.succeeded + excluded.succeeded, failed = s.failed + excluded.failed;`;
  return `
  CREATE ${u}TABLE ${p}stats_owner (
    owner TEXT COLLATE "C" NOT NULL, bucket BIGINT NOT NULL,
    succeeded BIGINT NOT NULL DEFAULT 0, failed BIGINT NOT NULL DEFAULT 0,
    attempts BIGINT NOT NULL DEFAULT 0, attempts_ok BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, bucket)
  );
  CREATE ${u}TABLE ${p}stats_latency (
    owner TEXT COLLATE "C" NOT NULL, bucket BIGINT NOT NULL, bin SMALLINT NOT NULL, n BIGINT NOT NULL,
    PRIMARY KEY (owner, bucket, bin)
  );
  CREATE ${u}TABLE ${p}stats_hook (
    hook_id TEXT COLLATE "C" NOT NULL, bucket BIGINT NOT NULL,
    succeeded BIGINT NOT NULL DEFAULT 0, failed BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (hook_id, bucket)
  );
  CREATE INDEX ${p}deliveries_pending ON ${p}deliveries (owner, created) WHERE status = 'pending';

  INSERT INTO ${p}stats_owner (owner, bucket, succeeded, failed)
    SELECT owner, created - created % ${O}, count(*) FILTER (WHERE status = 'succeeded'), count(*) FILTER (WHERE status = 'failed')
    FROM ${p}deliveries GROUP BY 1, 2;
  INSERT INTO ${p}stats_owner AS s (owner, bucket, attempts, attempts_ok)
    SELECT d.owner, a.time - a.time % ${O}, count(*), count(*) FILTER (WHERE a.status BETWEEN 200 AND 299)
    FROM ${p}delivery_attempts a JOIN ${p}deliveries d ON d.id = a.delivery_id GROUP BY 1, 2
    ON CONFLICT (owner, bucket) DO UPDATE SET attempts = excluded.attempts, attempts_ok = excluded.attempts_ok;
  INSERT INTO ${p}stats_latency (owner, bucket, bin, n)
    SELECT d.owner, a.time - a.time % ${O}, ${latencyBinSql('a.latency_ms')}, count(*)
    FROM ${p}delivery_attempts a JOIN ${p}deliveries d ON d.id = a.delivery_id GROUP BY 1, 2, 3;
  INSERT INTO ${p}stats_hook (hook_id, bucket, succeeded, failed)
    SELECT hook_id, created - created % ${H}, count(*) FILTER (WHERE status = 'succeeded'), count(*) FILTER (WHERE status = 'failed')
    FROM ${p}deliveries GROUP BY 1, 2;

  CREATE FUNCTION ${p}stats_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO ${p}stats_owner AS s (owner, bucket, attempts, attempts_ok)
      SELECT d.owner, n.time - n.time % ${O}, count(*), count(*) FILTER (WHERE n.status BETWEEN 200 AND 299)
      FROM new_rows n JOIN ${p}deliveries d ON d.id = n.delivery_id GROUP BY 1, 2
      ON CONFLICT (owner, bucket) DO UPDATE SET attempts = s.attempts + excluded.attempts, attempts_ok = s.attempts_ok + excluded.attempts_ok;
    INSERT INTO ${p}stats_latency AS s (owner, bucket, bin, n)
      SELECT d.owner, n.time - n.time % ${O}, ${latencyBinSql('n.latency_ms')}, count(*)
      FROM new_rows n JOIN ${p}deliveries d ON d.id = n.delivery_id GROUP BY 1, 2, 3
      ON CONFLICT (owner, bucket, bin) DO UPDATE SET n = s.n + excluded.n;
    RETURN NULL;
  END $$;
  CREATE TRIGGER ${p}stats_attempts AFTER INSERT ON ${p}delivery_attempts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${p}stats_attempts();

  CREATE FUNCTION ${p}stats_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    ${outcomeDelta(`(SELECT owner, hook_id, created, (status = 'succeeded')::int AS ds, (status = 'failed')::int AS df
      FROM new_rows WHERE status <> 'pending') x`)}
    RETURN NULL;
  END $$;
  CREATE TRIGGER ${p}stats_inserted AFTER INSERT ON ${p}deliveries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${p}stats_inserted();

  CREATE FUNCTION ${p}stats_updated() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    ${outcomeDelta(`(SELECT n.owner, n.hook_id, n.created,
        (n.status = 'succeeded')::int - (o.status = 'succeeded')::int AS ds,
        (n.status = 'failed')::int - (o.status = 'failed')::int AS df
      FROM new_rows n JOIN old_rows o ON o.seq = n.seq WHERE o.status <> n.status) x`)}
    RETURN NULL;
  END $$;
  CREATE TRIGGER ${p}stats_updated AFTER UPDATE ON ${p}deliveries
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${p}stats_updated();
  `;
}

/** Schema version 2: the rollups of both sets of delivery tables. */
export const AGGREGATES_MIGRATION_SQL = rollups('') + rollups('eph_');

type Row = Record<string, unknown>;

/** The console's aggregates from the PostgreSQL rollups of one set of tables. */
export class PostgresAggregates implements DeliveryAggregates {
  constructor(
    private readonly pool: pg.Pool,
    private readonly p: '' | 'eph_',
  ) {}

  async totals(owner: string, since: number): Promise<OutcomeTotals> {
    const { rows } = await this.pool.query(
      'SELECT coalesce(sum(succeeded), 0) AS s, coalesce(sum(failed), 0) AS f, coalesce(sum(attempts), 0) AS a, ' +
        `coalesce(sum(attempts_ok), 0) AS ok FROM ${this.p}stats_owner WHERE owner = $1 AND bucket >= $2`,
      [owner, since],
    );
    const r = rows[0] as Row;
    return { succeeded: Number(r.s), failed: Number(r.f), attempts: Number(r.a), attemptsOk: Number(r.ok) };
  }

  async latency(owner: string, since: number): Promise<number[]> {
    const { rows } = await this.pool.query(
      `SELECT bin, sum(n) AS n FROM ${this.p}stats_latency WHERE owner = $1 AND bucket >= $2 GROUP BY bin`,
      [owner, since],
    );
    const h = new Array<number>(LATENCY_BINS).fill(0);
    for (const r of rows as Row[]) h[Number(r.bin)] = Number(r.n);
    return h;
  }

  async series(owner: string, since: number): Promise<OutcomeBucket[]> {
    const { rows } = await this.pool.query(
      `SELECT bucket, succeeded, failed FROM ${this.p}stats_owner WHERE owner = $1 AND bucket >= $2 ORDER BY bucket`,
      [owner, since],
    );
    return (rows as Row[]).map(bucketFromRow);
  }

  async pending(owner: string): Promise<{ count: number; oldest: number | null }> {
    const { rows } = await this.pool.query(
      `SELECT count(*) AS n, min(created) AS oldest FROM ${this.p}deliveries WHERE owner = $1 AND status = 'pending'`,
      [owner],
    );
    const r = rows[0] as Row;
    return pendingFromRow(r);
  }

  async hookSeries(hookIds: readonly string[], since: number): Promise<Map<string, OutcomeBucket[]>> {
    const out = new Map<string, OutcomeBucket[]>();
    if (hookIds.length === 0) return out;
    const { rows } = await this.pool.query(
      `SELECT hook_id, bucket, succeeded, failed FROM ${this.p}stats_hook WHERE hook_id = ANY($1::text[]) AND bucket >= $2`,
      [hookIds, since],
    );
    for (const r of rows as Row[]) {
      const id = r.hook_id as string;
      const list = out.get(id) ?? [];
      list.push(bucketFromRow(r));
      out.set(id, list);
    }
    return out;
  }

  async lastDeliveries(hookIds: readonly string[]): Promise<Map<string, LastDelivery>> {
    const out = new Map<string, LastDelivery>();
    if (hookIds.length === 0) return out;
    const { rows } = await this.pool.query(
      `SELECT h.id AS hook_id, d.status, d.last_status, d.created FROM unnest($1::text[]) AS h(id) ` +
        `CROSS JOIN LATERAL (SELECT status, last_status, created FROM ${this.p}deliveries ` +
        'WHERE hook_id = h.id ORDER BY id DESC LIMIT 1) d',
      [hookIds],
    );
    for (const r of rows as Row[]) out.set(r.hook_id as string, lastDeliveryFromRow(r));
    return out;
  }
}
