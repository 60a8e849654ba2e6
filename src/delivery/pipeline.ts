/**
 * The delivery pipeline: what happens to a fired callback from the engine's `accept` to its last
 * attempt. Outbox (record first) → scheduler (timers for due attempts) → fairness limiter
 * (global and per-destination limits, circuit breaker) → attempt runner (signed, pinned, timed)
 * → outcome (retry policy) → delivery log and event bus. Each of those has a module of its own;
 * this class holds the deliveries in memory and the order of the steps.
 */

import pino, { type Logger } from 'pino';
import type { FiredEvent, FiredEventSink } from '../engine/index.js';
import type { LiveDeliveries } from '../ordering/index.js';
import { ReceiverPace } from '../pace/index.js';
import type { DeliveryQuery, DeliveryRecord } from '../store/index.js';
import type { TransportSet } from '../transports/index.js';
import { AttemptRunner } from './attempt-runner.js';
import type { BulkRedelivery, RedeliveryFilter } from './bulk-redelivery.js';
import { Completion } from './completion.js';
import { type Delivery, enqueue } from './delivery.js';
import { DeliveryEvents } from './delivery-events.js';
import { DEFAULT_RETENTION, DeliveryLog, type DeliveryPage } from './delivery-log.js';
import { type DeliveryDetail, DeliveryReader } from './delivery-reader.js';
import { Dispatch } from './dispatch.js';
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
import { RateGate, RateWaits } from './rate-limit.js';
import { Redelivery, type Retransform } from './redelivery.js';
import { retrySchedule } from './retry-policy.js';
import { Scheduler } from './scheduler.js';
import { Admission, keyOrder, verifierOf } from './semantics.js';
import { Targets } from './targets.js';
import { Reconnects, transportsOf } from './transport-wiring.js';

