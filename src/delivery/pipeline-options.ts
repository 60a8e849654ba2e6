/** The delivery pipeline's options and the shapes it answers with (pipeline.ts). */

import type { Logger } from 'pino';
import type { Tunnel } from '../egress/index.js';
import type { AttemptAuth } from '../oauth2/index.js';
import type { AddressChecker, LookupAll } from '../policy/index.js';
import type { DeliveryStore, StoreHealth } from '../store/index.js';
import type { SenderSource, TransportRegistry } from '../transports/index.js';
import type { EndpointVerifierOptions } from '../verification/index.js';
import type { Delivery, DeliverySource } from './delivery.js';
import type { DeliveryEvents } from './delivery-events.js';
import type { RetentionOptions } from './delivery-log.js';
import type { HoldKind } from './fairness.js';
import type { StoreTime } from './group-commit.js';
import type { DeliveryLimitOptions } from './limits.js';
import type { DeliveryPlans } from './plan/index.js';
import type { PerHookOptions } from './rate-limit.js';
import type { RetrySchedule } from './retry-policy.js';

/** Where deliveries and the hooks' signing secrets are kept, and what happens when a store refuses writes. */
export interface PipelineStores {
  /** Where `Persist: true` hooks' deliveries and secrets go (SQLite in the daemon). */
  durable: DeliveryStore;
  /** Where `Persist: false` hooks' deliveries and secrets go (memory). */
  ephemeral: DeliveryStore;
  /** Told of writes the stores refuse and take (readiness). */
  health?: StoreHealth;
  /** Deliveries kept in memory at most while a store refuses writes (default 10,000). */
  faultBuffer?: number;
}

/**
 * What every attempt leaves with: the transports' context (policy, resolver, tunnel) is made from
 * it, and the attempt runner adds the headers and credentials.
 */
export interface SendContext {
  /** The callback target policy, applied at connect time to every resolved address (SPEC §10). */
  policy: AddressChecker;
  /** Name resolution for callbacks (default the system resolver); tests point names at addresses. */
  lookup?: LookupAll;
  /** Every callback leaves through the egress proxy's tunnel (src/egress/). */
  tunnel?: Tunnel;
  /** The transports by Callback scheme (default: every built-in one). */
  transports?: TransportRegistry;
  /**
   * Sends the attempts on threads of their own (src/executors/), opened with the pipeline's
   * limits; absent: this event loop sends them through its own transports.
   */
  threads?: SenderSource;
  /** Sent as `User-Agent` unless the hook sets its own (default `hookd`). */
  userAgent?: string;
  /** Marks each attempt's headers as hookd's own (`LoopGuard.mark`, src/loops/). */
  loopMark?: (headers: string[], kind: 'callback' | 'notification', method: string, target: string) => void;
  /** Sends with the `Authorization` a plan's OAuth2 credentials need (bearer tokens, src/oauth2/). */
  auth?: AttemptAuth;
}

/** What the pipeline tells of its work: the event bus, the log, traces and the rate limits' waits. */
export interface PipelineTelemetry extends PerHookOptions {
  /** The event bus for the live tail and metrics; one is made when left out. */
  events?: DeliveryEvents;
  logger?: Logger;
}

export interface DeliveryPipelineOptions {
  stores: PipelineStores;
  send: SendContext;
  /** Each hook's and endpoint's compiled plan, and whether it may still be sent to (plan/). */
  plans: DeliveryPlans;
  /** A stored delivery's source by its subject's Id (default: every one is a hook's callback). */
  sourceOf?: (subjectId: string) => DeliverySource;
  /** The retry schedule (default: Standard Webhooks, see `STANDARD_WEBHOOKS_SCHEDULE`). */
  schedule?: Partial<RetrySchedule>;
  /** Concurrency per endpoint, per host and overall, time limits, breakers (docs/DECISIONS.md). */
  limits?: DeliveryLimitOptions;
  retention?: Partial<RetentionOptions>;
  /** How long a rotated-out signing secret still signs, ms (default 24 h). */
  rotationGraceMs?: number;
  /**
   * The CloudEvents handshake before an origin's first delivery, for the plans that ask for it
   * (src/verification/); absent: none is made.
   */
  verification?: Pick<
    EndpointVerifierOptions<Delivery>,
    'requestOrigin' | 'waitMs' | 'timeoutMs' | 'retryMs'
  >;
  telemetry?: PipelineTelemetry;
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
  /** The durable store's write time and the callbacks it recorded, since start. */
  durableStore: Readonly<StoreTime>;
}
