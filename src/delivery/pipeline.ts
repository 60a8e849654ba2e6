/**
 * The delivery pipeline: what happens to a fired callback from the engine's `accept` to its last
 * attempt. Outbox (record first) → scheduler (timers for due attempts) → fairness limiter
 * (global and per-destination limits, circuit breaker) → sender (signed, pinned, timed) → retry
 * policy → delivery log and event bus.
 */
import pino, { type Logger } from 'pino';
import type { Agent } from 'undici';
import type { Tunnel } from '../egress/index.js';
import type { FiredEvent, FiredEventSink } from '../engine/fired-event.js';
import { HookdError } from '../errors/catalog.js';
import { KeyQueues, type KeyTrigger, OrderedLiveMap, sharedStoreCheck } from '../ordering/index.js';
import type { AddressChecker } from '../policy/address-policy.js';
import type { LookupAll } from '../policy/callback-target.js';
import { type SignatureScheme, signatureFor } from '../signing/index.js';
import type { AttemptRecord, DeliveryQuery, DeliveryRecord, DeliveryStore } from '../store/delivery-store.js';
import type { StoreHealth } from '../store/store-health.js';
import type { Tracing } from '../tracing/types.js';
import { EndpointVerifier, type EndpointVerifierOptions } from '../verification/index.js';
import {
  agreeOnFirstSecret,
  type DeliveryLimitOptions,
  internalFailure,
  isoTime,
  notSent,
  resolveLimits,
  verdictOf,
} from './attempt-helpers.js';
import { type BulkRedelivery, type RedeliveryFilter, redeliverBulk } from './bulk-redelivery.js';
import { Delivery } from './delivery.js';
import {
  type AttemptMessage,
  type AttemptOutcome,
  DeliveryEvents,
  triggerMessage,
} from './delivery-events.js';
import {
  attemptRecord,
  DEFAULT_RETENTION,
  DeliveryLog,
  type DeliveryPage,
  type RetentionOptions,
} from './delivery-log.js';
import { type AttemptVerdict, type BreakerView, FairLimiter, type HoldKind } from './fairness.js';
import { DEFAULT_ROTATION_GRACE_MS, HookSecrets } from './hook-secrets.js';
import { Outbox } from './outbox.js';
import { createPinnedDispatcher } from './pinned-dispatcher.js';
import { type PerHookOptions, RateGate } from './rate-limit.js';
import {
  firstDelay,
  honoursRetryAfter,
  nextDelay,
  parseRetryAfter,
  type RetrySchedule,
  retrySchedule,
  verdictFor,
} from './retry-policy.js';
import { Scheduler } from './scheduler.js';
import { type AttemptResult, Sender } from './sender.js';

/** What the pipeline needs to know about hooks (the daemon answers from its hook service). */
export interface HookStateView {
  /** False once a hook is disabled or deleted: its pending deliveries are then not sent. */
  isActive(hookId: string): boolean;
  /** Disables a hook whose receiver answered 410 Gone (its `State` becomes `disabled`). */
  disable(hookId: string): Promise<void>;
}

export type { DeliveryLimits } from './attempt-helpers.js';