export type { DeliveryDetail } from './delivery-reader.js';
export type { DeliveryLimits } from './limits.js';
export type {
  DeliveryPipelineOptions,
  PipelineStats,
  PipelineStores,
  PipelineTelemetry,
  SendContext,
} from './pipeline-options.js';

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
  private readonly admission: Admission;
  private readonly outbox: Outbox;
  private readonly scheduler: Scheduler<Delivery>;
  private readonly limiter: FairLimiter<Delivery>;
  private readonly runner: AttemptRunner;
  private readonly secrets: HookSecrets;
  private readonly logger: Logger;
  private readonly dispatch: Dispatch;
  private readonly redelivery: Redelivery;
  private readonly intake: Intake;
  /** This loop's own transports when the threads send: they serve the preflights, and close last. */
  private readonly preflights: TransportSet | undefined;
  /** The pipeline's lifecycle: aborted when `close` begins; every wait and new send stops on it. */
  readonly #life = new AbortController();
  private state: 'new' | 'running' | 'closing' | 'closed' = 'new';

  // Each part is made after the parts it uses. The scheduler comes first: it is where every
  // pending delivery waits, and the dispatch, made last, takes the due ones out of it.
  constructor(opts: DeliveryPipelineOptions) {
    const signal = this.#life.signal;
    const { plans, stores, send, telemetry = {} } = opts;
    const { durable, ephemeral } = stores;
    const { tracing } = telemetry;
    const events = telemetry.events ?? new DeliveryEvents();
    const logger = telemetry.logger ?? pino({ level: 'silent' });
    const schedule = retrySchedule(opts.schedule);
    const limits = resolveLimits(opts.limits);
    const reconnects = new Reconnects();
    const { registry, transports } = transportsOf(send, limits, () => logger, reconnects.told);
    const targets = new Targets(registry, plans, opts.sourceOf);
    const pace = new ReceiverPace(limits.perEndpoint, limits.adaptive, (u) => targets.of(u.href).receiver);
    const secrets = new HookSecrets(
      agreeOnFirstSecret(durable),
      agreeOnFirstSecret(ephemeral),
      opts.rotationGraceMs ?? DEFAULT_ROTATION_GRACE_MS,
    );
    const scheduler = new Scheduler<Delivery>();
    // Newly recorded deliveries may go now.
    const recorded = (ds: Delivery[]) => {
      for (const d of ds) enqueue(scheduler, d);
    };
    const outbox = new Outbox(durable, ephemeral, recorded, targets, {
      log: logger,
      health: stores.health,
      ...(stores.faultBuffer !== undefined && { bufferLimit: stores.faultBuffer }),
    });
    const { order, live } = keyOrder({
      durable,
      ephemeral,
      plans,
      outbox,
      scheduler,
    });
    const rateWaits = new RateWaits();
    const completion = new Completion({
      live,
      outbox,
      scheduler,
      events,
      logger,
      plans,
      schedule,
      rateWaits,
    });
    const verifier = verifierOf(opts.verification, { transports, scheduler, completion, signal });
    const admission = new Admission(order, verifier, transports);
    const gate = new RateGate({
      waits: rateWaits,
      allowedRate: (origin) => verifier?.rateFor(origin),
      later: (d) => scheduler.add(d),
      ...(telemetry.onRateWait && { onWait: telemetry.onRateWait }),
    });
    // The delivery threads bring their own transports; this loop's serve the preflights.
    const sender =
      send.threads?.open({
        ...{
          timeoutMs: limits.timeoutMs,
          connectTimeoutMs: limits.connectTimeoutMs,
          perReceiver: limits.perHost,
        },
        log: (level, msg, fields) => logger[level](fields ?? {}, msg),
        onReconnect: reconnects.told,
      }) ?? transports;
    const runner = new AttemptRunner({
      ...{ logger, completion, signal, sender, secrets, tracing, pace, auth: send.auth, plans },
      ...{ userAgent: send.userAgent ?? 'hookd', loopMark: send.loopMark, rateWaits },
    });
    const heldBy = (d: Delivery, kind: string, key: string) => {
      d.heldBy = `${kind.replace('_', ' ')} ${key}`;
    };
    const limiter = new FairLimiter<Delivery>(limits, runner.run, completion.shed, Date.now, heldBy, pace);
    this.dispatch = new Dispatch({ plans, admission, gate, limiter, scheduler, live, completion });
    reconnects.listen(this.dispatch.reconnected, signal);
    const retention = { ...DEFAULT_RETENTION, ...opts.retention };
    this.log = new DeliveryLog(durable, ephemeral, live, outbox, retention, logger);
    this.reads = new DeliveryReader(this.log, () => outbox.flush());
    this.signing = new SigningSecrets(secrets);
    this.intake = new Intake({ live, outbox, scheduler, events, tracing, logger, schedule });
    this.redelivery = new Redelivery({ live, log: this.log, outbox, scheduler, plans, logger, schedule });
    this.events = events;
    this.logger = logger;
    this.pace = pace;
    this.secrets = secrets;
    this.scheduler = scheduler;
    this.outbox = outbox;
    this.live = live;
    this.admission = admission;
    this.runner = runner;
    this.limiter = limiter;
    this.preflights = sender === transports ? undefined : transports;
  }

  /** How a redelivery runs a failed Transform again (the engine is made after the pipeline). */
  transformWith(run: Retransform): void {
    this.redelivery.transformWith(run);
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
    this.dispatch.start(this.#life.signal);
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
    return this.redelivery.one(id);
  }

  /** Queues again a hook's deliveries that match the filter (bulk-redelivery.ts). */
  async redeliverBulk(hookId: string, filter: RedeliveryFilter = {}): Promise<BulkRedelivery> {
    return this.redelivery.many(hookId, filter);
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
  get verifier(): Admission['verifier'] {
    return this.admission.verifier;
  }

  /** Keys with deliveries held behind their head, and those deliveries (metrics). */
  orderingStats(): ReturnType<Admission['stats']> {
    return this.admission.stats();
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
    // The scheduler and verification stop waiting, and no new send starts.
    this.#life.abort();
    this.limiter.pause();
    for (const d of this.limiter.drainQueued()) d.active = false;
    await this.log.stop();
    await this.runner.drain(drainMs);
    await this.outbox.flush().catch(() => undefined);
    this.outbox.stop();
    this.state = 'closed';
    await this.runner.destroy().catch(() => undefined);
    await this.preflights?.close();
  }
}
