import type pg from 'pg';
import type { Claim, ClaimRequest, IdempotencyStore, StoredAnswer } from './idempotency-store.js';
import { judge } from './idempotency-store.js';
import { toRow } from './sqlite-idempotency-store.js';

/** The part of `PgDatabase` used here. */
export interface PgPool {
  readonly pool: pg.Pool;
}

/**
 * Keys in the cluster's database (table `idempotency_keys`, unique per user and key), so that a
 * repeat sent to any instance finds the first answer. Two instances claiming one key at once:
 * the unique key makes one insert win; the other's conditional upsert finds the fresh claim and
 * reports it `in-progress`.
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  readonly kind = 'postgres';

  constructor(private readonly db: PgPool) {}

  async claim(req: ClaimRequest): Promise<Claim> {
    for (let round = 0; round < 3; round++) {
      // Takes the key when nobody holds it, or when what holds it expired or went stale.
      const taken = await this.db.pool.query(
        `INSERT INTO idempotency_keys (owner, key, fingerprint, status, content_type, body, created, expires)
         VALUES ($1, $2, $3, NULL, NULL, NULL, $4, $5)
         ON CONFLICT (owner, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status = NULL,
           content_type = NULL, body = NULL, created = EXCLUDED.created, expires = EXCLUDED.expires
         WHERE idempotency_keys.expires <= $4
            OR (idempotency_keys.status IS NULL AND idempotency_keys.created < $6)
         RETURNING 1`,
        [req.owner, req.key, req.fingerprint, req.now, req.now + req.ttlMs, req.now - req.staleMs],
      );
      if (taken.rowCount === 1) return { kind: 'claimed' };
      const { rows } = await this.db.pool.query(
        'SELECT fingerprint, status, content_type, body, created, expires FROM idempotency_keys WHERE owner = $1 AND key = $2',
        [req.owner, req.key],
      );
      const found = judge(toRow(rows[0]), req);
      if (found) return found;
      // Released or expired between the two statements: try again.
    }
    return { kind: 'in-progress' };
  }

  async complete(owner: string, key: string, fingerprint: string, a: StoredAnswer): Promise<void> {
    await this.db.pool.query(
      'UPDATE idempotency_keys SET status = $1, content_type = $2, body = $3 WHERE owner = $4 AND key = $5 AND fingerprint = $6',
      [a.status, a.contentType, a.body, owner, key, fingerprint],
    );
  }

  async release(owner: string, key: string, fingerprint: string): Promise<void> {
    await this.db.pool.query(
      'DELETE FROM idempotency_keys WHERE owner = $1 AND key = $2 AND fingerprint = $3 AND status IS NULL',
      [owner, key, fingerprint],
    );
  }

  async prune(now: number, limit: number): Promise<number> {
    const r = await this.db.pool.query(
      `DELETE FROM idempotency_keys WHERE (owner, key) IN
         (SELECT owner, key FROM idempotency_keys WHERE expires <= $1 LIMIT $2)`,
      [now, limit],
    );
    return r.rowCount ?? 0;
  }
}
