import type Database from 'better-sqlite3';
import { deliveryListFilter, type FilterDialect, outside2xx } from '../delivery-list-filter.js';
import {
  attemptFromRow,
  dedupeUpdates,
  deliveryFromRow,
  secretFromRow,
  storedSecretFromRow,
} from '../delivery-row.js';
import { singleProcess } from '../delivery-sharing.js';
import type {
  AttemptRecord,
  DeliveryBatch,
  DeliveryQuery,
  DeliveryRecord,
  DeliveryStore,
  HookSecretRecord,
  RequestRewrite,
  RetentionRule,
} from '../delivery-store.js';
import {
  type CredentialRow,
  type CredentialTable,
  PLAIN_SECRETS,
  type SecretCodec,
  type StoredSecretRow,
  sealRecord,
  sealUrl,
  URL_WITH_CREDENTIALS,
} from '../secret-codec.js';
import { SqliteAggregates } from './sqlite-aggregates.js';
import { SqliteOutcomes } from './sqlite-outcomes.js';
import { SqliteRollups } from './sqlite-rollups.js';

type Row = Record<string, unknown>;

const DELIVERY_COLUMNS =
  'id, hook_id, owner, hook_type, status, attempts, round_start, created, next_attempt, last_status, ' +
  'last_error, t_method, t_path, t_status, method, url, headers, body, t_user, trace_parent, transform_input';

const SQLITE_FILTER: FilterDialect = {
  param: (n) => `@p${n}`,
  pathPrefix: (p) => `substr(t_path, 1, length(${p})) = ${p}`,
};

/**
 * Deliveries in the SQLite file of `SqliteStore` (its tables come from the second migration).
 * `write` is one transaction per batch: the pipeline hands it everything of one event-loop turn,
 * so a burst pays one commit, not one per callback (PERF-NOTES "Recording deliveries").
 */
export class SqliteDeliveryStore implements DeliveryStore, CredentialTable {
  readonly kind = 'sqlite';
  readonly credentialKind = 'url';
  readonly aggregates: SqliteAggregates;
  readonly sharing = singleProcess(this);
  private readonly stmts;
  private readonly writeTx: Database.Transaction<(batch: DeliveryBatch) => void>;
  private readonly rollups: SqliteRollups;
  private dataVersion = -1;
  private readonly pruneTx: (rows: Row[]) => void;
  /** Hooks with new deliveries since the last prune: only they can have grown past the count limit. */
  private readonly touched = new Set<string>();
  private prunedOnce = false;
  /** The delivery-log query of each filter set seen, by its text (delivery-list-filter.ts). */
  private readonly listStmts = new Map<string, Database.Statement>();

