/**
 * The delivery pipeline: what happens to a fired callback from the engine's `accept` to its last
 * attempt. Outbox (record first) → scheduler (timers for due attempts) → fairness limiter
 * (global and per-destination limits, circuit breaker) → attempt runner (signed, pinned, timed)
 * → outcome (retry policy) → delivery log and event bus. Each of those has a module of its own;
 * this class holds the deliveries in memory and the order of the steps.
 */

import pino, { type Logger } from 'pino';
import type { FiredEvent, FiredEventSink } from '../engine/index.js';
import { HookdError } from '../errors/index.js';
import type { LiveDeliveries } from '../ordering/index.js';
import { ReceiverPace } from '../pace/index.js';
import type { DeliveryQuery, DeliveryRecord } from '../store/index.js';
import type { Tracing } from '../tracing/index.js';
import { notSent } from './attempt-result.js';
import { AttemptRunner } from './attempt-runner.js';
import type { BulkRedelivery, RedeliveryFilter } from './bulk-redelivery.js';
import { Completion } from './completion.js';
import type { Delivery } from './delivery.js';
import { DeliveryEvents } from './delivery-events.js';
import { DEFAULT_RETENTION, DeliveryLog, type DeliveryPage } from './delivery-log.js';
import { type DeliveryDetail, DeliveryReader } from './delivery-reader.js';
import { type BreakerView, FairLimiter } from './fairness.js';
import {
  agreeOnFirstSecret,
  DEFAULT_ROTATION_GRACE_MS,
  HookSecrets,
  SigningSecrets,
} from './hook-secrets.js';
import { Intake } from './intake.js';
import { resolveLimits } from './limits.js';
import { Outbox } from './outbox.js';
import type { DeliveryPipelineOptions, PipelineStats } from './pipeline-options.js';
import type { DeliveryPlans } from './plan/index.js';
import { RateGate } from './rate-limit.js';
import { type RedeliveryHost, type Retransform, redeliverMany, redeliverOne } from './redelivery.js';
import { firstDelay, type RetrySchedule, retrySchedule } from './retry-policy.js';
import { Scheduler } from './scheduler.js';
import { DeliverySemantics } from './semantics.js';
import { Targets } from './targets.js';
import { heldByCircuit, transportsOf } from './transport-wiring.js';

export type { DeliveryDetail } from './delivery-reader.js';
export type { DeliveryLimits } from './limits.js';
export type { DeliveryPipelineOptions, PipelineStats } from './pipeline-options.js';

/**
 * Takes fired events from the engine and delivers them at least once, signed, within the
 * fairness limits, retrying on the schedule; keeps the delivery log; publishes every firing and
 * attempt on `events`.
 */
export class DeliveryPipeline implements FiredEventSink {
  readonly events: DeliveryEvents;
  readonly log: DeliveryLog;
  /** The delivery log as recorded so far (delivery-reader.ts): what the API's routes read. */
  readonly reads: DeliveryReader;
  /** The signing secrets (hook-secrets.ts): what the API's routes hand out and rotate. */
  readonly signing: SigningSecrets;
  /** Each receiver's adaptive concurrency limit (src/pace/): what metrics and pages show. */
  readonly pace: ReceiverPace;
  private readonly live: LiveDeliveries<Delivery>;
  // Ordering per key and endpoint verification (semantics.ts).
  private readonly semantics: DeliverySemantics;
  private readonly outbox: Outbox;
  private readonly scheduler: Scheduler<Delivery>;
  private readonly limiter: FairLimiter<Delivery>;
  private readonly runner: AttemptRunner;
  private readonly secrets: HookSecrets;
  private readonly schedule: RetrySchedule;
  private readonly plans: DeliveryPlans;
  private readonly logger: Logger;
  private readonly gate: RateGate;
  private readonly tracing: Tracing | undefined;
  private state: 'new' | 'running' | 'closing' | 'closed' = 'new';
  /** What redelivery works on (redelivery.ts). */
  private readonly redelivery: RedeliveryHost;
  private readonly intake: Intake;
  private readonly completion: Completion;
  #retransform: Retransform | undefined;

