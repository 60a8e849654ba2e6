/**
 * The console's rollups as the SQLite writer keeps them (sqlite-aggregates.ts has the tables):
 * inside the batch's transaction it counts what the batch changes in memory and adds that to the
 * rollups in a few upserts per batch. A change is counted from the delivery's status before it,
 * with its owner, hook and creation: the writer keeps them for the pending deliveries it wrote
 * (nearly every delivery changed is one: an outcome follows its insert) and reads the others, one
 * multi-row read per chunk.
 */
import type Database from 'better-sqlite3';
import type { DeliveryBatch, DeliveryState, DeliveryStatus } from '../delivery-store.js';
import { RollupDelta, type RollupKey } from '../rollup-delta.js';
import { CHUNK, SizedStatements } from './sized-statements.js';

interface Known extends RollupKey {
  status: DeliveryStatus;
}

/**
 * Pending deliveries kept at most. Each costs about 200 bytes; past this (a receiver down for
 * long) the writer reads their rows, as it does after a restart.
 */
const OPEN_MAX = 100_000;

type Row = { id: string; status: DeliveryStatus; owner: string; hook_id: string; created: number };

const lookupSql = (n: number): string =>
  'SELECT id, status, owner, hook_id, created FROM deliveries WHERE id IN ' +
  `(${new Array<string>(n).fill('?').join(', ')})`;

export class SqliteRollups {
  private readonly lookup: SizedStatements;
  private readonly s;
  /**
   * The pending deliveries this writer stored, by Id, as stored. Only the batch's transaction
   * deletes deliveries (a hook's, here) and prunes only finished ones, so an entry stays true
   * while this connection is the file's one writer: `forget` when another has committed, or when
   * a batch failed.
   */
  private readonly open = new Map<string, Known>();

  constructor(db: Database.Database) {
    this.lookup = new SizedStatements(db, lookupSql);
    this.s = {
      owner: db.prepare(
        'INSERT INTO stats_owner (owner, bucket, succeeded, failed, attempts, attempts_ok) VALUES (?, ?, ?, ?, ?, ?) ' +
          'ON CONFLICT (owner, bucket) DO UPDATE SET succeeded = succeeded + excluded.succeeded, ' +
          'failed = failed + excluded.failed, attempts = attempts + excluded.attempts, ' +
          'attempts_ok = attempts_ok + excluded.attempts_ok',
      ),
      latency: db.prepare(
        'INSERT INTO stats_latency (owner, bucket, bin, n) VALUES (?, ?, ?, ?) ' +
          'ON CONFLICT (owner, bucket, bin) DO UPDATE SET n = n + excluded.n',
      ),
      hook: db.prepare(
        'INSERT INTO stats_hook (hook_id, bucket, succeeded, failed) VALUES (?, ?, ?, ?) ' +
          'ON CONFLICT (hook_id, bucket) DO UPDATE SET succeeded = succeeded + excluded.succeeded, ' +
          'failed = failed + excluded.failed',
      ),
    };
  }

  /**
   * What the batch changes in the rollups, in the order the store applies it (inserts, states,
   * attempts). Call inside the transaction, before the batch is written: a state's change is
   * counted from the status stored before it. A state or attempt of a delivery not stored (nor
   * inserted by the batch) changes nothing, as its write does not. `updates` are the batch's
   * states, one per delivery (`dedupeUpdates`), as the store writes them.
   */
  count(batch: DeliveryBatch, updates: readonly DeliveryState[]): RollupDelta {
    const delta = new RollupDelta();
    const known = new Map<string, Known>();
    for (const r of batch.inserts) {
      known.set(r.id, { owner: r.owner, hookId: r.hookId, created: r.created, status: r.status });
      delta.outcome(r, undefined, r.status);
    }
    this.read(known, [...updates.map((u) => u.id), ...batch.attempts.map((a) => a.deliveryId)]);
    for (const u of updates) {
      const k = known.get(u.id);
      if (k === undefined) continue;
      delta.outcome(k, k.status, u.status);
      k.status = u.status;
    }
    for (const a of batch.attempts) {
      const k = known.get(a.deliveryId);
      if (k !== undefined) delta.attempt(k.owner, a);
    }
    if (batch.deletedHooks.length > 0) this.open.clear();
    else this.keep(known);
    return delta;
  }

  /** Drops what the writer knows of pending deliveries: another connection wrote, or a batch failed. */
  forget(): void {
    this.open.clear();
  }

  /** The batch's deliveries as it leaves them: the pending ones are kept, the finished let go. */
  private keep(known: Map<string, Known>): void {
    for (const [id, k] of known) {
      if (k.status !== 'pending') this.open.delete(id);
      else if (this.open.size < OPEN_MAX || this.open.has(id)) this.open.set(id, k);
    }
  }

  /** Adds the counts to the rollup tables; inside the batch's transaction, after its writes. */
  write(delta: RollupDelta): void {
    for (const o of delta.owners.values())
      this.s.owner.run(o.owner, o.bucket, o.succeeded, o.failed, o.attempts, o.attemptsOk);
    for (const l of delta.latency.values()) this.s.latency.run(l.owner, l.bucket, l.bin, l.n);
    for (const h of delta.hooks.values()) this.s.hook.run(h.hookId, h.bucket, h.succeeded, h.failed);
  }

  /** Finds the stored state of the deliveries not yet known: kept, or read (one read per chunk). */
  private read(known: Map<string, Known>, ids: readonly string[]): void {
    const wanted = new Set<string>();
    for (const id of ids) {
      if (known.has(id)) continue;
      const k = this.open.get(id);
      if (k !== undefined) known.set(id, k);
      else wanted.add(id);
    }
    if (wanted.size === 0) return;
    const all = [...wanted];
    for (let at = 0; at < all.length; at += CHUNK) {
      const part = all.slice(at, at + CHUNK);
      for (const r of this.lookup.get(part.length).all(part) as Row[])
        known.set(r.id, { owner: r.owner, hookId: r.hook_id, created: r.created, status: r.status });
    }
  }
}
