/**
 * Takes over the deliveries other instances can no longer send: those an instance let go of at a
 * graceful stop, and those of an instance whose lease ran out (it died, or lost the database).
 * Every instance runs one; `FOR UPDATE SKIP LOCKED` in the claim shares the work between them
 * without any delivery being claimed twice.
 */
import type { Logger } from 'pino';
import type { DeliveryRecord, DeliverySharing } from '../store/index.js';
import type { PgDatabase } from '../store/postgres/index.js';

export interface ReclaimerOptions {
  db: PgDatabase;
  /** The shared delivery stores (their sharing), with the `persist` flag their deliveries carry. */
  stores: { store: { sharing: DeliverySharing }; persist: boolean }[];
  /** Hands claimed deliveries to the pipeline (`DeliveryPipeline.adopt`). */
  adopt: (records: readonly DeliveryRecord[], persist: boolean) => number;
  intervalMs: number;
  log: Logger;
  /** Deliveries claimed per statement (default 500). */
  batch?: number;
  /** How often leases of ids that are in no instance row are freed, ms (default 60 s). */
  sweepMs?: number;
}

export class Reclaimer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastSweep = performance.now();

  constructor(private readonly opts: ReclaimerOptions) {}

  start(): void {
    this.timer = setInterval(() => {
      void this.tick();
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  /** One round: claim until nothing is left, then forget dead instances that hold nothing. */
  tick(): Promise<void> {
    this.running ??= this.round()
      .catch((err: Error) =>
        this.opts.log.warn({ err: err.message }, 'cluster: reclaiming deliveries failed'),
      )
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private async round(): Promise<void> {
    const batch = this.opts.batch ?? 500;
    let taken = 0;
    for (const { store, persist } of this.opts.stores) {
      for (;;) {
        if (this.stopped) return;
        const records = await store.sharing.claim(batch);
        taken += this.opts.adopt(records, persist);
        if (records.length < batch) break;
      }
    }
    if (taken > 0) this.opts.log.info({ deliveries: taken }, 'cluster: took over pending deliveries');
    const pool = this.opts.db.pool;
    // A dead instance's row stays until its deliveries are all taken over: it is what marks them claimable.
    const gone = await pool.query<{ id: string }>(
      'DELETE FROM hookd_instances i WHERE i.lease_until < clock_timestamp() ' +
        "AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.lease_owner = i.id AND d.status = 'pending') " +
        "AND NOT EXISTS (SELECT 1 FROM eph_deliveries d WHERE d.lease_owner = i.id AND d.status = 'pending') " +
        'RETURNING id',
    );
    if (gone.rows.length > 0)
      this.opts.log.info(
        { instances: gone.rows.map((r) => r.id) },
        'cluster: instances whose lease ran out were removed',
      );
    if (performance.now() - this.lastSweep >= (this.opts.sweepMs ?? 60_000)) {
      this.lastSweep = performance.now();
      await this.sweep();
    }
  }

  /**
   * Frees pending deliveries leased to an id that has no instance row: only possible when an
   * instance's write raced with the removal of its expired row. Cheap insurance, rarely run.
   */
  private async sweep(): Promise<void> {
    for (const table of ['deliveries', 'eph_deliveries']) {
      const r = await this.opts.db.pool.query(
        `UPDATE ${table} d SET lease_owner = NULL WHERE d.status = 'pending' AND d.lease_owner IS NOT NULL ` +
          'AND NOT EXISTS (SELECT 1 FROM hookd_instances i WHERE i.id = d.lease_owner)',
      );
      if ((r.rowCount ?? 0) > 0)
        this.opts.log.warn(
          { table, deliveries: r.rowCount },
          'cluster: freed deliveries leased to unknown instances',
        );
    }
  }
}
