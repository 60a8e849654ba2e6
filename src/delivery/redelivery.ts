/**
 * Redelivery of one delivery by id (`POST /deliveries/{id}/redeliver`): queued again with the
 * same Id for a new round of the schedule, or brought forward when pending. Many at once
 * is bulk-redelivery.ts.
 */

import type { Logger } from 'pino';
import type { LiveDeliveries } from '../ordering/index.js';
import type { DeliveryRecord } from '../store/index.js';
import { type BulkRedelivery, type RedeliveryFilter, redeliverBulk } from './bulk-redelivery.js';
import { Delivery } from './delivery.js';
import type { DeliveryLog } from './delivery-log.js';
import type { Outbox } from './outbox.js';
import type { Scheduler } from './scheduler.js';

/** What redelivery works on: the pipeline's deliveries in memory, its log and outbox. */
export interface RedeliveryHost {
  readonly live: LiveDeliveries<Delivery>;
  readonly log: DeliveryLog;
  readonly outbox: Outbox;
  readonly scheduler: Scheduler<Delivery>;
  readonly logger: Logger;
  /** Throws CONFLICT when the hook is disabled. */
  assertActive(hookId: string): void;
  /** Starts a new round of the schedule for a finished delivery. */
  requeue(d: Delivery, now: number): void;
  /** Puts a pending delivery where it waits. */
  enqueue(d: Delivery, now: number): void;
}

/** Resolves once the change is recorded; undefined when there is no such delivery. */
export async function redeliverOne(p: RedeliveryHost, id: string): Promise<DeliveryRecord | undefined> {
  let d = p.live.get(id);
  if (d === undefined) {
    const found = await p.log.get(id);
    if (!found) return undefined;
    d = p.live.get(id);
    // Pending but not held here: another instance of the cluster holds it and sends it on
    // its schedule; queueing it here as well would send it twice.
    if (d === undefined && found.record.status === 'pending') return found.record;
    if (d === undefined) {
      p.assertActive(found.record.hookId);
      d = Delivery.fromRecord(found.record, found.persist, p.outbox.targets);
      p.requeue(d, Date.now());
      p.live.add(d);
      await p.outbox.commitFor(d).flush();
      p.enqueue(d, Date.now());
      return d;
    }
  }
  if (d.status === 'pending' && !d.active) {
    p.assertActive(d.hookId);
    p.scheduler.remove(d);
    d.nextAttempt = Date.now();
    p.outbox.update(d);
    await p.outbox.commitFor(d).flush();
    p.enqueue(d, Date.now());
  }
  return d;
}

/** Queues again a hook's deliveries that match the filter (bulk-redelivery.ts). */
export async function redeliverMany(
  p: RedeliveryHost,
  hookId: string,
  filter: RedeliveryFilter,
): Promise<BulkRedelivery> {
  p.assertActive(hookId);
  return redeliverBulk(
    {
      log: p.log,
      logger: p.logger,
      isHeld: (id) => p.live.has(id),
      takeBack: (record, persist, now) => {
        const d = Delivery.fromRecord(record, persist, p.outbox.targets);
        p.requeue(d, now);
        p.live.add(d);
        return d;
      },
      flush: () => p.outbox.flush(),
      enqueue: (d, now) => p.enqueue(d, now),
    },
    hookId,
    filter,
  );
}
