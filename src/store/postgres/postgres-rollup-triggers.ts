import { HOOK_BUCKET_MS, latencyBinSql, OWNER_BUCKET_MS } from '../delivery-aggregates.js';

const O = OWNER_BUCKET_MS;
const H = HOOK_BUCKET_MS;

/**
 * Schema version 11: the console rollup triggers of version 6,
 * rewritten so that no plan can make them slower than linear in the batch.
 *
 * PL/pgSQL caches a statement's plan for the life of the connection, made with the sizes seen at
 * its first run. The update trigger joined its two transition tables (`new_rows`, `old_rows`,
 * no index); planned on a first batch of one row, that join stays a nested loop for good, and a
 * batch of 758 updates cost 574,000 comparisons (83 ms) per rollup. A slow write makes the next
 * batch larger and so slower still: the collapsed rounds of the queue bench. Here the old rows
 * are subtracted and the new ones added in one aggregate (a row's owner, hook and creation time
 * never change, so the pairs need no matching). The attempt trigger looked each attempt's owner
 * up by a join that could be cached as a hash join over the whole deliveries table; it now looks
 * it up per row through the unique index on `id`, whatever was planned first.
 */
function triggers(p: string): string {
  const outcomeDelta = (table: string, bucket: number, key: string) => `
    INSERT INTO ${p}${table} AS s (${key}, bucket, succeeded, failed)
      SELECT ${key}, created - created % ${bucket}, sum(ds), sum(df) FROM (
        SELECT ${key}, created, (status = 'succeeded')::int AS ds, (status = 'failed')::int AS df
          FROM new_rows WHERE status IN ('succeeded', 'failed')
        UNION ALL
        SELECT ${key}, created, -(status = 'succeeded')::int, -(status = 'failed')::int
          FROM old_rows WHERE status IN ('succeeded', 'failed')
      ) x GROUP BY 1, 2 HAVING sum(ds) <> 0 OR sum(df) <> 0
      ON CONFLICT (${key}, bucket) DO UPDATE SET succeeded = s.succeeded + excluded.succeeded, failed = s.failed + excluded.failed;`;
  // MATERIALIZED: the owner is looked up once per attempt, not once per use of the column.
  const withOwner = `WITH a AS MATERIALIZED (
      SELECT (SELECT d.owner FROM ${p}deliveries d WHERE d.id = n.delivery_id) AS owner, n.time, n.status, n.latency_ms
      FROM new_rows n)`;
  return `
  CREATE OR REPLACE FUNCTION ${p}stats_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    ${withOwner}
    INSERT INTO ${p}stats_owner AS s (owner, bucket, attempts, attempts_ok)
      SELECT owner, time - time % ${O}, count(*), count(*) FILTER (WHERE status BETWEEN 200 AND 299)
      FROM a WHERE owner IS NOT NULL GROUP BY 1, 2
      ON CONFLICT (owner, bucket) DO UPDATE SET attempts = s.attempts + excluded.attempts, attempts_ok = s.attempts_ok + excluded.attempts_ok;
    ${withOwner}
    INSERT INTO ${p}stats_latency AS s (owner, bucket, bin, n)
      SELECT owner, time - time % ${O}, ${latencyBinSql('latency_ms')}, count(*)
      FROM a WHERE owner IS NOT NULL GROUP BY 1, 2, 3
      ON CONFLICT (owner, bucket, bin) DO UPDATE SET n = s.n + excluded.n;
    RETURN NULL;
  END $$;

  CREATE OR REPLACE FUNCTION ${p}stats_updated() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    ${outcomeDelta('stats_owner', O, 'owner')}
    ${outcomeDelta('stats_hook', H, 'hook_id')}
    RETURN NULL;
  END $$;
  `;
}

export const ROLLUP_TRIGGERS_V11_SQL = triggers('') + triggers('eph_');