export interface DeliveryPipelineOptions extends PerHookOptions {
  /** Where `Persist: true` hooks' deliveries and secrets go (SQLite in the daemon). */
  durable: DeliveryStore;
  /** Where `Persist: false` hooks' deliveries and secrets go (memory). */
  ephemeral: DeliveryStore;
  /** The callback target policy, applied at connect time to every resolved address (SPEC §10). */
  policy: AddressChecker;
  hookState: HookStateView;
  /** The event bus for the live tail and metrics; one is made when left out. */
  events?: DeliveryEvents;
  /** The retry schedule (default: Standard Webhooks, see `STANDARD_WEBHOOKS_SCHEDULE`). */
  schedule?: Partial<RetrySchedule>;
  /** A per-hook schedule; undefined for a hook means the pipeline's schedule. */
  scheduleFor?: (hookId: string) => RetrySchedule | undefined;
  /** Concurrency per endpoint, per host and overall, time limits, breakers (docs/DECISIONS.md). */
  limits?: DeliveryLimitOptions;
  /** Told of writes the stores refuse and take (readiness). */
  health?: StoreHealth;
  /** Deliveries kept in memory at most while a store refuses writes (default 10,000). */
  faultBuffer?: number;
  retention?: Partial<RetentionOptions>;
  /** How long a rotated-out signing secret still signs, ms (default 24 h). */
  rotationGraceMs?: number;
  /** Sent as `User-Agent` unless the hook sets its own (default `hookd`). */
  userAgent?: string;
  logger?: Logger;
  /** Name resolution for callbacks (default the system resolver); tests point names at addresses. */
  lookup?: LookupAll;
  /** Issue 24 (src/signing/): a hook's or endpoint's signature schemes; undefined: `v1`. */
  schemesFor?: (hookId: string) => readonly SignatureScheme[] | undefined;
  /** Issue 24 (src/ordering/): a delivery's ordering key; undefined: its hook is not ordered. */
  orderingKeyFor?: (hookId: string, trigger: KeyTrigger) => string | undefined;
  /** Issue 24 (src/verification/): the CloudEvents handshake before an origin's first delivery. */
  verification?: Pick<
    EndpointVerifierOptions<Delivery>,
    'modeFor' | 'requestOrigin' | 'waitMs' | 'timeoutMs' | 'retryMs'
  >;
  /** Issue 24 (src/egress/): every callback leaves through the egress proxy's tunnel. */
  tunnel?: Tunnel;
}

export interface DeliveryDetail {
  delivery: DeliveryRecord;
  attempts: AttemptRecord[];
}

export interface PipelineStats {
  /** Deliveries held in memory: pending or in flight. */
  live: number;
  /** Waiting for a due time. */
  scheduled: number;
  /** Due, waiting for a free slot. */
  queued: number;
  inFlight: number;
  /** Held in memory only because a store refuses writes (not yet durable). */
  buffered: number;
  /** Fired callbacks dropped because that buffer was full, since start. */
  dropped: number;
  /** How often each limit or circuit held an attempt back, since start. */
  heldBack: Readonly<Record<HoldKind, number>>;
}

// Headers the pipeline sets itself or that would break the request (undici refuses hop-by-hop ones).
const RESERVED_HEADERS = new Set([
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
]);

/**
 * Takes fired events from the engine and delivers them at least once, signed, within the
 * fairness limits, retrying on the schedule; keeps the delivery log; publishes every firing and
 * attempt on `events`.
 */
export class DeliveryPipeline implements FiredEventSink {
  readonly events: DeliveryEvents;
  readonly log: DeliveryLog;
  // Issue 24 (src/ordering/): the live map tells the key queues of every delivery in and out.
  private readonly order: KeyQueues<Delivery>;
  private readonly live: Map<string, Delivery>;
  private readonly outbox: Outbox;
  private readonly scheduler: Scheduler<Delivery>;
  private readonly limiter: FairLimiter<Delivery>;
  private readonly dispatcher: Agent;
  private readonly sender: Sender;
  private readonly secrets: HookSecrets;
  private readonly schedule: RetrySchedule;
  private readonly scheduleFor: ((hookId: string) => RetrySchedule | undefined) | undefined;
  private readonly hookState: HookStateView;
  private readonly logger: Logger;
  private readonly userAgent: string;
  private readonly gate: RateGate | undefined;
  private readonly tracing: Tracing | undefined;
  private readonly schemesFor: DeliveryPipelineOptions['schemesFor'];
  /** Issue 24: endpoint verification; undefined when no hook can ask for it. */
  readonly verifier: EndpointVerifier<Delivery> | undefined;
  /** Hooks disabled by a 410 here, until the hook state says so itself. */
  private readonly gone = new Set<string>();
  private state: 'new' | 'running' | 'closing' | 'closed' = 'new';
  private running = 0;
  private onIdle: (() => void) | undefined;