  constructor(opts: DeliveryPipelineOptions) {
    this.events = opts.events ?? new DeliveryEvents();
    this.logger = opts.logger ?? pino({ level: 'silent' });
    this.plans = opts.plans;
    this.schedule = retrySchedule(opts.schedule);
    this.tracing = opts.tracing;
    this.gate = new RateGate({
      allowedRate: (origin) => this.semantics.verifier?.rateFor(origin),
      later: (d) => this.scheduler.add(d),
      ...(opts.onRateWait && { onWait: opts.onRateWait }),
    });
    const limits = resolveLimits(opts.limits);
    const { registry, transports } = transportsOf(opts, limits, () => this.logger, this.reconnected);
    const targets = new Targets(registry, opts.plans, opts.sourceOf);
    this.pace = new ReceiverPace(limits.perEndpoint, limits.adaptive, (u) => targets.of(u.href).receiver);
    this.secrets = new HookSecrets(
      agreeOnFirstSecret(opts.durable),
      agreeOnFirstSecret(opts.ephemeral),
      opts.rotationGraceMs ?? DEFAULT_ROTATION_GRACE_MS,
    );
    this.runner = new AttemptRunner(
      {
        logger: this.logger,
        sending: () => this.state === 'running',
        complete: (d, start, r) => this.completion.complete(d, start, r),
        endUnsent: (d, reason) => this.completion.endUnsent(d, reason),
        done: (d, verdict, probe) => this.limiter.done(d, verdict, probe),
      },
      {
        ...{
          transports,
          secrets: this.secrets,
          tracing: this.tracing,
          pace: this.pace,
          auth: opts.auth,
        },
        ...{ userAgent: opts.userAgent ?? 'hookd', loopMark: opts.loopMark, plans: opts.plans },
      },
    );
    this.semantics = new DeliverySemantics(opts, {
      ...{ durable: opts.durable, ephemeral: opts.ephemeral, plans: opts.plans },
      transports,
      flush: () => this.outbox.flush(),
      release: (d) => this.enqueue(d, Date.now()),
      fail: (d, reason) => this.completion.endUnsent(d, reason),
    });
    this.live = this.semantics.live;
    this.outbox = new Outbox(opts.durable, opts.ephemeral, this.recorded, targets, {
      log: this.logger,
      health: opts.health,
      ...(opts.faultBuffer !== undefined && { bufferLimit: opts.faultBuffer }),
    });
    this.scheduler = new Scheduler<Delivery>(this.due);
    const heldBy = (d: Delivery, kind: string, key: string) => {
      d.heldBy = `${kind.replace('_', ' ')} ${key}`;
    };
    this.limiter = new FairLimiter<Delivery>(limits, this.runner.run, this.shed, Date.now, heldBy, this.pace);
    this.log = new DeliveryLog(
      opts.durable,
      opts.ephemeral,
      this.live,
      this.outbox,
      { ...DEFAULT_RETENTION, ...opts.retention },
      this.logger,
    );
    this.reads = new DeliveryReader(this.log, () => this.outbox.flush());
    this.signing = new SigningSecrets(this.secrets);
    this.intake = new Intake({
      ...{ live: this.live, outbox: this.outbox, scheduler: this.scheduler, events: this.events },
      ...{ tracing: this.tracing, logger: this.logger },
      closed: () => this.state === 'closed',
      firstDelay: this.firstDelay,
      enqueue: (d, now) => this.enqueue(d, now),
    });
    this.completion = new Completion({
      ...{ live: this.live, outbox: this.outbox, scheduler: this.scheduler, events: this.events },
      ...{ logger: this.logger, plans: this.plans },
      closed: () => this.state === 'closed',
      scheduleOf: (d) => this.scheduleOf(d),
    });
    this.redelivery = {
      ...{ live: this.live, log: this.log, outbox: this.outbox, scheduler: this.scheduler },
      logger: this.logger,
      assertActive: (hookId) => this.assertActive(hookId),
      requeue: (d, now) => this.requeue(d, now),
      enqueue: (d, now) => this.enqueue(d, now),
      retransform: () => this.#retransform,
    };
  }

  /** How a redelivery runs a failed Transform again (the engine is made after the pipeline). */
  transformWith(run: Retransform): void {
    this.#retransform = run;
  }

