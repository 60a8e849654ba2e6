/**
 * The sealed marker (src/store/sealed-marker.ts) in PostgreSQL, shared by the instances. Writers
 * run concurrently, so the triggers take a shared advisory lock that a claim takes exclusively:
 * a claim waits for every transaction that wrote a sealed value before it, and a writer arriving
 * meanwhile waits for the claim, then sees it. A walk begun by another instance, or a write under
 * another key (an instance that has not read a rotated key file yet), makes the finish fail.
 */

import { SEALED_MARKER_TABLE, type SealedMarker } from '../sealed-marker.js';
import { LOCK_CLASS, LOCKS } from './pg-common.js';
import type { PgDatabase } from './pg-database.js';

export class PgSealedMarker implements SealedMarker {
  constructor(private readonly db: PgDatabase) {}

  async sealedUnder(): Promise<string | undefined> {
    const { rows } = await this.db.pool.query<{ key: string }>(
      `SELECT key FROM ${SEALED_MARKER_TABLE} WHERE sealed = 1`,
    );
    return rows[0]?.key;
  }

  async beginWalk(keyId: string): Promise<number> {
    return this.db.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, LOCKS.sealedMarker]);
      const { rows } = await client.query<{ gen: string }>(
        `UPDATE ${SEALED_MARKER_TABLE} SET key = $1, sealed = 0, gen = gen + 1 RETURNING gen`,
        [keyId],
      );
      return Number(rows[0]!.gen);
    });
  }

  async finishWalk(keyId: string, claim: number): Promise<boolean> {
    const r = await this.db.pool.query(
      `UPDATE ${SEALED_MARKER_TABLE} SET sealed = 1 WHERE key = $1 AND gen = $2`,
      [keyId, claim],
    );
    return (r.rowCount ?? 0) > 0;
  }
}
