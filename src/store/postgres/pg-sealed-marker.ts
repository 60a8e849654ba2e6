/**
 * The sealed marker (src/store/sealed-marker.ts) in PostgreSQL, shared by the instances. Writers
 * run concurrently, so the triggers take a shared advisory lock that a claim takes exclusively:
 * a claim waits for every transaction that wrote a sealed value before it, and a writer arriving
 * meanwhile waits for the claim, then sees it. A walk begun by another instance, or a write under
 * another key (an instance that has not read a rotated key file yet), makes the finish fail.
 */

import { CLEAR_MARKER, KEEPS_MARKER, SEALED_MARKER_TABLE, type SealedMarker } from '../sealed-marker.js';
import { HOOK_DOC_WITH_CREDENTIALS, URL_WITH_CREDENTIALS } from '../secret-codec.js';
import { LOCK_CLASS, LOCKS } from './pg-common.js';
import type { PgDatabase } from './pg-database.js';

const fn = (name: string, keeps: string) => `
  CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_advisory_xact_lock_shared(${LOCK_CLASS}, ${LOCKS.sealedMarker});
    ${CLEAR_MARKER} AND NOT (${keeps});
    RETURN NULL;
  END $$;`;

const trigger = (table: string, what: string, on: string, guard: string | undefined) => `
  CREATE TRIGGER ${table}_sealed AFTER INSERT OR UPDATE OF ${on} ON ${table} FOR EACH ROW
    ${guard === undefined ? '' : `WHEN (${guard})`} EXECUTE FUNCTION hookd_sealed_${what}();`;

/** The migration that adds the marker (unset: the first start walks). */
export const SEALED_MARKER_SQL = `
  CREATE TABLE ${SEALED_MARKER_TABLE} (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    key TEXT,
    sealed INTEGER NOT NULL DEFAULT 0,
    gen BIGINT NOT NULL DEFAULT 0
  );
  INSERT INTO ${SEALED_MARKER_TABLE} (one) VALUES (1);
  ${fn('hookd_sealed_secret', KEEPS_MARKER.secret('NEW.secret', 'NEW.previous'))}
  ${fn('hookd_sealed_doc', KEEPS_MARKER.doc('NEW.doc', 'strpos'))}
  ${fn('hookd_sealed_url', KEEPS_MARKER.url('NEW.url', 'strpos'))}
  ${['hook_secrets', 'eph_hook_secrets'].map((t) => trigger(t, 'secret', 'secret, previous', undefined)).join('')}
  ${['hooks', 'eph_hooks'].map((t) => trigger(t, 'doc', 'doc', HOOK_DOC_WITH_CREDENTIALS('NEW.doc', 'strpos'))).join('')}
  ${['deliveries', 'eph_deliveries'].map((t) => trigger(t, 'url', 'url', URL_WITH_CREDENTIALS('NEW.url', 'strpos'))).join('')}
`;

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