  constructor(opts: DeliveryPipelineOptions) {
    this.events = opts.events ?? new DeliveryEvents();
    this.logger = opts.logger ?? pino({ level: 'silent' });
    this.hookState = opts.hookState;
    this.schedule = retrySchedule(opts.schedule);
    this.scheduleFor = opts.scheduleFor;
    this.userAgent = opts.userAgent ?? 'hookd';
    this.tracing = opts.tracing;
    this.schemesFor = opts.schemesFor;
    const keyFor = opts.orderingKeyFor;
    // The next of a key goes once its predecessor's end is committed: a crash then never
    // resends the predecessor after its successor.
    this.order = new KeyQueues<Delivery>(
      (d) => keyFor?.(d.hookId, d.trigger),
      (d) =>
        void this.outbox.flush().then(
          () => this.enqueue(d, Date.now()),
          () => this.enqueue(d, Date.now()),
        ),
      keyFor && sharedStoreCheck((persist) => (persist ? opts.durable : opts.ephemeral), keyFor),
    );
    this.live = new OrderedLiveMap(this.order);
    this.gate = RateGate.of(opts, (d) => this.scheduler.add(d));
    const limits = resolveLimits(opts.limits);
    this.dispatcher = createPinnedDispatcher(opts.policy, {
      // No more connections per origin than attempts may be in flight there: undici never queues.
      connections: limits.perHost,
      connectTimeout: Math.min(limits.connectTimeoutMs, limits.timeoutMs),
      ...(opts.lookup && { lookup: opts.lookup }),
      ...(opts.tunnel && { tunnel: opts.tunnel }),
    });
    this.sender = new Sender(this.dispatcher, limits.timeoutMs);
    this.verifier =
      opts.verification &&
      new EndpointVerifier<Delivery>({
        ...opts.verification,
        dispatcher: this.dispatcher,
        release: (d) => this.enqueue(d, Date.now()),
        fail: (d, reason) => this.endUnsent(d, reason),
      });
    this.secrets = new HookSecrets(
      agreeOnFirstSecret(opts.durable),
      agreeOnFirstSecret(opts.ephemeral),
      opts.rotationGraceMs ?? DEFAULT_ROTATION_GRACE_MS,
    );
    this.outbox = new Outbox(opts.durable, opts.ephemeral, this.recorded, {
      log: this.logger,
      health: opts.health,
      ...(opts.faultBuffer !== undefined && { bufferLimit: opts.faultBuffer }),
    });
    this.scheduler = new Scheduler<Delivery>(this.due);
    this.limiter = new FairLimiter<Delivery>(limits, this.run, this.shed, Date.now, (d, kind, key) => {
      d.heldBy = `${kind.replace('_', ' ')} ${key}`;
    });
    this.log = new DeliveryLog(
      opts.durable,
      opts.ephemeral,
      this.live,
      this.outbox,
      { ...DEFAULT_RETENTION, ...opts.retention },
      this.logger,
    );
  }

  /** Loads the pending deliveries of both stores and starts sending; due ones go at once. */
  async start(): Promise<void> {
    if (this.state !== 'new') return;
    const pending = await this.outbox.loadPending();
    for (const d of pending) {
      if (this.live.has(d.id)) continue;
      this.live.set(d.id, d);
      this.scheduler.add(d);
    }
    if (pending.length > 0) this.logger.info({ pending: pending.length }, 'resuming pending deliveries');
    this.state = 'running';
    this.scheduler.start();
    this.log.start();
  }

