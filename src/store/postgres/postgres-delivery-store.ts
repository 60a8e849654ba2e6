import type pg from 'pg';
import { deliveryListFilter, type FilterDialect } from '../delivery-list-filter.js';
import {
  attemptFromRow,
  dedupeUpdates,
  deliveryFromRow,
  secretFromRow,
  storedSecretFromRow,
} from '../delivery-row.js';
import { shared } from '../delivery-sharing.js';
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
  URL_WITH_CREDENTIALS,
} from '../secret-codec.js';
import { LOCK_CLASS, LOCKS, type PgDatabase } from './pg-database.js';
import { attemptArrays, insertArrays, overlaps, updateArrays } from './pg-delivery-arrays.js';
import { PostgresAggregates } from './postgres-aggregates.js';

/**
 * Who holds the deliveries this store inserts and claims: the instance's current lease id. An
 * object rather than a string because an instance that lost its lease carries on under a new id.
 */
export interface LeaseIdentity {
  id: string;
}

export interface PostgresDeliveryStoreOptions {
  /** The UNLOGGED `eph_*` tables of `Persist: false` hooks instead of the durable ones. */
  ephemeral?: boolean;
  /** Default: a fixed identity of its own (a store used by one process, as in the tests). */
  lease?: LeaseIdentity;
  /** How secrets are written (the daemon's sealer); default: as they are. */
  secrets?: SecretCodec;
}

type Row = Record<string, unknown>;

const COLUMNS =
  'id, hook_id, owner, hook_type, status, attempts, round_start, created, next_attempt, last_status, ' +
  'last_error, t_method, t_path, t_status, method, url, headers, body, t_user, trace_parent, transform_input';

const PG_FILTER: FilterDialect = {
  param: (n) => `$${n}`,
  pathPrefix: (p) => `left(t_path, length(${p}::text)) = ${p}`,
};

/**
 * Deliveries in PostgreSQL, shared by the instances of a cluster. Each pending delivery is held
 * by one instance (`lease_owner`): the one that fired it, or the one that claimed it after its
 * holder stopped or its lease ran out. A batch is written with one statement (one round trip and
 * one commit for a whole event-loop turn of inserts, outcomes and attempt records), using
 * `unnest` over column arrays rather than a statement per row.
 */
export class PostgresDeliveryStore implements DeliveryStore, CredentialTable {
  readonly kind: string;
  readonly credentialKind = 'url';
  readonly aggregates: PostgresAggregates;
  readonly sharing = shared(this);
  private readonly t: { deliveries: string; attempts: string; secrets: string };
  private readonly lease: LeaseIdentity;
  private readonly pruneLock: number;
  private readonly sql: { write: string; insert: string; update: string; attempts: string };
  /** Hooks with new deliveries since the last complete prune: only they can have outgrown the count limit. */
  private readonly touched = new Set<string>();
  private prunedOnce = false;
  private readonly pool: pg.Pool;
  private readonly secrets: SecretCodec;

  constructor(
    private readonly db: PgDatabase,
    opts: PostgresDeliveryStoreOptions = {},
  ) {
    this.pool = db.pool;
    this.secrets = opts.secrets ?? PLAIN_SECRETS;
    const p = opts.ephemeral ? 'eph_' : '';
    this.kind = opts.ephemeral ? 'postgres-unlogged' : 'postgres';
    this.aggregates = new PostgresAggregates(db.pool, p);
    this.t = { deliveries: `${p}deliveries`, attempts: `${p}delivery_attempts`, secrets: `${p}hook_secrets` };
    this.lease = opts.lease ?? { id: `store_${db.nodeId}` };
    this.pruneLock = opts.ephemeral ? LOCKS.prune + 100 : LOCKS.prune;
    const insert =
      `INSERT INTO ${this.t.deliveries} (${COLUMNS}, lease_owner) SELECT i.*, $22::text FROM unnest(` +
      '$1::text[], $2::text[], $3::text[], $4::int2[], $5::text[], $6::int4[], $7::int4[], $8::int8[], ' +
      '$9::int8[], $10::int4[], $11::text[], $12::text[], $13::text[], $14::int4[], $15::text[], $16::text[], ' +
      '$17::text[], $18::bytea[], $19::text[], $20::text[], $21::text[]) AS i';
    // An outcome is written only by the delivery's holder, or over a finished delivery (a
    // redelivery starts a new round): an instance that lost its lease cannot overwrite the work
    // of the one that took its deliveries over.
    const update = (o: number) =>
      `UPDATE ${this.t.deliveries} d SET status = u.status, attempts = u.attempts, round_start = u.round_start, ` +
      'next_attempt = u.next_attempt, last_status = u.last_status, last_error = u.last_error, ' +
      `lease_owner = CASE WHEN u.status = 'pending' THEN $${o}::text ELSE NULL END ` +
      `FROM unnest($${o + 1}::text[], $${o + 2}::text[], $${o + 3}::int4[], $${o + 4}::int4[], $${o + 5}::int8[], ` +
      `$${o + 6}::int4[], $${o + 7}::text[]) AS u(id, status, attempts, round_start, next_attempt, last_status, last_error) ` +
      `WHERE d.id = u.id AND (d.lease_owner = $${o} OR d.lease_owner IS NULL OR d.status <> 'pending')`;
    // Attempt numbers only grow, so a repeat can only be a replay of the same attempt: first one wins.
    const attempts = (o: number) =>
      `INSERT INTO ${this.t.attempts} (delivery_id, attempt, hook_id, time, status, latency_ms, error, response, rate_wait_ms) ` +
      `SELECT * FROM unnest($${o}::text[], $${o + 1}::int4[], $${o + 2}::text[], $${o + 3}::int8[], ` +
      `$${o + 4}::int4[], $${o + 5}::float8[], $${o + 6}::text[], $${o + 7}::bytea[], $${o + 8}::float8[]) ON CONFLICT DO NOTHING`;
    this.sql = {
      write: `WITH ins AS (${insert}), upd AS (${update(22)}), att AS (${attempts(30)}) SELECT 1`,
      insert,
      update: update(1),
      attempts: attempts(1),
    };
  }

