/**
 * Redelivery of one delivery by id (`POST /deliveries/{id}/redeliver`): queued again with the
 * same Id for a new round of the schedule, or brought forward when pending. Many at once
 * is bulk-redelivery.ts.
 */

import type { Logger } from 'pino';
import { HookdError } from '../errors/index.js';
import type { LiveDeliveries } from '../ordering/index.js';
import type { DeliveryRecord, RequestRewrite, StoredRequest } from '../store/index.js';
import { type BulkRedelivery, type RedeliveryFilter, redeliverBulk } from './bulk-redelivery.js';
import { Delivery } from './delivery.js';
import type { DeliveryLog } from './delivery-log.js';
import type { Outbox } from './outbox.js';
import type { Scheduler } from './scheduler.js';

/**
 * Runs the hook's Transform, as the hook is now, on the event a failed Transform was given (JSON
 * text) and the request as rendered: the request to send, or why there is none.
 */
export type Retransform = (
  hookId: string,
  input: string,
  request: StoredRequest,
) => Promise<{ headers: Record<string, string>; body?: string } | { error: string }>;

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
  /** The hook's Transform again, for a delivery its Transform failed; absent: none is run. */
  retransform(): Retransform | undefined;
}

/**
 * A finished delivery taken back from the store for a new round. One its Transform failed has
 * the Transform run again first: its request becomes what the hook's Transform makes of it now,
 * or, when that fails too, it stays failed with the new cause (recorded, and answered as `error`).
 */
async function takeBack(
  p: RedeliveryHost,
  record: DeliveryRecord,
  persist: boolean,
): Promise<Delivery | { error: string }> {
  const run = p.retransform();
  let r = record;
  if (r.transformInput !== undefined && run !== undefined) {
    const out = await run(r.hookId, r.transformInput, r.request);
    const store = persist ? p.outbox.durable.store : p.outbox.ephemeral.store;
    if ('error' in out) {
      const d = Delivery.fromRecord(r, persist, p.outbox.targets);
      d.lastError = out.error;
      p.outbox.update(d);
      await p.outbox.commitFor(d).flush();
      return { error: out.error };
    }
    const rewrite: RequestRewrite = { id: r.id, headers: out.headers };
    if (out.body !== undefined) rewrite.body = out.body;
    await store.rewriteRequest(rewrite);
    const request: StoredRequest = { ...r.request, headers: out.headers };
    if (out.body !== undefined) request.body = out.body;
    else delete request.body;
    const { transformInput: _dropped, ...rest } = r;
    r = { ...rest, request };
    // Another redelivery of it may have taken it back while the Transform ran: it goes once.
    const held = p.live.get(r.id);
    if (held !== undefined) return held;
  }
  const d = Delivery.fromRecord(r, persist, p.outbox.targets);
  p.requeue(d, Date.now());
  p.live.add(d);
  return d;
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
      const taken = await takeBack(p, found.record, found.persist);
      if ('error' in taken) {
        throw new HookdError(
          'CONFLICT',
          `delivery ${id} is not sent: its hook's Transform failed again (${taken.error}); it stays failed with that cause, fix the hook and redeliver it`,
        );
      }
      await p.outbox.commitFor(taken).flush();
      p.enqueue(taken, Date.now());
      return taken;
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
      takeBack: async (record, persist) => {
        const d = await takeBack(p, record, persist);
        return 'error' in d ? undefined : d;
      },
      flush: () => p.outbox.flush(),
      enqueue: (d, now) => p.enqueue(d, now),
    },
    hookId,
    filter,
  );
}