  /**
   * Records the fired callbacks (in the durable store for `Persist: true` hooks, in memory for
   * the others) and sends them once recorded. Never throws and never waits: the firing path
   * (the proxy) must not be held up by delivery.
   */
  accept(events: FiredEvent[]): void {
    if (events.length === 0) return;
    if (this.state === 'closed') {
      this.logger.warn(
        { count: events.length },
        'fired events after the delivery pipeline closed were dropped',
      );
      return;
    }
    const now = Date.now();
    const deliveries = this.outbox.accept(events, now, this.firstDelay);
    for (const d of deliveries) this.live.set(d.id, d);
    // Before the end of this turn, when the insert commits: the record carries the trace context.
    const tr = this.tracing;
    if (tr !== undefined)
      for (let i = 0; i < events.length; i++)
        deliveries[i]!.traceParent = tr.fired(events[i]!.trace, deliveries[i]!);
    if (this.events.has('fired')) {
      const time = isoTime(now);
      for (const d of deliveries) {
        this.events.emit(
          'fired',
          {
            kind: 'fired',
            Time: time,
            HookId: d.hookId,
            DeliveryId: d.id,
            Trigger: triggerMessage(d.trigger),
          },
          d.owner,
        );
      }
    }
  }

  /**
   * Takes over pending deliveries claimed from the store (a cluster instance that stopped or
   * died held them): they are scheduled as if this instance had fired them. Ones already held
   * here are skipped. Returns how many were taken.
   */
  adopt(records: readonly DeliveryRecord[], persist: boolean): number {
    if (this.state === 'closed') return 0;
    const now = Date.now();
    let taken = 0;
    for (const r of records) {
      if (r.status !== 'pending' || this.live.has(r.id)) continue;
      const d = Delivery.fromRecord(r, persist);
      this.live.set(d.id, d);
      this.enqueue(d, now);
      taken++;
    }
    return taken;
  }

  /**
   * Lets go of every pending delivery that is not being attempted right now, without writing
   * anything: a cluster instance whose lease ran out does this, since the others may already
   * have taken them over. Returns how many were let go.
   */
  release(): number {
    let released = 0;
    for (const d of this.live.values()) {
      // A buffered one is in no store for the others to take over: it stays here.
      if (d.active || d.status !== 'pending' || d.buffered) continue;
      d.cancelled = true;
      this.scheduler.remove(d);
      this.live.delete(d.id);
      released++;
    }
    return released;
  }

  /** A hook's signing secret was changed by another instance: the cached keys are dropped. */
  secretChanged(hookId: string): void {
    this.secrets.forget(hookId);
  }

  /** A hook's deliveries, newest first, with paging (the delivery log), as recorded so far. */
  async list(hookId: string, query: DeliveryQuery = {}): Promise<DeliveryPage> {
    await this.outbox.flush();
    return this.log.list(hookId, query);
  }

  /** One delivery, or undefined. */
  async get(id: string): Promise<DeliveryRecord | undefined> {
    await this.outbox.flush();
    return (await this.log.get(id))?.record;
  }

  /** One delivery with its attempts (everything recorded so far), or undefined. */
  async getWithAttempts(id: string): Promise<DeliveryDetail | undefined> {
    await this.outbox.flush();
    const found = await this.log.get(id);
    if (!found) return undefined;
    return { delivery: found.record, attempts: await this.log.attempts(id, found.persist) };
  }