  /**
   * Applies a batch atomically. A deadlock with another instance (two of them removing and
   * updating the same deleted hook's deliveries) aborts the whole batch; it is tried again, as
   * nothing of it was committed.
   */
  async write(batch: DeliveryBatch): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.writeOnce(batch);
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (attempt >= 3 || (code !== '40P01' && code !== '40001')) throw err;
      }
    }
  }

  private async writeOnce(batch: DeliveryBatch): Promise<void> {
    for (const r of batch.inserts) this.touched.add(r.hookId);
    const updates = dedupeUpdates(batch.updates);
    const ins = insertArrays(batch.inserts, this.secrets);
    const upd = updateArrays(updates);
    const att = attemptArrays(batch.attempts);
    const owner = this.lease.id;
    // The statements of one WITH all see the table as it was before it: an update of a row
    // inserted in the same batch would find nothing. The pipeline never sends such a batch (a
    // new delivery's later changes ride on its insert), but the contract allows it.
    const overlap = batch.inserts.length > 0 && updates.length > 0 && overlaps(batch.inserts, updates);
    if (batch.deletedHooks.length === 0 && !overlap) {
      // Deliberately an unnamed statement: PostgreSQL plans it afresh at every execution, with
      // the arrays' real lengths and the table's real size. A named (prepared) one would switch
      // to a generic plan after five runs and keep it until the next ANALYZE: made while the
      // table was small or had no statistics, that plan joins by a sequential scan of every
      // delivery, and each write grows slower with the table (docs/DECISIONS.md "PostgreSQL
      // plans without statistics"). Planning costs ~0.1-0.3 ms a batch; the bad plan cost 37-61 ms
      // a batch at 50,000 deliveries.
      await this.pool.query(this.sql.write, [...ins, owner, ...upd, ...att]);
      return;
    }
    await this.db.transaction(async (c) => {
      if (batch.inserts.length > 0) await c.query(this.sql.insert, [...ins, owner]);
      if (updates.length > 0) await c.query(this.sql.update, [owner, ...upd]);
      if (batch.attempts.length > 0) await c.query(this.sql.attempts, att);
      if (batch.deletedHooks.length > 0) {
        const hooks = [...batch.deletedHooks];
        await c.query(
          `DELETE FROM ${this.t.attempts} a USING ${this.t.deliveries} d WHERE d.hook_id = ANY($1::text[]) AND a.delivery_id = d.id`,
          [hooks],
        );
        await c.query(`DELETE FROM ${this.t.deliveries} WHERE hook_id = ANY($1::text[])`, [hooks]);
        await c.query(`DELETE FROM ${this.t.secrets} WHERE hook_id = ANY($1::text[])`, [hooks]);
      }
    });
  }

  async rewriteRequest(w: RequestRewrite): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE ${this.t.deliveries} SET headers = $1, body = $2, transform_input = NULL WHERE id = $3`,
      [JSON.stringify(w.headers), w.body === undefined ? null : Buffer.from(w.body, 'utf8'), w.id],
    );
    return (rowCount ?? 0) > 0;
  }

  async getDelivery(id: string): Promise<DeliveryRecord | undefined> {
    const { rows } = await this.pool.query(`SELECT ${COLUMNS} FROM ${this.t.deliveries} WHERE id = $1`, [id]);
    return rows[0] && toRecord(rows[0] as Row, this.secrets);
  }

  async listDeliveries(hookId: string, query: DeliveryQuery = {}): Promise<DeliveryRecord[]> {
    const f = deliveryListFilter(hookId, query, PG_FILTER);
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM ${this.t.deliveries} WHERE ${f.where} ORDER BY id DESC LIMIT $${f.values.length + 1}`,
      [...f.values, query.limit ?? null],
    );
    return rows.map((r) => toRecord(r as Row, this.secrets));
  }

  async listAttempts(deliveryId: string): Promise<AttemptRecord[]> {
    const { rows } = await this.pool.query(
      'SELECT delivery_id, attempt, hook_id, time, status, latency_ms, error, response, rate_wait_ms ' +
        `FROM ${this.t.attempts} WHERE delivery_id = $1 ORDER BY attempt`,
      [deliveryId],
    );
    return rows.map((r: Row) =>
      attemptFromRow(r, r.response === null ? null : (r.response as Buffer).toString('utf8')),
    );
  }

  async pendingDeliveries(): Promise<DeliveryRecord[]> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM ${this.t.deliveries} WHERE status = 'pending' ORDER BY seq`,
    );
    return rows.map((r) => toRecord(r as Row, this.secrets));
  }

  /**
   * Claims pending deliveries nobody holds, or whose holder's lease has run out. `SKIP LOCKED`
   * lets several instances claim at once without waiting on each other or claiming a row twice.
   */
  async claimPending(limit: number): Promise<DeliveryRecord[]> {
    const dead = await this.pool.query<{ id: string }>(
      'SELECT id FROM hookd_instances WHERE lease_until < clock_timestamp()',
    );
    const { rows } = await this.pool.query(
      `UPDATE ${this.t.deliveries} d SET lease_owner = $1 WHERE d.seq IN (` +
        `SELECT seq FROM ${this.t.deliveries} WHERE status = 'pending' ` +
        'AND (lease_owner IS NULL OR lease_owner = ANY($2::text[])) LIMIT $3 FOR UPDATE SKIP LOCKED) ' +
        `RETURNING ${COLUMNS}`,
      [this.lease.id, dead.rows.map((r) => r.id), limit],
    );
    return rows.map((r) => toRecord(r as Row, this.secrets));
  }

  async releasePending(): Promise<number> {
    const r = await this.pool.query(
      `UPDATE ${this.t.deliveries} SET lease_owner = NULL WHERE lease_owner = $1 AND status = 'pending'`,
      [this.lease.id],
    );
    return r.rowCount ?? 0;
  }

  async getSecret(hookId: string): Promise<HookSecretRecord | undefined> {
    const { rows } = await this.pool.query(
      `SELECT hook_id, secret, previous, previous_valid_until FROM ${this.t.secrets} WHERE hook_id = $1`,
      [hookId],
    );
    return rows[0] && secretFromRow(rows[0] as Row, this.secrets);
  }

  async putSecret(s: HookSecretRecord): Promise<void> {
    const sealed = sealRecord(this.secrets, s);
    await this.pool.query(
      `INSERT INTO ${this.t.secrets} (hook_id, secret, previous, previous_valid_until) VALUES ($1, $2, $3, $4) ` +
        'ON CONFLICT (hook_id) DO UPDATE SET secret = excluded.secret, previous = excluded.previous, ' +
        'previous_valid_until = excluded.previous_valid_until',
      [s.hookId, sealed.secret, sealed.previous, s.previousValidUntil],
    );
  }

  async createSecret(s: HookSecretRecord): Promise<HookSecretRecord> {
    const sealed = sealRecord(this.secrets, s);
    const { rows } = await this.pool.query(
      `INSERT INTO ${this.t.secrets} (hook_id, secret, previous, previous_valid_until) VALUES ($1, $2, $3, $4) ` +
        'ON CONFLICT (hook_id) DO NOTHING RETURNING hook_id, secret, previous, previous_valid_until',
      [s.hookId, sealed.secret, sealed.previous, s.previousValidUntil],
    );
    if (rows[0]) return secretFromRow(rows[0] as Row, this.secrets);
    // Another instance's secret won; read it in a statement of its own, which sees its commit.
    const existing = await this.getSecret(s.hookId);
    if (existing) return existing;
    // Deleted in between (the hook went away): nothing to agree on any more.
    return { ...s };
  }

  async deleteSecret(hookId: string): Promise<boolean> {
    const r = await this.pool.query(`DELETE FROM ${this.t.secrets} WHERE hook_id = $1`, [hookId]);
    return (r.rowCount ?? 0) > 0;
  }

  async credentialRows(after: string, limit: number): Promise<CredentialRow[]> {
    const { rows } = await this.pool.query<CredentialRow>(
      `SELECT id, hook_id AS "hookId", url AS text FROM ${this.t.deliveries} WHERE id > $1 AND ${URL_WITH_CREDENTIALS('url', 'strpos')} ORDER BY id LIMIT $2`,
      [after, limit],
    );
    return rows;
  }

  async replaceCredentialRow(row: CredentialRow, text: string): Promise<boolean> {
    const r = await this.pool.query(`UPDATE ${this.t.deliveries} SET url = $1 WHERE id = $2 AND url = $3`, [
      text,
      row.id,
      row.text,
    ]);
    return (r.rowCount ?? 0) > 0;
  }

  async storedSecrets(after: string, limit: number): Promise<StoredSecretRow[]> {
    const { rows } = await this.pool.query(
      `SELECT hook_id, secret, previous FROM ${this.t.secrets} WHERE hook_id > $1 ORDER BY hook_id LIMIT $2`,
      [after, limit],
    );
    return (rows as Row[]).map(storedSecretFromRow);
  }

  async replaceStoredSecret(before: StoredSecretRow, next: StoredSecretRow): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE ${this.t.secrets} SET secret = $1, previous = $2 ` +
        'WHERE hook_id = $3 AND secret = $4 AND previous IS NOT DISTINCT FROM $5',
      [next.secret, next.previous, before.hookId, before.secret, before.previous],
    );
    return (r.rowCount ?? 0) > 0;
  }

  /**
   * Removes old and surplus finished deliveries, at most `rule.limit` per call. One instance at a
   * time (an advisory lock): the others find it taken and return 0 for this round.
   */
  async prune(rule: RetentionRule): Promise<number> {
    const d = this.t.deliveries;
    const result = await this.db.transaction(async (c) => {
      const lock = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1, $2) AS ok', [
        LOCK_CLASS,
        this.pruneLock,
      ]);
      if (!lock.rows[0]!.ok) return { removed: 0, complete: false };
      const victims = new Map<number, string>();
      const young = await c.query<{ seq: number }>(
        `SELECT seq FROM ${d} WHERE created >= $1 ORDER BY seq LIMIT 1`,
        [rule.olderThan],
      );
      const bound = young.rows[0]?.seq ?? Number.MAX_SAFE_INTEGER;
      const old = await c.query<{ seq: number; id: string }>(
        `SELECT seq, id FROM ${d} WHERE seq < $1 AND status <> 'pending' ORDER BY seq LIMIT $2`,
        [bound, rule.limit],
      );
      for (const r of old.rows) victims.set(r.seq, r.id);
      // The count rule only needs checking for hooks that received deliveries since the last
      // complete run, except on the first run, which cannot know what was inserted before.
      const hooks = this.prunedOnce
        ? [...this.touched]
        : (
            await c.query<{ hook_id: string }>(
              `SELECT hook_id FROM ${d} GROUP BY hook_id HAVING count(*) > $1`,
              [rule.maxPerHook],
            )
          ).rows.map((r) => r.hook_id);
      for (const hookId of hooks) {
        if (victims.size >= rule.limit) break;
        const cutoff = await c.query<{ id: string }>(
          `SELECT id FROM ${d} WHERE hook_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2`,
          [hookId, rule.maxPerHook],
        );
        if (!cutoff.rows[0]) continue;
        const beyond = await c.query<{ seq: number; id: string }>(
          `SELECT seq, id FROM ${d} WHERE hook_id = $1 AND id <= $2 AND status <> 'pending' LIMIT $3`,
          [hookId, cutoff.rows[0].id, rule.limit - victims.size + 1],
        );
        for (const r of beyond.rows) {
          if (victims.size >= rule.limit) break;
          victims.set(r.seq, r.id);
        }
      }
      if (victims.size > 0) {
        await c.query(`DELETE FROM ${this.t.attempts} WHERE delivery_id = ANY($1::text[])`, [
          [...victims.values()],
        ]);
        await c.query(`DELETE FROM ${d} WHERE seq = ANY($1::int8[])`, [[...victims.keys()]]);
      }
      return { removed: victims.size, complete: victims.size < rule.limit };
    });
    // A run cut short by the limit leaves the list as it is: the caller calls again.
    if (result.complete) {
      this.touched.clear();
      this.prunedOnce = true;
    }
    return result.removed;
  }
}

function toRecord(r: Row, codec: SecretCodec): DeliveryRecord {
  return deliveryFromRow(r, r.body === null ? undefined : (r.body as Buffer).toString('utf8'), codec);
}
