/**
 * What the daemon does about operational events: auto-disable of hooks that keep failing, the
 * `hook.disabled` / `delivery.failed` / `endpoint.breaker_*` / `hook.certificate_expiring` notifications, their metrics, and
 * their API routes. It hangs on the delivery pipeline's event bus and hook state seam only, so
 * the pipeline and the daemon assembly stay unaware of it beyond a few lines of wiring.
 */
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { HookdConfig } from '../config/index.js';
import type { AttemptMessage, BreakerListener, BreakerMessage, DeliveryEvents } from '../delivery/index.js';
import {
  AutoDisable,
  DEFAULT_AUTO_DISABLE,
  type DisableCause,
  type DisableRequest,
} from '../delivery/index.js';
import type { FiredEventSink } from '../engine/index.js';
import { type Hook, isoTimestamp } from '../hook/index.js';
import type { ApiFeature } from '../http-api/index.js';
import type { AddressChecker } from '../policy/index.js';
import { checkCallbackTarget } from '../policy/index.js';
import type { HookService } from '../service/index.js';
import type { AttemptRecord, DeliveryQuery, DeliveryRecord } from '../store/index.js';
import { ADMIN_USER } from '../users/index.js';
import { CertificateExpiry } from './certificate-expiry.js';
import { isEndpointId } from './notification-endpoint.js';
import type { NotificationStore } from './notification-store.js';
import { Notifier } from './notifier.js';
import { notificationsFeature } from './routes.js';

/** The parts of the delivery pipeline used here. */
export interface PipelinePort {
  readonly events: DeliveryEvents;
  /** Where notifications enter the delivery core: a source of their own, not a hook's firing. */
  readonly notifications: FiredEventSink;
  secretFor(id: string, persist?: boolean): Promise<string>;
  hookDeleted(id: string): void;
  list(hookId: string, query?: DeliveryQuery): Promise<{ items: DeliveryRecord[]; next?: string }>;
  getWithAttempts(id: string): Promise<{ delivery: DeliveryRecord; attempts: AttemptRecord[] } | undefined>;
}

/** The parts of the match engine used here. */
export interface HookIndexPort {
  get(id: string): Hook | undefined;
  ids(): Iterable<string>;
  readonly disabledCount: number;
}

export interface OperationsOptions {
  /** The daemon's stores: `notifications` holds the endpoints; `cluster` is set on PostgreSQL. */
  opened: { notifications: NotificationStore; cluster?: unknown };
  /** The delivery pipeline. */
  deliveries: PipelinePort;
  hooks: HookService;
  /** The match engine (a function: the daemon makes it after this). */
  engine: () => HookIndexPort;
  /** `autoDisableAfterMs` and `autoDisableFailures` (defaults: DEFAULT_AUTO_DISABLE). */
  config: Pick<HookdConfig, 'autoDisableAfterMs' | 'autoDisableFailures'>;
  /** Where the metrics go. */
  metrics: { registry: Registry };
  /** The callback target policy in force (it changes with a reload): endpoint URLs obey it too. */
  settings?: { readonly policy: AddressChecker };
  /** Why a URL is hookd itself (its listen address, publicBaseUrl), or undefined. */
  selfTarget?: (url: URL) => string | undefined;
  log: Logger;
}

/** Turns a breaker transition into a `breaker` event on the bus (the seam circuit-breaker.ts offers). */
export function breakerEvents(events: () => DeliveryEvents): BreakerListener {
  return (key, transition, probeAt) =>
    events().emit(
      'breaker',
      {
        kind: 'breaker',
        Time: isoTimestamp(),
        Endpoint: key,
        Transition: transition,
        ProbeAt: transition === 'opened' ? isoTimestamp(new Date(probeAt)) : null,
      },
      '',
    );
}

export class Operations {
  readonly notifier: Notifier;
  readonly autoDisable: AutoDisable;
  readonly certificates: CertificateExpiry;
  private readonly disabling = new Map<string, Promise<void>>();
  private readonly disabledTotal: Counter<'cause'>;
  private readonly notificationsTotal: Counter<'type'>;
  /** The hook (or endpoint) of the attempt that completed last: the cause of a breaker transition. */
  private lastAttemptHook = '';
  private readonly offs: (() => void)[] = [];