  /**
   * Queues a delivery again, with the same Id (`webhook-id`), for a new round of the retry
   * schedule; a pending one is brought forward. Resolves once the change is recorded; undefined
   * when there is no such delivery. Throws CONFLICT when the hook is disabled.
   */
  async redeliver(id: string): Promise<DeliveryRecord | undefined> {
    let d = this.live.get(id);
    if (d === undefined) {
      const found = await this.log.get(id);
      if (!found) return undefined;
      d = this.live.get(id);
      // Pending but not held here: another instance of the cluster holds it and sends it on
      // its schedule; queueing it here as well would send it twice.
      if (d === undefined && found.record.status === 'pending') return found.record;
      if (d === undefined) {
        this.assertActive(found.record.hookId);
        d = Delivery.fromRecord(found.record, found.persist);
        this.requeue(d, Date.now());
        this.live.set(id, d);
        await this.outbox.commitFor(d).flush();
        this.enqueue(d, Date.now());
        return d;
      }
    }
    if (d.status === 'pending' && !d.active) {
      this.assertActive(d.hookId);
      this.scheduler.remove(d);
      d.nextAttempt = Date.now();
      this.outbox.update(d);
      await this.outbox.commitFor(d).flush();
      this.enqueue(d, Date.now());
    }
    return d;
  }

  /** Queues again a hook's deliveries that match the filter (bulk-redelivery.ts). */
  async redeliverBulk(hookId: string, filter: RedeliveryFilter = {}): Promise<BulkRedelivery> {
    this.assertActive(hookId);
    return redeliverBulk(
      {
        log: this.log,
        logger: this.logger,
        isHeld: (id) => this.live.has(id),
        takeBack: (record, persist, now) => {
          const d = Delivery.fromRecord(record, persist);
          this.requeue(d, now);
          this.live.set(d.id, d);
          return d;
        },
        flush: () => this.outbox.flush(),
        enqueue: (d, now) => this.enqueue(d, now),
      },
      hookId,
      filter,
    );
  }

  /** A hook's signing secret (`whsec_…`), created on first use. */
  async secretFor(hookId: string, persist = true): Promise<string> {
    return (await this.secrets.get(hookId, persist)).secret;
  }

  /**
   * Replaces a hook's signing secret; the old one keeps signing beside it until
   * `previousValidUntil` (epoch ms).
   */
  async rotateSecret(
    hookId: string,
    persist = true,
  ): Promise<{ secret: string; previousValidUntil: number }> {
    const r = await this.secrets.rotate(hookId, persist);
    return { secret: r.secret, previousValidUntil: r.previousValidUntil! };
  }