  /** Loads the pending deliveries of both stores and starts sending; due ones go at once. */
  async start(): Promise<void> {
    if (this.state !== 'new') return;
    const pending = await this.outbox.loadPending();
    for (const d of pending) {
      if (this.live.has(d.id)) continue;
      this.live.add(d);
      this.scheduler.add(d);
    }
    if (pending.length > 0) this.logger.info({ pending: pending.length }, 'resuming pending deliveries');
    this.state = 'running';
    this.scheduler.start();
    this.log.start();
  }

  /**
   * Records the fired callbacks (in the durable store for `Persist: true` hooks, in memory for
   * the others) and sends them once recorded. Never throws and never waits (intake.ts).
   */
  accept(events: FiredEvent[]): void {
    this.intake.accept(events, 'callback');
  }

  /** The door of operational notifications: recorded and sent as callbacks are (intake.ts). */
  readonly notifications: FiredEventSink = { accept: (events) => this.intake.accept(events, 'notification') };

  /** Takes over pending deliveries claimed from the store (intake.ts); returns how many. */
  adopt(records: readonly DeliveryRecord[], persist: boolean): number {
    return this.intake.adopt(records, persist);
  }

  /** Lets go of every pending delivery not being attempted, writing nothing (intake.ts). */
  release(): number {
    return this.intake.release();
  }

  /** A hook's signing secret was changed by another instance: the cached keys are dropped. */
  secretChanged(hookId: string): void {
    this.secrets.forget(hookId);
  }

  // The pipeline's reads and secrets, for its callers (tests, console, notifications).
  list(hookId: string, query?: DeliveryQuery): Promise<DeliveryPage> {
    return this.reads.list(hookId, query);
  }
  get(id: string): Promise<DeliveryRecord | undefined> {
    return this.reads.get(id);
  }
  getWithAttempts(id: string): Promise<DeliveryDetail | undefined> {
    return this.reads.getWithAttempts(id);
  }
  secretFor(hookId: string, persist = true): Promise<string> {
    return this.signing.secretFor(hookId, persist);
  }
  rotateSecret(hookId: string, persist = true): Promise<{ secret: string; previousValidUntil: number }> {
    return this.signing.rotateSecret(hookId, persist);
  }

  /**
   * Queues a delivery again, with the same Id (`webhook-id`), for a new round of the retry
   * schedule; a pending one is brought forward. Resolves once the change is recorded; undefined
   * when there is no such delivery. Throws CONFLICT when the hook is disabled.
   */
  async redeliver(id: string): Promise<DeliveryRecord | undefined> {
    return redeliverOne(this.redelivery, id);
  }

  /** Queues again a hook's deliveries that match the filter (bulk-redelivery.ts). */
  async redeliverBulk(hookId: string, filter: RedeliveryFilter = {}): Promise<BulkRedelivery> {
    return redeliverMany(this.redelivery, hookId, filter);
  }

  /**
   * A hook was deleted: its pending deliveries are cancelled and its log and secret removed.
   * `elsewhere`: another instance of a cluster deleted it and removes the stored rows itself;
   * here only what is held in memory goes.
   */
  hookDeleted(hookId: string, elsewhere = false): void {
    this.intake.cancelHook(hookId);
    this.secrets.forget(hookId);
    if (!elsewhere) this.outbox.deleteHook(hookId);
  }

  /** Counts for metrics and readiness. */
  stats(): PipelineStats {
    return {
      live: this.live.size,
      scheduled: this.scheduler.size,
      queued: this.limiter.queued,
      inFlight: this.limiter.inFlight,
      buffered: this.outbox.buffered,
      dropped: this.outbox.dropped,
      heldBack: this.limiter.heldCounts,
      durableStore: this.outbox.durable.storeTime,
    };
  }

  /** Attempts waiting for a slot, per host that has any (metrics). */
  waitingByHost = (): Iterable<{ host: string; waiting: number }> => this.limiter.waitingByHost();

  /** Endpoint verification, when any hook can ask for it. */
  get verifier(): DeliverySemantics['verifier'] {
    return this.semantics.verifier;
  }

  /** Keys with deliveries held behind their head, and those deliveries (metrics). */
  orderingStats(): ReturnType<DeliverySemantics['stats']> {
    return this.semantics.stats();
  }

