/** The delivery pipeline's options and the shapes it answers with (pipeline.ts). */

import type { Logger } from 'pino';
import type { TlsConnectOptions } from '../client-tls/index.js';
import type { Tunnel } from '../egress/index.js';
import type { AttemptAuth } from '../oauth2/index.js';
import type { KeyTrigger } from '../ordering/index.js';
import type { AddressChecker, LookupAll } from '../policy/index.js';
import type { SignatureScheme } from '../signing/index.js';
import type { DeliveryStore, StoreHealth } from '../store/index.js';
import type { TransportRegistry } from '../transports/index.js';
import type { EndpointVerifierOptions } from '../verification/index.js';
import type { Delivery, DeliverySource } from './delivery.js';
import type { DeliveryEvents } from './delivery-events.js';
import type { RetentionOptions } from './delivery-log.js';
import type { HoldKind } from './fairness.js';
import type { DeliveryLimitOptions } from './limits.js';
import type { PerHookOptions } from './rate-limit.js';
import type { RetrySchedule } from './retry-policy.js';

/** What the pipeline needs to know about hooks (the daemon answers from its hook service). */
export interface HookStateView {
  /** False once a hook is disabled or deleted: its pending deliveries are then not sent. */
  isActive(hookId: string): boolean;
  /** Disables a hook whose receiver answered 410 Gone (its `State` becomes `disabled`). */
  disable(hookId: string): Promise<void>;
}

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
  /** Marks each attempt's headers as hookd's own (`LoopGuard.mark`, src/loops/). */
  loopMark?: (headers: string[], kind: 'callback' | 'notification', method: string, target: string) => void;
  /** A hook's or endpoint's signature schemes (src/signing/); undefined: `v1`. */
  schemesFor?: (hookId: string) => readonly SignatureScheme[] | undefined;
  /** A hook's client certificate and private CA for its https receiver (src/client-tls/). */
  tlsFor?: (hookId: string) => TlsConnectOptions | undefined;
  /** Sends with the `Authorization` a hook needs (OAuth2 bearer tokens, src/oauth2/). */
  auth?: AttemptAuth;
  /** A delivery's ordering key (src/ordering/); undefined: its hook is not ordered. */
  orderingKeyFor?: (hookId: string, trigger: KeyTrigger) => string | undefined;
  /** The CloudEvents handshake before an origin's first delivery (src/verification/). */
  verification?: Pick<
    EndpointVerifierOptions<Delivery>,
    'modeFor' | 'requestOrigin' | 'waitMs' | 'timeoutMs' | 'retryMs'
  >;
  /** Every callback leaves through the egress proxy's tunnel (src/egress/). */
  tunnel?: Tunnel;
  /** A stored delivery's source by its subject's Id (default: every one is a hook's callback). */
  sourceOf?: (subjectId: string) => DeliverySource;
  /** The transports by Callback scheme (default: every built-in one). */
  transports?: TransportRegistry;
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
