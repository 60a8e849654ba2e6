/**
 * The delivery pipeline as this daemon configures it: its stores, the address policy, per-hook
 * schedules and rate limits, breaker notifications, and the attempt log line and metrics.
 */

import type { Logger } from 'pino';
import type { HookdConfig } from '../config/index.js';
import { DeliveryEvents, DeliveryPipeline, type SendContext } from '../delivery/index.js';
import { connectTunnel, type EgressProxy, egressProxyOf } from '../egress/index.js';
import { DeliveryThreads } from '../executors/index.js';
import { breakerEvents, isEndpointId } from '../notifications/index.js';
import { OAuth2Bearer, TokenClient } from '../oauth2/index.js';
import type { Metrics } from '../observability/index.js';
import type { Tracing } from '../tracing/index.js';
import { createPinnedDispatcher, type TransportRegistry } from '../transports/index.js';
import { deliveryOptions, perHookDelivery } from './delivery-options.js';
import type { DaemonPlans } from './delivery-plans.js';
import type { OpenedStores } from './open-store.js';
import type { RuntimeSettings } from './runtime-settings.js';
import type { StoreFaults } from './store-faults.js';

export interface DeliveryWiring {
  config: HookdConfig;
  opened: OpenedStores;
  settings: RuntimeSettings;
  faults: StoreFaults;
  tracing: Tracing | undefined;
  metrics: Metrics;
  log: Logger;
  /**
   * Each hook's and endpoint's compiled plan (delivery-plans.ts): schedule, schemes, TLS, limits,
   * ordering, verification, OAuth2, and whether it may still be sent to.
   */
  plans: DaemonPlans;
  /** Marks hookd's own requests (src/loops/). */
  loopMark?: SendContext['loopMark'];
  /** The transports by Callback scheme. */
  transports: TransportRegistry;
  /** Where every callback and OAuth2 token request leaves through (`--callback-proxy`). */
  egress: EgressProxy | undefined;
  /** The threads that send the callbacks; absent: the pipeline's own loop sends them. */
  threads: DeliveryThreads | undefined;
}

/** The egress proxy of the configuration (`--callback-proxy`), if any. */
export function egressOf(config: HookdConfig): EgressProxy | undefined {
  return config.callbackProxy
    ? egressProxyOf(config.callbackProxy, config.callbackProxyCredentialsFile)
    : undefined;
}

/** The delivery threads the configuration asks for (`--delivery-threads`); none for 0. */
export function deliveryThreadsFor(
  config: HookdConfig,
  egress: EgressProxy | undefined,
): DeliveryThreads | undefined {
  if (config.deliveryThreads === 0) return undefined;
  return new DeliveryThreads({
    count: config.deliveryThreads,
    allowCallbackNets: config.allowCallbackNets,
    ...(egress && { egressProxy: egress }),
  });
}

export function createDeliveries(w: DeliveryWiring): DeliveryPipeline {
  const { config, opened, settings, metrics, log } = w;
  // Callbacks and OAuth2 token requests leave through the egress proxy alike.
  const tunnel = w.egress && connectTunnel(w.egress);
  // The event bus is made first: the breakers' notifications are published on it.
  const events = new DeliveryEvents();
  return new DeliveryPipeline({
    stores: {
      durable: opened.deliveries.durable,
      ephemeral: opened.deliveries.ephemeral,
      health: w.faults.health,
      ...(config.storeFaultBuffer !== undefined && { faultBuffer: config.storeFaultBuffer }),
    },
    send: {
      policy: settings.policy,
      transports: w.transports,
      ...(tunnel && { tunnel }),
      ...(w.threads && { threads: w.threads }),
      // OAuth2 bearer tokens: the token endpoint is reached under the callbacks' address policy.
      auth: new OAuth2Bearer(
        new TokenClient({
          dispatcher: createPinnedDispatcher(settings.policy, { ...(tunnel && { tunnel }) }),
        }),
      ),
      ...(w.loopMark && { loopMark: w.loopMark }),
    },
    // A delivery to a notification endpoint came from the notifications' own door.
    sourceOf: (id) => (isEndpointId(id) ? 'notification' : 'callback'),
    plans: w.plans,
    ...(config.retrySchedule && { schedule: { delaysMs: config.retrySchedule.map((sec) => sec * 1000) } }),
    verification: {},
    telemetry: { events, logger: log, ...perHookDelivery(() => metrics, w.tracing) },
    ...deliveryOptions(config, { onTransition: breakerEvents(() => events) }),
  });
}

/** Each attempt's log line and metrics (after the notifications' listeners, as they were made first). */
export function recordAttempts(
  deliveries: DeliveryPipeline,
  metrics: Metrics,
  log: Logger,
  transports: TransportRegistry,
): void {
  deliveries.events.on('attempt', (m) => {
    metrics.attempt(m.Outcome, m.LatencyMs, transports.family(m.Url));
    // At the usual production level (warn) the line would be built only to be dropped.
    if (!log.isLevelEnabled('info')) return;
    const { HookId: hookId, DeliveryId: deliveryId, Attempt: attempt, Outcome: outcome } = m;
    const line = { hookId, deliveryId, attempt, status: m.StatusCode, durationMs: m.LatencyMs, outcome };
    // No `err` key when there is no error: the pretty log would print `err: null` under every line.
    log.info(
      { ...line, ...(m.Error !== null && { err: m.Error }), ...(m.Test && { test: true }) },
      'delivery attempt',
    );
  });
}