  /** Per-endpoint and per-host circuit states (closed ones only while they count failures), for metrics. */
  breakers(): Iterable<BreakerView> {
    return this.limiter.breakers();
  }

  /** Resolves once everything so far is committed to the stores. */
  flush(): Promise<void> {
    return this.outbox.flush();
  }

  /**
   * Resolves once the callbacks fired so far are recorded (or, while a store refuses writes,
   * buffered), sharing the end-of-turn commit; never rejects. The proxy holds the end of a
   * response whose AfterCompletion hooks fired on this.
   */
  settled(): Promise<void> {
    return this.outbox.settled();
  }

  /**
   * Stops taking new attempts, gives those in flight up to `drainMs` to finish, aborts the rest
   * (they stay pending, like everything not yet attempted, and resume at the next start), and
   * commits every write. The stores stay open: they belong to the caller.
   */
  async close(drainMs = 5000): Promise<void> {
    if (this.state === 'closed' || this.state === 'closing') return;
    this.state = 'closing';
    this.semantics.close();
    this.scheduler.stop();
    this.limiter.pause();
    for (const d of this.limiter.drainQueued()) d.active = false;
    await this.log.stop();
    await this.runner.drain(drainMs);
    await this.outbox.flush().catch(() => undefined);
    this.outbox.stop();
    this.state = 'closed';
    await this.runner.destroy().catch(() => undefined);
  }

  private readonly firstDelay = (d: Delivery): number => firstDelay(this.scheduleOf(d));

  private scheduleOf(d: Delivery): RetrySchedule {
    return d.plan.schedule ?? this.schedule;
  }

  private assertActive(hookId: string): void {
    if (!this.plans.planOf(hookId).active) {
      throw new HookdError(
        'CONFLICT',
        `hook ${hookId} is disabled (its receiver answered 410 Gone), so nothing is delivered for it; replace the hook to enable it again (hookctl replace ID -f FILE, or PUT /hooks/{id})`,
      );
    }
  }

  /** Starts a new round of the schedule for a finished delivery. */
  private requeue(d: Delivery, now: number): void {
    d.status = 'pending';
    d.roundStart = d.attempts;
    d.plan = this.plans.planOf(d.hookId);
    d.nextAttempt = now + this.firstDelay(d);
    this.outbox.update(d);
  }

  /** Newly recorded deliveries may go now. */
  private readonly recorded = (deliveries: Delivery[]): void => {
    const now = Date.now();
    for (const d of deliveries) this.enqueue(d, now);
  };

  /** Puts a pending delivery where it waits: the limiter when due, else the scheduler. */
  private enqueue(d: Delivery, now: number): void {
    if (d.cancelled || d.status !== 'pending' || d.active) return;
    if (this.state === 'running' && (d.nextAttempt ?? 0) <= now) this.submit(d, now);
    else if (this.state !== 'closed') {
      this.scheduler.add(d);
    }
  }

  private readonly due = (d: Delivery): void => {
    if (d.cancelled || d.status !== 'pending' || d.active) return;
    this.submit(d, Date.now());
  };

  /** Hands a due delivery to the limiter, unless its hook's rate limit makes it wait (rate-limit.ts). */
  private submit(d: Delivery, now: number): void {
    // The plan as the hook is now: a change since firing applies, but for the URL it fired with.
    d.plan = this.plans.planOf(d.hookId);
    if (!this.semantics.admit(d, now)) return; // held behind its key, or unverified
    if (this.gate.hold(d, now)) return;
    d.active = true;
    this.limiter.submit(d);
  }

  /** The circuit of the destination is open: the attempt is recorded as not sent and retried later. */
  private readonly shed = (d: Delivery, reason: string): void => {
    d.active = false;
    if (d.cancelled) return;
    d.shedByCircuit = true;
    this.completion.complete(d, Date.now(), notSent(reason));
  };

  /** A receiver's connection is back: its open circuits probe now, and what they held back goes. */
  private readonly reconnected = (key: string): void => {
    if (this.state !== 'running') return;
    this.limiter.reconnected(key);
    const now = Date.now();
    for (const d of [...heldByCircuit(this.live.values(), key)]) {
      this.scheduler.remove(d);
      d.nextAttempt = now;
      this.enqueue(d, now);
    }
  };
}