  /**
   * A hook was deleted: its pending deliveries are cancelled and its log and secret removed.
   * `elsewhere`: another instance of a cluster deleted it and removes the stored rows itself;
   * here only what is held in memory goes.
   */
  hookDeleted(hookId: string, elsewhere = false): void {
    for (const d of this.live.values()) {
      if (d.hookId !== hookId) continue;
      d.cancelled = true;
      this.scheduler.remove(d);
      this.live.delete(d.id);
    }
    this.gone.delete(hookId);
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
    };
  }

  /** Attempts waiting for a slot, per host that has any (metrics). */
  waitingByHost(): Iterable<{ host: string; waiting: number }> {
    return this.limiter.waitingByHost();
  }

  /** Issue 24: keys with deliveries held behind their head, and those deliveries (metrics). */
  orderingStats(): { heldKeys: number; held: number; heldTotal: number } {
    return { heldKeys: this.order.heldKeys, held: this.order.held, heldTotal: this.order.heldTotal };
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
    this.verifier?.close();
    this.scheduler.stop();
    this.limiter.pause();
    for (const d of this.limiter.drainQueued()) d.active = false;
    await this.log.stop();
    if (this.running > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.idle(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, drainMs);
        }),
      ]);
      clearTimeout(timer);
      if (this.running > 0) {
        this.logger.warn(
          { inFlight: this.running },
          'attempts still in flight at shutdown were aborted; they stay pending',
        );
        this.sender.abortAll();
        await this.idle();
      }
    }
    await this.outbox.flush().catch(() => undefined);
    this.outbox.stop();
    this.state = 'closed';
    await this.dispatcher.destroy().catch(() => undefined);
  }

  private idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const previous = this.onIdle;
      this.onIdle = () => {
        previous?.();
        resolve();
      };
    });
  }

  private readonly firstDelay = (hookId: string): number => firstDelay(this.scheduleOf(hookId));

  private scheduleOf(hookId: string): RetrySchedule {
    return this.scheduleFor?.(hookId) ?? this.schedule;
  }

  private isActive(hookId: string): boolean {
    return !this.gone.has(hookId) && this.hookState.isActive(hookId);
  }

  private assertActive(hookId: string): void {
    if (!this.isActive(hookId)) {
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
    d.nextAttempt = now + this.firstDelay(d.hookId);
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
    if (!this.order.admit(d)) return; // issue 24: held behind its key's head
    if (this.verifier?.hold(d, now)) return; // issue 24: its origin is not verified yet
    if (this.gate?.hold(d, now)) return;
    d.active = true;
    this.limiter.submit(d);
  }

  private readonly run = (d: Delivery, probe: number): void => {
    this.running++;
    void this.attempt(d, probe);
  };

  private async attempt(d: Delivery, probe: number): Promise<void> {
    let outcome: AttemptVerdict = 'none';
    d.heldBy = undefined;
    try {
      if (d.cancelled) return;
      if (!this.isActive(d.hookId)) {
        this.endUnsent(d, 'not sent: the hook is disabled or was deleted');
        return;
      }
      const keys = this.secrets.cached(d.hookId) ?? (await this.secrets.keysFor(d.hookId, d.persist));
      // Shutdown began while the secret was loading: leave it pending rather than start a send.
      if (this.state !== 'running') return;
      const start = Date.now();
      const timestamp = String(Math.floor(start / 1000));
      if (d.headers === undefined) d.headers = this.baseHeaders(d);
      const h = d.headers;
      // The last two values are the per-attempt ones; undici copies headers when dispatching.
      h[h.length - 3] = timestamp;
      // Issue 24: v1 and/or v1a per hook (src/signing/).
      const schemes = this.schemesFor?.(d.hookId);
      h[h.length - 1] = signatureFor(schemes, keys, d.id, timestamp, d.request.body ?? '', start);
      const span = this.tracing?.attempt(d, d.attempts + 1);
      if (span !== undefined) h[1] = span.traceparent;
      const result = await this.sender.send({
        origin: d.origin,
        path: d.path,
        method: d.request.method,
        headers: h,
        body: d.request.body,
      });
      span?.end(result.statusCode, result.error, d.rateWaitMs);
      d.active = false;
      // Aborted at shutdown: the outcome is unknown, so it stays pending and goes again after restart.
      if (result.aborted || d.cancelled) return;
      outcome = verdictOf(result);
      this.complete(d, start, result);
    } catch (err) {
      // Only our own failures end up here (a store that cannot give a secret): retry later.
      d.active = false;
      this.logger.error({ err, deliveryId: d.id, hookId: d.hookId }, 'delivery attempt failed inside hookd');
      if (!d.cancelled) this.complete(d, Date.now(), internalFailure(err as Error));
    } finally {
      d.active = false;
      this.limiter.done(d, outcome, probe);
      if (--this.running === 0 && this.onIdle) {
        const resolve = this.onIdle;
        this.onIdle = undefined;
        resolve();
      }
    }
  }

  /** The circuit of the destination is open: the attempt is recorded as not sent and retried later. */
  private readonly shed = (d: Delivery, reason: string): void => {
    d.active = false;
    if (d.cancelled) return;
    this.complete(d, Date.now(), notSent(reason));
  };

  /** Applies an attempt's result: state, retry or end, log record, event. */
  private complete(d: Delivery, start: number, r: AttemptResult): void {
    const now = Date.now();
    d.attempts++;
    d.lastStatusCode = r.statusCode;
    d.lastError = r.error;
    let outcome: AttemptOutcome;
    const verdict = verdictFor(r.statusCode);
    if (verdict === 'succeeded') {
      d.status = 'succeeded';
      d.nextAttempt = null;
      outcome = 'succeeded';
    } else if (verdict === 'gone') {
      d.status = 'failed';
      d.nextAttempt = null;
      d.lastError ??= 'the receiver answered 410 Gone, so the hook was disabled';
      outcome = 'failed';
      this.disable(d.hookId);
    } else {
      const retryAfter = honoursRetryAfter(r.statusCode) ? parseRetryAfter(r.retryAfter, now) : undefined;
      const delay = nextDelay(this.scheduleOf(d.hookId), d.attempts - d.roundStart, retryAfter);
      if (delay === undefined) {
        d.status = 'failed';
        d.nextAttempt = null;
        outcome = 'failed';
        this.logger.warn(
          {
            deliveryId: d.id,
            hookId: d.hookId,
            attempt: d.attempts,
            status: r.statusCode,
            err: r.error,
          },
          'delivery failed after its last attempt',
        );
      } else {
        d.nextAttempt = now + delay;
        outcome = 'retrying';
      }
    }
    this.outbox.attempt(d, attemptRecord(d, d.attempts, start, r));
    d.rateWaitMs = 0;
    this.outbox.update(d);
    if (d.status === 'pending') {
      if (this.state !== 'closed') this.scheduler.add(d);
    } else {
      this.live.delete(d.id);
      d.headers = undefined;
    }
    if (this.events.has('attempt')) this.emitAttempt(d, start, r, outcome);
  }

  /** Ends a delivery that will not be sent (its hook is disabled or gone); not an attempt. */
  private endUnsent(d: Delivery, reason: string): void {
    d.active = false;
    d.status = 'failed';
    d.nextAttempt = null;
    d.lastError = reason;
    this.scheduler.remove(d);
    this.outbox.update(d);
    this.live.delete(d.id);
    d.headers = undefined;
  }

  /** 410 Gone: the hook is disabled, and its other waiting deliveries end unsent. */
  private disable(hookId: string): void {
    if (this.gone.has(hookId)) return;
    this.gone.add(hookId);
    this.logger.warn({ hookId }, 'receiver answered 410 Gone; hook disabled');
    for (const d of this.live.values()) {
      if (d.hookId === hookId && !d.active && d.status === 'pending') {
        this.endUnsent(d, 'not sent: the hook was disabled (its receiver answered 410 Gone)');
      }
    }
    this.hookState.disable(hookId).then(
      () => this.gone.delete(hookId),
      (err: unknown) => this.logger.error({ err, hookId }, 'disabling the hook failed'),
    );
  }

  /** `[…hook headers, user-agent, webhook-id, webhook-timestamp, _, webhook-signature, _]`. */
  private baseHeaders(d: Delivery): string[] {
    // With tracing on, `traceparent` comes first and is set per attempt (`h[1]`), not by the hook.
    const out: string[] = this.tracing === undefined ? [] : ['traceparent', ''];
    let ua = false;
    for (const name in d.request.headers) {
      const lower = name.toLowerCase();
      if (RESERVED_HEADERS.has(lower) || (out.length > 0 && lower === 'traceparent')) continue;
      if (lower === 'user-agent') ua = true;
      out.push(name, d.request.headers[name]!);
    }
    if (!ua) out.push('user-agent', this.userAgent);
    out.push('webhook-id', d.id, 'webhook-timestamp', '', 'webhook-signature', '');
    return out;
  }

  private emitAttempt(d: Delivery, start: number, r: AttemptResult, outcome: AttemptOutcome): void {
    const message: AttemptMessage = {
      kind: 'attempt',
      Time: isoTime(start),
      HookId: d.hookId,
      DeliveryId: d.id,
      Attempt: d.attempts,
      Method: d.request.method,
      Url: d.request.url,
      StatusCode: r.statusCode,
      LatencyMs: r.latencyMs,
      Outcome: outcome,
      Error: r.error,
      Trigger: triggerMessage(d.trigger),
    };
    this.events.emit('attempt', message, d.owner);
  }
}