  constructor(private readonly opts: OperationsOptions) {
    const { deliveries: pipeline, log } = opts;
    const registers = [opts.metrics.registry];
    this.disabledTotal = new Counter({
      name: 'hookd_hooks_disabled_total',
      help: 'Hooks disabled by this instance, by cause: gone (410 Gone), failing (auto-disable)',
      labelNames: ['cause'],
      registers,
    });
    this.notificationsTotal = new Counter({
      name: 'hookd_notifications_total',
      help: 'Operational notifications queued for notification endpoints, by event type',
      labelNames: ['type'],
      registers,
    });
    const engine = opts.engine;
    new Gauge({
      name: 'hookd_hooks_disabled',
      help: 'Hooks whose State is disabled (410 Gone or auto-disable)',
      registers,
      collect() {
        this.set(engine().disabledCount);
      },
    });
    const failing = () => this.autoDisable.failing;
    new Gauge({
      name: 'hookd_hooks_failing',
      help: 'Hooks whose attempts have all failed lately (on the way to auto-disable)',
      registers,
      collect() {
        this.set(failing());
      },
    });
    this.notifier = new Notifier({
      store: opts.opened.notifications,
      sink: pipeline.notifications,
      secretFor: (id) => pipeline.secretFor(id, true),
      removed: (id) => pipeline.hookDeleted(id),
      ...(opts.settings && {
        checkUrl: (url, owner) => checkUrl(url, owner, opts.settings!.policy, opts.selfTarget),
      }),
      // Several instances share the store: endpoints added elsewhere are seen within 2 s.
      refreshMs: opts.opened.cluster ? 2000 : 5000,
      onQueued: (type, n) => this.notificationsTotal.inc({ type }, n),
      log,
    });
    this.autoDisable = new AutoDisable({
      options: {
        periodMs: opts.config.autoDisableAfterMs ?? DEFAULT_AUTO_DISABLE.periodMs,
        minFailures: opts.config.autoDisableFailures ?? DEFAULT_AUTO_DISABLE.minFailures,
      },
      tracks: (id) => !isEndpointId(id),
      lastSuccess: (id) => this.lastSuccess(id),
      disable: (r) => this.disable(r),
      onError: (err, hookId) => log.error({ err, hookId }, 'auto-disable check failed'),
    });
    this.certificates = new CertificateExpiry({
      hooks: () => hooksOf(engine()),
      notifier: this.notifier,
      registry: opts.metrics.registry,
      log,
    });
    this.offs.push(
      pipeline.events.on('attempt', (m, owner) => this.attempt(m, owner)),
      pipeline.events.on('breaker', (m) => this.breaker(m)),
    );
    opts.hooks.onChange({
      hookSaved: (h) => {
        if (h.State === 'active') this.autoDisable.forget(h.Id);
        this.certificates.check(h);
      },
      hookDeleted: (id) => {
        this.autoDisable.forget(id);
        this.certificates.forget(id);
      },
    });
  }

  async start(): Promise<void> {
    await this.notifier.start();
    this.certificates.start();
  }

  stop(): void {
    this.certificates.stop();
    for (const off of this.offs) off();
    this.notifier.stop();
  }

  /** Whether a delivery to this id may go: notification endpoints are answered here. */
  isActive(id: string): boolean {
    return isEndpointId(id) && this.notifier.isActive(id);
  }

  /** A receiver answered 410 Gone (the pipeline's hook state seam). */
  gone(hookId: string): Promise<void> {
    return this.disable({ hookId, cause: 'gone', reason: 'the receiver answered 410 Gone' });
  }

  /** Its API: `/_hookd/notifications…` and `POST /hooks/{id}/enable`. */
  feature(base: string): ApiFeature {
    return notificationsFeature({
      notifier: this.notifier,
      autoDisable: this.autoDisable,
      hooks: this.opts.hooks,
      deliveries: async (id) => (await this.opts.deliveries.list(id, { limit: 100 })).items,
      base,
    });
  }

  /** Disables a hook once (per process: concurrent requests for one hook share the first). */
  private disable(r: DisableRequest): Promise<void> {
    const running = this.disabling.get(r.hookId);
    if (running) return running;
    const p = this.doDisable(r).finally(() => this.disabling.delete(r.hookId));
    this.disabling.set(r.hookId, p);
    return p;
  }

  private async doDisable(r: DisableRequest): Promise<void> {
    const result = await this.opts.hooks.setState(r.hookId, 'disabled', r.reason);
    if (!result?.changed) return;
    const hook = result.hook;
    this.disabledTotal.inc({ cause: r.cause });
    this.opts.log.warn(
      { hookId: hook.Id, owner: hook.Owner, cause: r.cause, reason: r.reason },
      'hook disabled',
    );
    await this.notifier.publish('hook.disabled', new Set([hook.Owner]), () =>
      hookDisabledData(hook, r.cause, r),
    );
  }

