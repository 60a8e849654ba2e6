/**
 * One hookd instance's membership of a cluster on PostgreSQL: its row in `hookd_instances`, the
 * lease on the deliveries it holds (renewed by a heartbeat, in database time), and the "someone
 * is running" lock that decides when the whole cluster has restarted (`Persist: false` hooks go
 * then, docs/DECISIONS.md "Cluster (PostgreSQL)").
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';
import type { Logger } from 'pino';
import { LOCK_CLASS, LOCKS } from '../store/index.js';
import type { LeaseIdentity, PgDatabase } from '../store/postgres/index.js';

/** A new instance id: `i_` and 64 random bits. */
export function newInstanceId(): string {
  return `i_${randomBytes(8).toString('hex')}`;
}

/** The UNLOGGED tables of `Persist: false` hooks and their deliveries. */
const EPHEMERAL_TABLES = ['eph_hooks', 'eph_deliveries', 'eph_delivery_attempts', 'eph_hook_secrets'];

export interface ClusterMemberOptions {
  db: PgDatabase;
  /** The identity the delivery stores write leases with; renamed when the lease is lost. */
  lease: LeaseIdentity;
  leaseMs: number;
  log: Logger;
  /**
   * The lease ran out before it was renewed (the database was out of reach, or the process
   * stalled): other instances may already be sending its deliveries, so whatever this one still
   * holds must be let go. It carries on under a new id once it can register one.
   */
  onLeaseLost?: (oldId: string) => void;
}

export class ClusterMember {
  private timer: NodeJS.Timeout | undefined;
  /** `performance.now()` when the last renewal that succeeded was sent. */
  private renewedAt = 0;
  private renewing = false;
  private lost = false;
  private joined = false;
  private stopped = false;

  constructor(private readonly opts: ClusterMemberOptions) {
    // Every (re)connection of the listening session holds the "running" lock for as long as it lives.
    opts.db.listener.onSession(async (client: pg.Client) => {
      if (this.joined)
        await client.query('SELECT pg_advisory_lock_shared($1, $2)', [LOCK_CLASS, LOCKS.alive]);
    });
  }

  get id(): string {
    return this.opts.lease.id;
  }

  /** How often the lease is renewed: a quarter of it, so that two lost heartbeats do not lose it. */
  get heartbeatMs(): number {
    return Math.max(250, Math.floor(this.opts.leaseMs / 4));
  }

  /**
   * Registers this instance, under the start-up lock so that instances starting together see each
   * other. When no other instance is running (the whole cluster had stopped, or this is its first
   * start), the `Persist: false` hooks and deliveries of the previous run are cleared: for a
   * cluster, "a restart of the service" is a restart of all of it. Resolves to whether it was so.
   */
  async join(): Promise<{ first: boolean }> {
    const { db, log } = this.opts;
    const listener = db.listener;
    await listener.start();
    const first = await db.exclusively(async () => {
      // Exclusive succeeds only if no other session holds the lock shared: nobody else runs.
      const alone = (
        await listener.query('SELECT pg_try_advisory_lock($1, $2) AS ok', [LOCK_CLASS, LOCKS.alive])
      ).rows[0].ok as boolean;
      if (alone) {
        await db.pool.query(`TRUNCATE ${EPHEMERAL_TABLES.join(', ')}`);
      }
      await listener.query('SELECT pg_advisory_lock_shared($1, $2)', [LOCK_CLASS, LOCKS.alive]);
      if (alone) await listener.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_CLASS, LOCKS.alive]);
      this.joined = true;
      await this.register(this.opts.lease.id);
      return alone;
    });
    log.info(
      {
        instance: this.id,
        leaseMs: this.opts.leaseMs,
        first,
        ...(first && { cleared: 'Persist: false hooks and their deliveries of the previous run' }),
      },
      first ? 'cluster: first instance to start; joined' : 'cluster: joined the running instances',
    );
    this.renewedAt = performance.now();
    this.timer = setInterval(() => this.beat(), this.heartbeatMs);
    this.timer.unref();
    return { first };
  }

  /** Instances whose lease is current (this one included), for logs and metrics. */
  async liveInstances(): Promise<number> {
    const { rows } = await this.opts.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM hookd_instances WHERE lease_until >= clock_timestamp()',
    );
    return rows[0]!.n;
  }

  /** Leaves the cluster: no more heartbeats, and the row goes (call after letting go of the deliveries). */
  async leave(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.opts.db.pool
      .query('DELETE FROM hookd_instances WHERE id = $1', [this.id])
      .catch((err: Error) => {
        this.opts.log.warn(
          { err: err.message },
          'cluster: could not remove this instance from hookd_instances',
        );
      });
  }

  private async register(id: string): Promise<void> {
    await this.opts.db.pool.query(
      "INSERT INTO hookd_instances (id, host, pid, lease_until) VALUES ($1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond')",
      [id, hostname(), process.pid, this.opts.leaseMs],
    );
  }

  private beat(): void {
    if (this.stopped) return;
    // Measured on this side: a heartbeat stuck on a dead connection must not count as renewal.
    if (!this.lost && performance.now() - this.renewedAt > this.opts.leaseMs)
      this.leaseLost('no heartbeat got through');
    if (this.renewing) return;
    this.renewing = true;
    const sent = performance.now();
    const work = this.lost ? this.rejoin() : this.renew(sent);
    work
      .catch((err: Error) => {
        this.opts.log.warn({ err: err.message, instance: this.id }, 'cluster: heartbeat failed');
      })
      .finally(() => {
        this.renewing = false;
      });
  }

  private async renew(sent: number): Promise<void> {
    // An expired lease is not renewed: another instance may have taken the deliveries over.
    const r = await this.opts.db.pool.query(
      "UPDATE hookd_instances SET lease_until = clock_timestamp() + $2 * interval '1 millisecond' " +
        'WHERE id = $1 AND lease_until >= clock_timestamp()',
      [this.id, this.opts.leaseMs],
    );
    if (this.lost || this.stopped) return;
    if ((r.rowCount ?? 0) === 1) this.renewedAt = sent;
    else this.leaseLost('the lease had run out');
  }

  private leaseLost(why: string): void {
    if (this.lost) return;
    this.lost = true;
    this.opts.log.error(
      { instance: this.id, leaseMs: this.opts.leaseMs, why },
      'cluster: this instance lost its lease; other instances take over its deliveries, and it carries on under a new id',
    );
    this.opts.onLeaseLost?.(this.id);
  }

  /** Registers a new id first, so that nothing is ever written under an id nobody can see. */
  private async rejoin(): Promise<void> {
    const next = newInstanceId();
    const sent = performance.now();
    await this.register(next);
    const old = this.opts.lease.id;
    this.opts.lease.id = next;
    this.renewedAt = sent;
    this.lost = false;
    this.opts.log.warn({ instance: next, previous: old }, 'cluster: rejoined under a new instance id');
  }
}
