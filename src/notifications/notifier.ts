/**
 * The notifier: keeps the notification endpoints (users' and the operator's), and turns an
 * operational event into one signed delivery per endpoint that should hear of it, handed to the
 * delivery pipeline like a fired hook (durable, retried, Standard Webhooks signatures with the
 * endpoint's own secret). docs/NOTIFICATIONS.md describes the events; schema/notification-*.json
 * their bodies.
 *
 * No loops: deliveries to notification endpoints never cause notifications (the wiring drops
 * their attempts and the breaker transitions they cause), so a failing notification endpoint is
 * never told about itself.
 */
import type { Logger } from 'pino';
import type { FiredEvent, FiredEventSink } from '../engine/index.js';
import { HookdError } from '../errors/index.js';
import { isoTimestamp } from '../hook/index.js';
import type { SignatureScheme } from '../signing/index.js';
import {
  ENDPOINT_ID_SHAPE,
  type NotificationEndpoint,
  type NotificationType,
  newEndpointId,
  OPERATOR_USER,
  validateEndpoint,
  wants,
} from './notification-endpoint.js';
import type { NotificationStore } from './notification-store.js';

/** The body of every notification (Standard Webhooks' recommended shape). */
export interface NotificationPayload {
  type: NotificationType;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface NotifierOptions {
  store: NotificationStore;
  /** Where notification deliveries go: the delivery pipeline. */
  sink: FiredEventSink;
  /** The endpoint's signing secret, created on first use (the pipeline's secrets). */
  secretFor(endpointId: string): Promise<string>;
  /** An endpoint was removed: its pending deliveries and secret go (the pipeline's hookDeleted). */
  removed(endpointId: string): void;
  /** Refuses a URL the callback target policy forbids; resolves to a message, or undefined when fine. */
  checkUrl?(url: string, owner: string): Promise<string | undefined>;
  /** How often the list is read again, for endpoints added by other instances of a cluster, ms. */
  refreshMs?: number;
  /** Told of each notification queued (metrics). */
  onQueued?(type: NotificationType, count: number): void;
  log?: Logger;
}

export class Notifier {
  private endpoints = new Map<string, NotificationEndpoint>();
  private loadedAt = 0;
  private loading: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly refreshMs: number;

  constructor(private readonly opts: NotifierOptions) {
    this.refreshMs = opts.refreshMs ?? 5000;
  }

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => {
      this.refresh().catch((err: unknown) =>
        this.opts.log?.warn({ err }, 'reading notification endpoints failed; the next refresh retries'),
      );
    }, this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** An endpoint's signature schemes; undefined: `v1`, or no such endpoint. */
  schemesOf(id: string): readonly SignatureScheme[] | undefined {
    return this.endpoints.get(id)?.Signature?.Schemes;
  }

  /** Whether deliveries to this endpoint may still be sent (the pipeline asks before each attempt). */
  isActive(id: string): boolean {
    return this.endpoints.has(id);
  }

  /** Reads the endpoints again (one at a time). */
  refresh(): Promise<void> {
    this.loading ??= this.opts.store
      .allEndpoints()
      .then((all) => {
        this.endpoints = new Map(all.map((e) => [e.Id, e]));
        this.loadedAt = Date.now();
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  /** The user's endpoints (the operator's too are only the operator's own). */
  list(owner: string): NotificationEndpoint[] {
    return [...this.endpoints.values()].filter((e) => e.Owner === owner);
  }

  get(owner: string, id: string): NotificationEndpoint {
    const e = ENDPOINT_ID_SHAPE.test(id) ? this.endpoints.get(id) : undefined;
    if (!e || e.Owner !== owner) {
      throw new HookdError('NOT_FOUND', `no notification endpoint with Id "${id.slice(0, 64)}"`);
    }
    return e;
  }

  /** Registers an endpoint; resolves to it and its signing secret (shown this once). */
  async create(owner: string, body: unknown): Promise<{ endpoint: NotificationEndpoint; secret: string }> {
    const input = validateEndpoint(body);
    const refused = await this.opts.checkUrl?.(input.Url, owner);
    if (refused) {
      throw new HookdError('VALIDATION_FAILED', `Url ${refused}`, {
        errors: [{ field: 'Url', message: refused }],
      });
    }
    const endpoint: NotificationEndpoint = {
      Id: newEndpointId(),
      Owner: owner,
      ...input,
      Created: isoTimestamp(),
    };
    await this.opts.store.putEndpoint(endpoint);
    this.endpoints.set(endpoint.Id, endpoint);
    const secret = await this.opts.secretFor(endpoint.Id);
    return { endpoint, secret };
  }

  async delete(owner: string, id: string): Promise<void> {
    const e = this.get(owner, id);
    await this.opts.store.deleteEndpoint(e.Id);
    this.endpoints.delete(e.Id);
    this.opts.removed(e.Id);
  }

  /**
   * Queues a notification for every endpoint that wants this type and may hear of the subject:
   * the endpoints of `owner` (the owner of the hook concerned), and the operator's. `data` builds
   * the body's `data` for one recipient (an owner's view may leave out other users' hooks);
   * undefined skips that recipient. Resolves to how many deliveries were queued.
   */
  async publish(
    type: NotificationType,
    owners: ReadonlySet<string> | 'all',
    data: (recipient: string) => Record<string, unknown> | undefined,
  ): Promise<number> {
    if (Date.now() - this.loadedAt > this.refreshMs) await this.refresh().catch(() => undefined);
    const timestamp = isoTimestamp();
    const events: FiredEvent[] = [];
    for (const e of this.endpoints.values()) {
      if (!wants(e, type)) continue;
      const operator = e.Owner === OPERATOR_USER;
      if (!operator && (owners === 'all' || !owners.has(e.Owner))) continue;
      const d = data(operator ? '*' : e.Owner);
      if (d === undefined) continue;
      const payload: NotificationPayload = { type, timestamp, data: d };
      events.push({
        hookId: e.Id,
        owner: e.Owner,
        hookType: 1,
        persist: true,
        firedAt: timestamp,
        trigger: { method: 'NOTIFY', path: type },
        request: {
          method: 'POST',
          url: e.Url,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(payload),
        },
      });
    }
    if (events.length > 0) {
      this.opts.sink.accept(events);
      this.opts.onQueued?.(type, events.length);
      this.opts.log?.info({ type, endpoints: events.length }, 'notification queued');
    }
    return events.length;
  }
}