  private async lastSuccess(hookId: string): Promise<number | undefined> {
    const page = await this.opts.deliveries.list(hookId, { status: 'succeeded', limit: 1 });
    const newest = page.items[0];
    if (!newest) return undefined;
    const found = await this.opts.deliveries.getWithAttempts(newest.id);
    const last = found?.attempts[found.attempts.length - 1];
    return last?.time ?? newest.created;
  }

  private attempt(m: AttemptMessage, owner: string): void {
    this.lastAttemptHook = m.HookId;
    // Deliveries to notification endpoints never cause notifications: no loop, ever.
    if (isEndpointId(m.HookId)) return;
    this.autoDisable.observe(m);
    if (m.Outcome !== 'failed') return;
    void this.notifier
      .publish('delivery.failed', new Set([owner]), () => ({
        DeliveryId: m.DeliveryId,
        HookId: m.HookId,
        Owner: owner,
        Attempts: m.Attempt,
        LastStatusCode: m.StatusCode,
        LastError: m.Error,
        Url: m.Url,
        Method: m.Method,
        FailedAt: m.Time,
        Trigger: m.Trigger,
      }))
      .catch((err: unknown) =>
        this.opts.log.error({ err }, 'queueing a delivery.failed notification failed'),
      );
  }

  private breaker(m: BreakerMessage): void {
    // A transition caused by a notification delivery is not reported (no loop).
    if (isEndpointId(this.lastAttemptHook)) return;
    const byOwner = new Map<string, string[]>();
    const all: string[] = [];
    for (const id of this.opts.engine().ids()) {
      const h = this.opts.engine().get(id);
      if (!h || !targets(h.Callback, m.Endpoint)) continue;
      all.push(h.Id);
      const list = byOwner.get(h.Owner) ?? [];
      list.push(h.Id);
      byOwner.set(h.Owner, list);
    }
    // A destination no hook sends to (only notification endpoints): nobody to tell.
    if (all.length === 0) return;
    const type = m.Transition === 'opened' ? 'endpoint.breaker_opened' : 'endpoint.breaker_closed';
    this.opts.log.warn(
      { endpoint: m.Endpoint, transition: m.Transition, hooks: all.length },
      `circuit ${m.Transition}`,
    );
    void this.notifier
      .publish(type, new Set(byOwner.keys()), (recipient) => {
        const hookIds = recipient === '*' ? all : byOwner.get(recipient);
        if (!hookIds) return undefined;
        return {
          Endpoint: m.Endpoint,
          State: m.Transition === 'opened' ? 'open' : 'closed',
          ...(m.Transition === 'opened' && { ProbeAt: m.ProbeAt }),
          Time: m.Time,
          HookIds: hookIds,
        };
      })
      .catch((err: unknown) => this.opts.log.error({ err }, 'queueing a breaker notification failed'));
  }
}

function* hooksOf(engine: HookIndexPort): Iterable<Hook> {
  for (const id of engine.ids()) {
    const h = engine.get(id);
    if (h) yield h;
  }
}

/** The callback target policy's answer for an endpoint URL: a message when refused. */
async function checkUrl(
  url: string,
  owner: string,
  policy: AddressChecker,
  selfTarget: ((url: URL) => string | undefined) | undefined,
): Promise<string | undefined> {
  // A notification sent to hookd itself would only be cut as a loop (src/loops/): say so now.
  const self = selfTarget?.(new URL(url));
  if (self !== undefined) return self;
  const r = await checkCallbackTarget(new URL(url), policy);
  // Only the admin (the operator) is told what a refused name resolved to.
  return r.ok ? undefined : owner === ADMIN_USER ? r.detail : r.message;
}

/** Whether a hook's callback goes to what a breaker guards (an origin, a host, or a URL). */
function targets(callback: string, key: string): boolean {
  if (callback === key) return true;
  if (!URL.canParse(callback)) return false;
  const u = new URL(callback);
  return u.origin === key || u.host === key || u.hostname === key || callback.startsWith(`${key}/`);
}

function hookDisabledData(hook: Hook, cause: DisableCause, r: DisableRequest): Record<string, unknown> {
  return {
    HookId: hook.Id,
    Owner: hook.Owner,
    Callback: hook.Callback,
    PathPattern: hook.PathPattern,
    State: hook.State,
    Cause: cause,
    DisabledReason: hook.DisabledReason ?? r.reason,
    DisabledAt: hook.DisabledAt ?? isoTimestamp(),
    ...(r.failingSince !== undefined && { FailingSince: isoTimestamp(new Date(r.failingSince)) }),
    ...(r.failedAttempts !== undefined && { FailedAttempts: r.failedAttempts }),
  };
}
