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
import { Delivery, enqueue } from './delivery.js';
import type { DeliveryLog } from './delivery-log.js';
import type { Outbox } from './outbox.js';
import type { DeliveryPlans } from './plan/index.js';
import { firstDelay, type RetrySchedule } from './retry-policy.js';
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

/** The parts redelivery works on: the deliveries in memory, the log, the outbox, the scheduler, the plans. */
export interface RedeliveryParts {
  readonly live: LiveDeliveries<Delivery>;
  readonly log: DeliveryLog;
  readonly outbox: Outbox;
  readonly scheduler: Scheduler<Delivery>;
  readonly plans: DeliveryPlans;
  readonly logger: Logger;
  /** The schedule of plans without one of their own. */
  readonly schedule: RetrySchedule;
}

export class Redelivery {
  #retransform: Retransform | undefined;

  constructor(private readonly p: RedeliveryParts) {}

  /** How a redelivery runs a failed Transform again (the engine is made after the pipeline). */
  transformWith(run: Retransform): void {
    this.#retransform = run;
  }

  /** Resolves once the change is recorded; undefined when there is no such delivery. */
  async one(id: string): Promise<DeliveryRecord | undefined> {
    const p = this.p;
    let d = p.live.get(id);
    if (d === undefined) {
      const found = await p.log.get(id);
      if (!found) return undefined;
      d = p.live.get(id);
      // Pending but not held here: another instance of the cluster holds it and sends it on
      // its schedule; queueing it here as well would send it twice.
      if (d === undefined && found.record.status === 'pending') return found.record;
      if (d === undefined) {
        this.assertActive(found.record.hookId);
        const taken = await this.takeBack(found.record, found.persist);
        if ('error' in taken) {
          throw new HookdError(
            'CONFLICT',
            `delivery ${id} is not sent: its hook's Transform failed again (${taken.error}); it stays failed with that cause, fix the hook and redeliver it`,
          );
        }
        await p.outbox.commitFor(taken).flush();
        enqueue(p.scheduler, taken);
        return taken;
      }
    }
    if (d.status === 'pending' && !d.active) {
      this.assertActive(d.hookId);
      p.scheduler.remove(d);
      d.nextAttempt = Date.now();
      p.outbox.update(d);
      await p.outbox.commitFor(d).flush();
      enqueue(p.scheduler, d);
    }
    return d;
  }

  /** Queues again a hook's deliveries that match the filter (bulk-redelivery.ts). */
  async many(hookId: string, filter: RedeliveryFilter): Promise<BulkRedelivery> {
    const p = this.p;
    this.assertActive(hookId);
    return redeliverBulk(
      {
        log: p.log,
        logger: p.logger,
        isHeld: (id) => p.live.has(id),
        takeBack: async (record, persist) => {
          const d = await this.takeBack(record, persist);
          return 'error' in d ? undefined : d;
        },
        flush: () => p.outbox.flush(),
        enqueue: (d) => enqueue(p.scheduler, d),
      },
      hookId,
      filter,
    );
  }

  /**
   * A finished delivery taken back from the store for a new round. One its Transform failed has
   * the Transform run again first: its request becomes what the hook's Transform makes of it now,
   * or, when that fails too, it stays failed with the new cause (recorded, and answered as `error`).
   */
  private async takeBack(record: DeliveryRecord, persist: boolean): Promise<Delivery | { error: string }> {
    const p = this.p;
    const run = this.#retransform;
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
    this.requeue(d, Date.now());
    p.live.add(d);
    return d;
  }

  /** Starts a new round of the schedule for a finished delivery. */
  private requeue(d: Delivery, now: number): void {
    d.status = 'pending';
    d.roundStart = d.attempts;
    d.plan = this.p.plans.planOf(d.hookId);
    d.nextAttempt = now + firstDelay(d.plan.schedule ?? this.p.schedule);
    this.p.outbox.update(d);
  }

  /** Throws CONFLICT when the hook is disabled. */
  private assertActive(hookId: string): void {
    if (!this.p.plans.planOf(hookId).active) {
      throw new HookdError(
        'CONFLICT',
        `hook ${hookId} is disabled (its receiver answered 410 Gone), so nothing is delivered for it; replace the hook to enable it again (hookctl replace ID -f FILE, or PUT /hooks/{id})`,
      );
    }
  }
}
