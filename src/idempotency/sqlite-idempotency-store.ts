import type Database from 'better-sqlite3';
import {
  type Claim,
  type ClaimRequest,
  type IdempotencyStore,
  judge,
  type KeyRow,
  type StoredAnswer,
} from './idempotency-store.js';

type Row = Record<string, unknown>;

/** Keys in the SQLite file of `SqliteStore` (table `idempotency_keys`): they survive a restart. */
export class SqliteIdempotencyStore implements IdempotencyStore {
  readonly kind = 'sqlite';
  private readonly stmts;
  private readonly claimTx: Database.Transaction<(req: ClaimRequest) => Claim>;

  /** @param db the connection of `SqliteStore` (`sqliteStore.db`), already migrated. */
  constructor(db: Database.Database) {
    this.stmts = {
      get: db.prepare(
        'SELECT fingerprint, status, content_type, body, created, expires FROM idempotency_keys WHERE owner = ? AND key = ?',
      ),
      put: db.prepare(
        'INSERT OR REPLACE INTO idempotency_keys (owner, key, fingerprint, status, content_type, body, created, expires) ' +
          'VALUES (?, ?, ?, NULL, NULL, NULL, ?, ?)',
      ),
      complete: db.prepare(
        'UPDATE idempotency_keys SET status = ?, content_type = ?, body = ? WHERE owner = ? AND key = ? AND fingerprint = ?',
      ),
      release: db.prepare(
        'DELETE FROM idempotency_keys WHERE owner = ? AND key = ? AND fingerprint = ? AND status IS NULL',
      ),
      prune: db.prepare(
        'DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires <= ? LIMIT ?)',
      ),
    };
    const s = this.stmts;
    // IMMEDIATE: the claim reads, then writes, and another connection on the file (the delivery
    // writer thread) may commit in between; a deferred transaction would then fail with
    // SQLITE_BUSY_SNAPSHOT at once, where taking the write lock first waits its busy_timeout.
    this.claimTx = db.transaction((req: ClaimRequest): Claim => {
      const found = judge(toRow(s.get.get(req.owner, req.key) as Row | undefined), req);
      if (found) return found;
      s.put.run(req.owner, req.key, req.fingerprint, req.now, req.now + req.ttlMs);
      return { kind: 'claimed' };
    });
  }

  async claim(req: ClaimRequest): Promise<Claim> {
    return this.claimTx.immediate(req);
  }

  async complete(owner: string, key: string, fingerprint: string, a: StoredAnswer): Promise<void> {
    this.stmts.complete.run(a.status, a.contentType, a.body, owner, key, fingerprint);
  }

  async release(owner: string, key: string, fingerprint: string): Promise<void> {
    this.stmts.release.run(owner, key, fingerprint);
  }

  async prune(now: number, limit: number): Promise<number> {
    return this.stmts.prune.run(now, limit).changes;
  }
}

export function toRow(r: Row | undefined): KeyRow | undefined {
  if (r === undefined) return undefined;
  return {
    fingerprint: r.fingerprint as string,
    status: r.status as number | null,
    contentType: r.content_type as string | null,
    body: r.body as string | null,
    created: r.created as number,
    expires: r.expires as number,
  };
}
