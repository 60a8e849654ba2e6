import type { Logger } from 'pino';
import type { DeliveryQuery, DeliveryRecord, DeliveryStatus } from '../store/index.js';
import type { Delivery } from './delivery.js';
import type { DeliveryLog } from './delivery-log.js';

/** Which of a hook's deliveries a bulk redelivery takes (docs/API.md "Deliveries"). */
export interface RedeliveryFilter {
  /** Only deliveries in this state; absent: every delivery of the hook. */
  status?: DeliveryStatus;
  since?: number;
  until?: number;
  /** Count what would be queued, queue nothing. */
  dryRun?: boolean;
}

/** What a bulk redelivery did (or, in a dry run, would do). */
export interface BulkRedelivery {
  /** Deliveries queued again (dry run: that would be). */
  queued: number;
  /** Deliveries that matched but are still pending: they go on their own schedule, left alone. */
  pending: number;
  /** Deliveries whose hook's Transform failed again: not queued, failed with the new cause. */
  failed: number;
}

/** What a bulk redelivery needs of the pipeline. */
export interface BulkRedeliveryPort {
  log: DeliveryLog;
  logger: Logger;
  /** The delivery is held in memory (being sent or waiting for its next attempt). */
  isHeld(id: string): boolean;
  /**
   * Takes a finished delivery back for a new round of the retry schedule; not yet enqueued.
   * Undefined: its hook's Transform failed again, and it stays failed with the new cause.
   */
  takeBack(record: DeliveryRecord, persist: boolean): Promise<Delivery | undefined>;
  /** Resolves once what `takeBack` changed is recorded. */
  flush(): Promise<void>;
  enqueue(d: Delivery, now: number): void;
}

const PAGE = 1000;

/**
 * Queues again every delivery of a hook that matches the filter (default: all of them), each
 * for a new round of its retry schedule. Pending deliveries are counted and left as they are.
 * Resolves once the change is recorded.
 */
export async function redeliverBulk(
  port: BulkRedeliveryPort,
  hookId: string,
  filter: RedeliveryFilter,
): Promise<BulkRedelivery> {
  const query: DeliveryQuery = { limit: PAGE };
  if (filter.status !== undefined) query.status = filter.status;
  if (filter.since !== undefined) query.since = filter.since;
  if (filter.until !== undefined) query.until = filter.until;
  const queued: Delivery[] = [];
  let wouldQueue = 0;
  let pending = 0;
  let failed = 0;
  for (;;) {
    const page = await port.log.list(hookId, query);
    for (const r of page.items) {
      if (port.isHeld(r.id) || r.status === 'pending') {
        pending++;
        continue;
      }
      if (filter.dryRun) {
        wouldQueue++;
        continue;
      }
      const found = await port.log.get(r.id);
      if (!found) continue;
      if (port.isHeld(r.id)) {
        pending++;
        continue;
      }
      const d = await port.takeBack(found.record, found.persist);
      if (d === undefined) failed++;
      else queued.push(d);
    }
    if (page.next === undefined) break;
    query.after = page.next;
  }
  if (filter.dryRun) return { queued: wouldQueue, pending, failed: 0 };
  await port.flush();
  const later = Date.now();
  for (const d of queued) port.enqueue(d, later);
  if (queued.length > 0) port.logger.info({ hookId, count: queued.length }, 'deliveries queued again');
  return { queued: queued.length, pending, failed };
}
