/**
 * The sealed marker (src/store/sealed-marker.ts) in the SQLite file: its table and triggers, and
 * the walk's claim and finish. SQLite has one writer at a time, so a write either commits before
 * a claim (and the walk that follows reads it) or after it (and its trigger sees the claim).
 */
import type Database from 'better-sqlite3';
import { CLEAR_MARKER, KEEPS_MARKER, SEALED_MARKER_TABLE, type SealedMarker } from '../sealed-marker.js';
import { HOOK_DOC_WITH_CREDENTIALS, URL_WITH_CREDENTIALS } from '../secret-codec.js';

const trigger = (name: string, on: string, guard: string | undefined, keeps: string) => `
  CREATE TRIGGER ${name} AFTER ${on}${guard === undefined ? '' : ` WHEN ${guard}`} BEGIN
    ${CLEAR_MARKER} AND NOT (${keeps});
  END;`;

/** The migration that adds the marker (unset: the first start walks). */
export const SEALED_MARKER_MIGRATION = `
  CREATE TABLE ${SEALED_MARKER_TABLE} (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    key TEXT,
    sealed INTEGER NOT NULL DEFAULT 0,
    gen INTEGER NOT NULL DEFAULT 0
  );
  INSERT INTO ${SEALED_MARKER_TABLE} (one) VALUES (1);
  ${trigger('secrets_sealed_secret_insert', 'INSERT ON hook_secrets', undefined, KEEPS_MARKER.secret('NEW.secret', 'NEW.previous'))}
  ${trigger('secrets_sealed_secret_update', 'UPDATE OF secret, previous ON hook_secrets', undefined, KEEPS_MARKER.secret('NEW.secret', 'NEW.previous'))}
  ${trigger('secrets_sealed_hook_insert', 'INSERT ON hooks', HOOK_DOC_WITH_CREDENTIALS('NEW.doc', 'instr'), KEEPS_MARKER.doc('NEW.doc', 'instr'))}
  ${trigger('secrets_sealed_hook_update', 'UPDATE OF doc ON hooks', HOOK_DOC_WITH_CREDENTIALS('NEW.doc', 'instr'), KEEPS_MARKER.doc('NEW.doc', 'instr'))}
  ${trigger('secrets_sealed_url_insert', 'INSERT ON deliveries', URL_WITH_CREDENTIALS('NEW.url', 'instr'), KEEPS_MARKER.url('NEW.url', 'instr'))}
  ${trigger('secrets_sealed_url_update', 'UPDATE OF url ON deliveries', URL_WITH_CREDENTIALS('NEW.url', 'instr'), KEEPS_MARKER.url('NEW.url', 'instr'))}
`;

export class SqliteSealedMarker implements SealedMarker {
  private readonly read: Database.Statement;
  private readonly claim: Database.Statement;
  private readonly finish: Database.Statement;

  constructor(db: Database.Database) {
    this.read = db.prepare(`SELECT key FROM ${SEALED_MARKER_TABLE} WHERE sealed = 1`);
    this.claim = db.prepare(
      `UPDATE ${SEALED_MARKER_TABLE} SET key = ?, sealed = 0, gen = gen + 1 RETURNING gen`,
    );
    this.finish = db.prepare(`UPDATE ${SEALED_MARKER_TABLE} SET sealed = 1 WHERE key = ? AND gen = ?`);
  }

  async sealedUnder(): Promise<string | undefined> {
    return (this.read.get() as { key: string } | undefined)?.key;
  }

  async beginWalk(keyId: string): Promise<number> {
    return (this.claim.get(keyId) as { gen: number }).gen;
  }

  async finishWalk(keyId: string, claim: number): Promise<boolean> {
    return this.finish.run(keyId, claim).changes > 0;
  }
}