  /**
   * @param db the connection of `SqliteStore` (`sqliteStore.db`), already migrated.
   * @param secrets how secrets are written (the daemon's sealer; plain text by default).
   */
  constructor(
    private readonly db: Database.Database,
    private readonly secrets: SecretCodec = PLAIN_SECRETS,
  ) {
    this.aggregates = new SqliteAggregates(db);
    this.stmts = {
      insert: db.prepare(
        `INSERT INTO deliveries (${DELIVERY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      deleteHookAttempts: db.prepare(
        'DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE hook_id = ?)',
      ),
      deleteHookDeliveries: db.prepare('DELETE FROM deliveries WHERE hook_id = ?'),
      deleteSecret: db.prepare('DELETE FROM hook_secrets WHERE hook_id = ?'),
      get: db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = ?`),
      attempts: db.prepare(
        'SELECT delivery_id, attempt, hook_id, time, status, latency_ms, error, response, rate_wait_ms FROM delivery_attempts ' +
          'WHERE delivery_id = ? ORDER BY attempt',
      ),
      pending: db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE status = 'pending' ORDER BY seq`),
      getSecret: db.prepare(
        'SELECT hook_id, secret, previous, previous_valid_until FROM hook_secrets WHERE hook_id = ?',
      ),
      putSecret: db.prepare(
        'INSERT INTO hook_secrets (hook_id, secret, previous, previous_valid_until) VALUES (?, ?, ?, ?) ' +
          'ON CONFLICT(hook_id) DO UPDATE SET secret = excluded.secret, previous = excluded.previous, ' +
          'previous_valid_until = excluded.previous_valid_until',
      ),
      credentialRows: db.prepare(
        `SELECT id, hook_id AS hookId, url AS text FROM deliveries WHERE id > ? AND ${URL_WITH_CREDENTIALS('url', 'instr')} ORDER BY id LIMIT ?`,
      ),
      rewriteRequest: db.prepare(
        'UPDATE deliveries SET headers = ?, body = ?, transform_input = NULL WHERE id = ?',
      ),
      replaceUrl: db.prepare('UPDATE deliveries SET url = ? WHERE id = ? AND url = ?'),
      storedSecrets: db.prepare(
        'SELECT hook_id, secret, previous FROM hook_secrets WHERE hook_id > ? ORDER BY hook_id LIMIT ?',
      ),
      replaceStoredSecret: db.prepare(
        'UPDATE hook_secrets SET secret = ?, previous = ? WHERE hook_id = ? AND secret = ? AND previous IS ?',
      ),
      // Rows are in creation order by `seq`, so the oldest young row bounds the range of old ones.
      firstYoung: db.prepare('SELECT seq FROM deliveries WHERE created >= ? ORDER BY seq LIMIT 1'),
      maxSeq: db.prepare('SELECT max(seq) AS seq FROM deliveries'),
      oldFinished: db.prepare(
        "SELECT seq, id FROM deliveries WHERE seq < ? AND status != 'pending' ORDER BY seq LIMIT ?",
      ),
      hooksOverLimit: db.prepare('SELECT hook_id FROM deliveries GROUP BY hook_id HAVING count(*) > ?'),
      countCutoff: db.prepare(
        'SELECT id FROM deliveries WHERE hook_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?',
      ),
      beyondCount: db.prepare(
        "SELECT seq, id FROM deliveries WHERE hook_id = ? AND id <= ? AND status != 'pending' LIMIT ?",
      ),
      deleteAttempts: db.prepare('DELETE FROM delivery_attempts WHERE delivery_id = ?'),
      deleteDelivery: db.prepare('DELETE FROM deliveries WHERE seq = ?'),
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
    };
    const s = this.stmts;
    const outcomes = new SqliteOutcomes(db);
    const rollups = new SqliteRollups(db);
    this.rollups = rollups;
    this.writeTx = db.transaction((batch: DeliveryBatch) => {
      // `data_version` moves only when another connection commits: what it wrote is not known
      // here. Read under the write lock (the transaction is IMMEDIATE), nothing commits after it.
      const version = s.dataVersion.get() as number;
      if (version !== this.dataVersion) {
        rollups.forget();
        this.dataVersion = version;
      }
      // One state per delivery, its last: a multi-row statement must not change a row twice.
      const updates = dedupeUpdates(batch.updates);
      // Counted before the writes: a state's change is counted from the status stored before it.
      const delta = rollups.count(batch, updates);
      for (const r of batch.inserts) {
        const q = r.request;
        s.insert.run(
          r.id,
          r.hookId,
          r.owner,
          r.hookType,
          r.status,
          r.attempts,
          r.roundStart,
          r.created,
          r.nextAttempt,
          r.lastStatusCode,
          r.lastError,
          r.trigger.method,
          r.trigger.path,
          r.trigger.statusCode ?? null,
          q.method,
          sealUrl(this.secrets, r.hookId, q.url),
          JSON.stringify(q.headers),
          q.body ?? null,
          r.trigger.user ?? null,
          r.traceParent ?? null,
          r.transformInput ?? null,
        );
      }
      // Attempt outcomes: a multi-row statement per chunk rather than two per outcome.
      if (updates.length > 0) outcomes.writeStates(updates);
      if (batch.attempts.length > 0) outcomes.writeAttempts(batch.attempts);
      for (const hookId of batch.deletedHooks) {
        s.deleteHookAttempts.run(hookId);
        s.deleteHookDeliveries.run(hookId);
        s.deleteSecret.run(hookId);
      }
      rollups.write(delta);
    });
    this.pruneTx = db.transaction((rows: Row[]) => {
      for (const row of rows) {
        s.deleteAttempts.run(row.id);
        s.deleteDelivery.run(row.seq);
      }
    });
  }

  async write(batch: DeliveryBatch): Promise<void> {
    try {
      this.writeTx.immediate(batch);
    } catch (err) {
      this.rollups.forget();
      throw err;
    }
    for (const r of batch.inserts) this.touched.add(r.hookId);
  }

  async rewriteRequest(w: RequestRewrite): Promise<boolean> {
    return this.stmts.rewriteRequest.run(JSON.stringify(w.headers), w.body ?? null, w.id).changes > 0;
  }

  async getDelivery(id: string): Promise<DeliveryRecord | undefined> {
    const row = this.stmts.get.get(id) as Row | undefined;
    return row && toRecord(row, this.secrets);
  }

  async listDeliveries(hookId: string, query: DeliveryQuery = {}): Promise<DeliveryRecord[]> {
    const f = deliveryListFilter(hookId, query, SQLITE_FILTER);
    const rs = query.receiverStatus;
    // Without statistics SQLite walks `(hook_id, id)` for a status class (a range) to spare the
    // sort, reading the whole hook when the class is rare (bench/console.ts: 5xx). The range scan
    // reads only the class's rows, never more than the hook has, so it is the better worst case.
    // The index holds no 2xx, so only a range outside 2xx can name it.
    const from =
      rs !== undefined && rs[0] !== rs[1] && outside2xx(rs) && query.status === undefined
        ? 'deliveries INDEXED BY deliveries_by_hook_last_status'
        : 'deliveries';
    const sql = `SELECT ${DELIVERY_COLUMNS} FROM ${from} WHERE ${f.where} ORDER BY id DESC LIMIT @limit`;
    let stmt = this.listStmts.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql);
      this.listStmts.set(sql, stmt);
    }
    const params: Record<string, unknown> = { limit: query.limit ?? -1 };
    f.values.forEach((v, i) => {
      params[`p${i + 1}`] = v;
    });
    return (stmt.all(params) as Row[]).map((r) => toRecord(r, this.secrets));
  }

  async listAttempts(deliveryId: string): Promise<AttemptRecord[]> {
    return (this.stmts.attempts.all(deliveryId) as Row[]).map((r) =>
      attemptFromRow(r, r.response as string | null),
    );
  }

  async pendingDeliveries(): Promise<DeliveryRecord[]> {
    return (this.stmts.pending.all() as Row[]).map((r) => toRecord(r, this.secrets));
  }

  async getSecret(hookId: string): Promise<HookSecretRecord | undefined> {
    const r = this.stmts.getSecret.get(hookId) as Row | undefined;
    return r && secretFromRow(r, this.secrets);
  }

  async putSecret(s: HookSecretRecord): Promise<void> {
    const sealed = sealRecord(this.secrets, s);
    this.stmts.putSecret.run(s.hookId, sealed.secret, sealed.previous, s.previousValidUntil);
  }

  async credentialRows(after: string, limit: number): Promise<CredentialRow[]> {
    return this.stmts.credentialRows.all(after, limit) as CredentialRow[];
  }

  async replaceCredentialRow(row: CredentialRow, text: string): Promise<boolean> {
    return this.stmts.replaceUrl.run(text, row.id, row.text).changes > 0;
  }

  async storedSecrets(after: string, limit: number): Promise<StoredSecretRow[]> {
    return (this.stmts.storedSecrets.all(after, limit) as Row[]).map(storedSecretFromRow);
  }

  async replaceStoredSecret(before: StoredSecretRow, next: StoredSecretRow): Promise<boolean> {
    const r = this.stmts.replaceStoredSecret.run(
      next.secret,
      next.previous,
      before.hookId,
      before.secret,
      before.previous,
    );
    return r.changes > 0;
  }

  async deleteSecret(hookId: string): Promise<boolean> {
    return this.stmts.deleteSecret.run(hookId).changes > 0;
  }

  async prune(rule: RetentionRule): Promise<number> {
    const s = this.stmts;
    const victims: Row[] = [];
    const seen = new Set<unknown>();
    const young = s.firstYoung.get(rule.olderThan) as Row | undefined;
    const bound = young ? (young.seq as number) : Number.MAX_SAFE_INTEGER;
    for (const row of s.oldFinished.all(bound, rule.limit) as Row[]) {
      victims.push(row);
      seen.add(row.seq);
    }

    // The count rule only needs checking for hooks that received deliveries since the last
    // complete run, except on the first run, which cannot know what earlier processes inserted.
    const hooks = this.prunedOnce
      ? [...this.touched]
      : (s.hooksOverLimit.all(rule.maxPerHook) as Row[]).map((r) => r.hook_id as string);
    for (const hookId of hooks) {
      if (victims.length >= rule.limit) break;
      const cutoff = s.countCutoff.get(hookId, rule.maxPerHook) as Row | undefined;
      if (!cutoff) continue;
      for (const row of s.beyondCount.all(hookId, cutoff.id, rule.limit - victims.length) as Row[]) {
        if (seen.has(row.seq)) continue;
        victims.push(row);
        seen.add(row.seq);
      }
    }
    if (victims.length > 0) this.pruneTx(victims);
    // A run cut short by the limit leaves the list as it is: the caller calls again.
    if (victims.length < rule.limit) {
      this.touched.clear();
      this.prunedOnce = true;
    }
    return victims.length;
  }
}

function toRecord(r: Row, codec: SecretCodec): DeliveryRecord {
  return deliveryFromRow(r, r.body === null ? undefined : (r.body as string), codec);
}
